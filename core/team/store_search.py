"""The team store's search and session listings: the ``TeamSearch`` half of :class:`~core.team.store.TeamArchive`.

``search`` fetches the postings of the query's terms (:mod:`core.team.search`), ranks
them with the embedded index's own code over the whole store's statistics, and
merges each user's hits (built by :mod:`core.query.searching` over that user's
library) into one page; ``list_sessions``, ``list_projects`` and ``list_users`` filter
each user's view. Separate from :mod:`core.team.store`, which connects and keeps the
users' libraries current, so that each module has one job; the store mixes it in,
and the routing it uses (``_current``, ``_views``, ``_route``, ``_qualified``) is the store's.
"""

from __future__ import annotations

import heapq
from typing import TYPE_CHECKING, Any

import numpy as np
from msgspec.structs import replace

from core.errors import BadInput
from core.index.bm25 import Hit
from core.index.tokenize import term_id
from core.model import SearchHit, SessionInfo
from core.query import execute as query_exec
from core.query import searching
from core.query import syntax as query_syntax
from core.query.execute import check_limit as _check_limit
from core.query.hybrid import check_mode
from core.query.ranking import hit_order
from core.timeutil import newest_first, parse_user_time

from .search import DocPlaces, Docs, postings_snapshot

if TYPE_CHECKING:
    from collections.abc import Callable

    from core.archive.library import Library
    from core.views import Resolved

    from .view import UserView


class TeamSearch:
    """Search and the session listings over every user's library (mixed into ``TeamArchive``)."""

    if TYPE_CHECKING:  # the store's (core.team.store.TeamArchive)
        _files: dict[int, str]
        _places: DocPlaces

        def _run(self, fn: Callable[[Any], Any]) -> Any: ...
        def _query(self, sql: str, params: Any = ()) -> list[tuple]: ...
        def _current(self) -> dict[str, Library]: ...
        def _views(self, user: str | None = None) -> list[UserView]: ...
        def _route(self, ref: str, user: str | None = None) -> tuple[UserView, str]: ...
        def _qualified(self, user: str, ref: str) -> str: ...
        def resolve(self, ref: str, *, user: str | None = None) -> Resolved: ...

    # --- search ----------------------------------------------------------------------------

    def search(
        self,
        query: str,
        *,
        limit: int = 10,
        project: str | None = None,
        slug: str | None = None,
        session_id: str | None = None,
        agent: str | None = None,
        user: str | None = None,
        date_from: str | None = None,
        date_to: str | None = None,
        tags: list[str] | None = None,
        sort: str = "relevance",
        offset: int = 0,
        group: str | None = None,
        typing: bool = False,
        snippets: bool = True,
        mode: str = "auto",
    ) -> list[SearchHit]:
        """As :meth:`core.api.Archive.search` (prefixes match their typed stem only here).

        Team search stays lexical (BM25) whatever ``mode`` says: the shared store holds
        no vectors yet (pgvector would be the route; docs/team.md)."""
        check_mode(mode)
        limit = _check_limit(limit)
        query_exec.check_paging(offset, sort, group)
        parsed = query_syntax.parse(query or "", typing=typing)
        ts_from = parse_user_time(date_from, name="date_from")
        ts_to = parse_user_time(date_to, end_of_day=True, name="date_to")
        if not parsed:
            return []
        libs = self._current()
        allowed = None
        if project or slug or session_id or agent or user or tags:
            file_ids = self._allowed_files(project=project, slug=slug, session_id=session_id, agent=agent, user=user, tags=tags)
            allowed = np.array(file_ids, dtype=np.int64)
            if allowed.shape[0] == 0:
                return []
        ids = [term_id(t) for t in (*parsed.terms, *parsed.excluded)]
        snapshot = postings_snapshot(self._run, ids, self._places)
        if snapshot is None:
            return []
        want = query_exec.GROUP_WINDOW if group else offset + limit
        fetch = want * 3 + 10
        window = max(fetch, query_exec.PHRASE_WINDOW) if parsed.phrases else fetch
        raw, terms, _ = query_exec.ranked(
            snapshot, parsed, window, sort=sort, allowed_files=allowed, ts_from=ts_from, ts_to=ts_to
        )
        if not raw:
            return []
        cols = ("doc_id", "file_id", "turn", "part", "first_seq", "last_seq", "ts", "side", "body", "seen")
        rows = self._query(f"SELECT {', '.join(cols)} FROM docs WHERE doc_id = ANY(%s)", ([h.doc_id for h in raw],))
        docs = Docs({r[0]: dict(zip(cols, r)) for r in rows}, self._query)
        raw = query_exec.phrase_matches(raw, parsed, docs.docs)[0][:fetch]  # the phrase rule of a local search
        per_user: dict[str, list[Hit]] = {}
        for h in raw:
            owner = self._files.get(h.file_id)
            if owner is not None:
                per_user.setdefault(owner, []).append(h)
        streams = []
        for name, hits in per_user.items():
            found = searching.hits(libs[name], docs, hits, terms, want, sort=sort, snippets=snippets)
            streams.append([replace(h, ref=self._qualified(name, h.ref)) for h in found])
        # turns showing a quoted phrase stay ahead of the rest (core.query.execute.phrase_matches)
        if sort == "recent":
            merged = list(
                heapq.merge(*streams, key=lambda h: (h.exact_phrase is False, _newer_first(h.timestamp), hit_order(h)))
            )
        else:
            merged = list(heapq.merge(*streams, key=lambda h: (h.exact_phrase is False, hit_order(h))))
        if group == "session":
            merged = query_exec.group_hits(merged)
        return merged[offset : offset + limit]

    def _allowed_files(self, *, project, slug, session_id, agent, user, tags=None) -> list[int]:
        wanted: set[str] | None = None
        views = self._views(user)
        if session_id:
            view, bare = self._route(session_id, user)
            wanted = {s.session_id for s in view.resolve(bare).sessions}
            views = [v for v in views if v._user == view._user]
        files: list[int] = []
        for view in views:
            sessions = view._filter_sessions(view.library, project=project, slug=slug, agent=agent, tags=tags)
            if wanted is not None:
                sessions = [s for s in sessions if s.session_id in wanted]
            files.extend(view.library.file_ids_for(s.session_id for s in sessions))
        return files

    # --- sessions ---------------------------------------------------------------------------

    def list_sessions(
        self,
        *,
        project: str | None = None,
        slug: str | None = None,
        agent: str | None = None,
        user: str | None = None,
        date_from: str | None = None,
        date_to: str | None = None,
        tags: list[str] | None = None,
        limit: int = 50,
        offset: int = 0,
    ) -> list[SessionInfo]:
        limit = _check_limit(limit)
        if offset < 0:
            raise BadInput("offset must be 0 or more")
        found: list[SessionInfo] = []
        for view in self._views(user):
            found.extend(view._filter_sessions(view.library, project=project, slug=slug, agent=agent, date_from=date_from, date_to=date_to, tags=tags))
        if slug:
            found.sort(key=lambda s: (s.user or "", s.session_number or 0))
        else:
            found.sort(key=lambda s: (s.last_timestamp or "", s.session_id, s.user or ""), reverse=True)
        return found[offset : offset + limit]

    def list_projects(self, *, user: str | None = None, date_from: str | None = None, date_to: str | None = None) -> list[str]:
        parse_user_time(date_from, name="date_from")
        parse_user_time(date_to, name="date_to")
        return sorted({p for view in self._views(user) for p in view.list_projects(date_from=date_from, date_to=date_to)})

    def list_users(self, *, project: str | None = None, date_from: str | None = None, date_to: str | None = None) -> list[str]:
        parse_user_time(date_from, name="date_from")
        parse_user_time(date_to, name="date_to")
        users = set()
        for view in self._views():
            if view._filter_sessions(view.library, project=project, date_from=date_from, date_to=date_to):
                users.add(view._user)
        return sorted(users)

    def set_tags(self, session_id: str, tags: list[str]) -> None:
        raise BadInput("Tags are personal: set them in your own archive (without --store)")

    def get_tags(self, session_id: str) -> list[str]:
        self.resolve(session_id)
        return []

    def tags_version(self) -> tuple[int, int]:
        """The team store keeps no tags (they are personal): never changes."""
        return (0, 0)


def _newer_first(timestamp: str | None) -> tuple[bool, float]:
    """Ascending key: newer times first, unknown times last."""
    known, ts = newest_first(timestamp)
    return (not known, -ts)
