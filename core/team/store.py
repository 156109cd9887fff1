"""``TeamArchive``: the query API of :class:`core.api.Archive` on a team PostgreSQL store.

Every front end takes either store unchanged. Each user's sessions are loaded into
a :class:`~core.archive.library.Library` (chains, numbers and references per user, as on
that user's own machine) and answered by an :class:`UserView` — an ``Archive``
whose library is that user's and whose reader is the store — so resolving,
reading, statistics and handoff run the embedded store's own code. This class only
routes: ``user`` is optional everywhere (empty = everyone); a reference names its
user when it has to (``alice/velvet-puzzling-eclipse#4``), and a bare one that two
users share is refused as ambiguous with the qualified form to use.

Search (:mod:`core.team.search`) fetches the postings of the query's terms and ranks
them with the embedded index's own BM25 code, over statistics of the whole team store.
"""

from __future__ import annotations

import heapq
import logging
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

import numpy as np

from core.api import _check_limit
from core.archive import usage_records
from core.archive.library import Library
from core.errors import BadInput, NotFound, StoreError
from core.index.bm25 import Hit
from core.index.tokenize import term_id
from core.model import Message, SearchHit, SessionInfo, Turn
from core.outputs import handoff, resume, usage
from core.query import execute as query_exec
from core.query import searching
from core.query import syntax as query_syntax
from core.query.ranking import hit_order
from core.refs import parse_reference
from core.timeutil import newest_first, parse_user_time
from core.views import Conversation, IndexStats, MessageContext, MessagesPage, Resolved, UpdateResult

from .db import check_url, connect, describe, guard_logs, redact
from .names import changed_sessions, collisions, qualify, qualify_text, split_user
from .rows import PgReader, load_user_rows
from .schema import ensure_schema_or_explain
from .search import DocPlaces, Docs, postings_snapshot
from .view import UserView

log = logging.getLogger(__name__)

REFRESH_SECONDS = 0.5  # how stale the sessions may be before a query looks again
POLL_SECONDS = 3.0  # start_watching: how often to look for other members' pushes


class TeamArchive:
    """The team store behind the Archive query API (thread-safe for queries)."""

    rebuilt: str | None = None
    writer = False

    def __init__(self, url: str, *, config=None, now: Callable[[], float] | None = None, pool_size: int = 8) -> None:
        try:
            from psycopg_pool import ConnectionPool
        except ImportError:
            raise BadInput("The team store needs psycopg: pip install 'relay-search[postgres]'") from None

        self.url = check_url(url)
        self.config = config
        self._now = now or time.time
        with connect(self.url) as conn:
            ensure_schema_or_explain(conn, self.url)
        guard_logs(self.url)
        self.pool = ConnectionPool(
            self.url, kwargs={"autocommit": True, "application_name": "relay-search"}, min_size=1,
            max_size=pool_size, open=True, name="relay-search", timeout=15,
        )  # fmt: skip
        self.reader = PgReader(self._run)
        self._libs: dict[str, Library] = {}
        self._generations: dict[str, tuple[int, int]] = {}  # user → (user_id, generation)
        self._collisions: set[str] = set()
        self._files: dict[int, str] = {}  # file_id → user
        self._places = DocPlaces(self._run)  # doc → file, time (for filters and ties)
        self._checked = 0.0
        self._refresh_lock = threading.Lock()
        self._listeners: list[Callable[[UpdateResult], None]] = []
        self._poller: threading.Thread | None = None
        self._stop = threading.Event()
        self._refresh(force=True)

    @classmethod
    def open(cls, url: str, *, config=None, now: Callable[[], float] | None = None, **_: Any) -> TeamArchive:
        return cls(url, config=config, now=now)

    # --- connections -------------------------------------------------------------------

    def _run(self, fn: Callable[[Any], Any]) -> Any:
        """``fn(conn)`` on a pooled connection; one retry after a dropped connection."""
        import psycopg
        from psycopg_pool import PoolTimeout

        for attempt in (1, 2):
            try:
                with self.pool.connection() as conn:
                    return fn(conn)
            except psycopg.OperationalError as exc:
                if attempt == 2:
                    raise StoreError(f"lost the team store {redact(self.url)}: {describe(exc, self.url)}") from None
            except PoolTimeout:
                raise StoreError(f"the team store {redact(self.url)} is not answering") from None
        raise AssertionError("unreachable")

    def _query(self, sql: str, params: Any = ()) -> list[tuple]:
        return self._run(lambda conn: conn.execute(sql, params).fetchall())

    # --- lifecycle ---------------------------------------------------------------------

    def sync(self, paths=None, progress=None, *, quick: bool = False) -> UpdateResult:
        """Look for other members' pushes now (the team store is written by `sync`; ``quick`` changes nothing here)."""
        return UpdateResult(changed_sessions=tuple(self._refresh(force=True)))

    def sync_in_background(self, progress=None) -> threading.Thread:
        def run() -> None:
            try:
                self.sync()
            except Exception as exc:  # the poller retries
                log.warning("relay-search: team store refresh failed: %s", exc)

        thread = threading.Thread(target=run, name="relay-search-team-refresh", daemon=True)
        thread.start()
        return thread

    def wait_for_first_index(self, timeout: float) -> bool:
        return True  # the store is indexed as members push

    def start_watching(self, on_change: Callable[[UpdateResult], None] | None = None) -> None:
        if on_change is not None:
            self._listeners.append(on_change)
        if self._poller is not None:
            return
        self._stop.clear()
        self._poller = threading.Thread(target=self._poll, name="relay-search-team-poll", daemon=True)
        self._poller.start()

    def _poll(self) -> None:
        while not self._stop.wait(POLL_SECONDS):
            try:
                changed = self._refresh(force=True)
            except Exception as exc:  # the store is away: try again next round
                log.warning("relay-search: team store poll failed: %s", exc)
                continue
            if changed:
                result = UpdateResult(changed_sessions=tuple(changed))
                for listener in list(self._listeners):
                    listener(result)

    def remove_listener(self, on_change: Callable[[UpdateResult], None]) -> None:
        if on_change in self._listeners:
            self._listeners.remove(on_change)

    def compact(self) -> None:
        """Nothing to merge: PostgreSQL keeps the store's index."""

    def rebuild(self, progress=None) -> UpdateResult:
        raise BadInput("The team store is rebuilt by its members' syncs, not from here")

    def stop_watching(self) -> None:
        self._stop.set()
        if self._poller is not None:
            self._poller.join(timeout=5)
            self._poller = None

    def close(self) -> None:
        self.stop_watching()
        self.pool.close()

    def __enter__(self) -> TeamArchive:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @property
    def generation(self) -> int:
        return sum(g for _, g in self._generations.values())

    # --- users' libraries --------------------------------------------------------------------

    def _refresh(self, force: bool = False) -> list[str]:
        """Reload the sessions of users who pushed since; the sessions that changed."""
        if not force and time.monotonic() - self._checked < REFRESH_SECONDS:
            return []
        with self._refresh_lock:
            users = {name: (uid, gen) for uid, name, gen in self._query("SELECT user_id, name, generation FROM users")}
            self._checked = time.monotonic()
            stale = [name for name, state in users.items() if self._generations.get(name) != state]
            if not stale and set(users) == set(self._libs):
                return []
            libs = {name: lib for name, lib in self._libs.items() if name in users}
            changed: list[str] = []
            for name in stale:
                uid, gen = users[name]
                rows = self._run(lambda conn: load_user_rows(conn, uid, name, gen))
                old = libs.get(name)
                libs[name] = Library(rows, {}, now=self._now())
                changed.extend(changed_sessions(old, libs[name]))
            self._collisions = collisions(libs)
            for name, lib in libs.items():
                qualify(name, lib, self._collisions)
            self._files = {fid: name for name, lib in libs.items() for fid in lib.files}
            self._places.load()
            self._libs = libs
            self._generations = users
            self.reader.clear()
            return changed

    def _current(self) -> dict[str, Library]:
        self._refresh()
        return self._libs

    def _view(self, name: str, lib: Library) -> UserView:
        return UserView(self, name, lib)

    def _views(self, user: str | None = None) -> list[UserView]:
        libs = self._current()
        if user:
            if user not in libs:
                return []
            return [self._view(user, libs[user])]
        return [self._view(name, lib) for name, lib in sorted(libs.items())]

    def _route(self, ref: str, user: str | None = None) -> tuple[UserView, str]:
        """The user whose sessions ``ref`` names, and the reference without the user."""
        owner, bare = split_user(ref, user)
        libs = self._current()
        if owner:
            if owner not in libs:
                raise NotFound(f"Unknown user: {owner}")
            return self._view(owner, libs[owner]), bare
        name = parse_reference(bare).name
        owners = [n for n, lib in sorted(libs.items()) if name in lib.slugs or lib.find_ids(name)]
        if not owners:
            raise NotFound(f"Unknown session_id: {name}")
        if len(owners) > 1:
            raise BadInput(
                f"Ambiguous reference {name!r}: users {', '.join(owners)} each have it; "
                f"name the user, e.g. {owners[0]}/{bare}"
            )
        return self._view(owners[0], libs[owners[0]]), bare

    def scope_ref(self, ref: str, user: str | None) -> str:
        """``ref`` limited to ``user``'s sessions (what a front end's ``user`` parameter means)."""
        owner, bare = split_user(ref, user)
        return f"{owner}/{bare}" if owner else bare

    def _qualified(self, user: str, ref: str) -> str:
        name = parse_reference(ref).name
        return f"{user}/{ref}" if name in self._collisions else ref

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
    ) -> list[SearchHit]:
        """As :meth:`core.api.Archive.search` (prefixes match their typed stem only here)."""
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
            found = self._allowed_files(project=project, slug=slug, session_id=session_id, agent=agent, user=user, tags=tags)
            allowed = np.array(found, dtype=np.int64)
            if allowed.shape[0] == 0:
                return []
        ids = [term_id(t) for t in (*parsed.terms, *parsed.excluded)]
        snapshot = postings_snapshot(self._run, ids, self._places)
        if snapshot is None:
            return []
        want = query_exec.GROUP_WINDOW if group else offset + limit
        raw, terms, _ = query_exec.ranked(snapshot, parsed, want * 3 + 10, sort=sort, allowed_files=allowed, ts_from=ts_from, ts_to=ts_to)
        if not raw:
            return []
        cols = ("doc_id", "file_id", "turn", "part", "first_seq", "last_seq", "ts", "side", "body")
        rows = self._query(f"SELECT {', '.join(cols)} FROM docs WHERE doc_id = ANY(%s)", ([h.doc_id for h in raw],))
        docs = Docs({r[0]: dict(zip(cols, r)) for r in rows}, self._query)
        per_user: dict[str, list[Hit]] = {}
        for h in raw:
            owner = self._files.get(h.file_id)
            if owner is not None:
                per_user.setdefault(owner, []).append(h)
        streams = []
        for name, hits in per_user.items():
            found = searching.hits(libs[name], docs, hits, terms, want, sort=sort, snippets=snippets)
            streams.append([replace(h, ref=self._qualified(name, h.ref)) for h in found])
        if sort == "recent":
            merged = list(heapq.merge(*streams, key=lambda h: (_newer_first(h.timestamp), hit_order(h))))
        else:
            merged = list(heapq.merge(*streams, key=hit_order))
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

    # --- references and reading ---------------------------------------------------------------

    def resolve(self, ref: str, *, user: str | None = None) -> Resolved:
        view, bare = self._route(ref, user)
        return view.resolve(bare)

    def one_session(self, ref: str, call: str = "This call", *, user: str | None = None) -> SessionInfo:
        view, bare = self._route(ref, user)
        return view.one_session(bare, call)

    def session_messages(self, ref: str, *, user: str | None = None) -> list[Message]:
        view, bare = self._route(ref, user)
        return view.session_messages(bare)

    def turns(self, info: SessionInfo) -> list[Turn]:
        return self._view(info.user or "", self._current()[info.user or ""]).turns(info)

    def read_turn(self, ref: str, turn_number: int | None = None, *, user: str | None = None, **options: Any) -> Turn:
        view, bare = self._route(ref, user)
        turn = view.read_turn(bare, turn_number, **options)
        return replace(turn, ref=self._qualified(view._user, turn.ref)) if turn.ref else turn

    def get_conversation(self, ref: str, *, user: str | None = None, **options: Any) -> Conversation:
        view, bare = self._route(ref, user)
        conv = view.get_conversation(bare, **options)
        return replace(conv, ref=self._qualified(view._user, conv.ref))

    def get_message_context(self, ref: str, sequence: int, *, user: str | None = None, **options: Any) -> MessageContext:
        view, bare = self._route(ref, user)
        ctx = view.get_message_context(bare, sequence, **options)
        return replace(ctx, ref=self._qualified(view._user, ctx.ref))

    def message_sessions(self, ref: str, *, user: str | None = None) -> tuple[str, tuple[SessionInfo, ...]]:
        view, bare = self._route(ref, user)
        covered, sessions = view.message_sessions(bare)
        return self._qualified(view._user, covered), sessions

    def iter_session_messages(self, ref: str, *, user: str | None = None, **options: Any) -> Iterator[Message]:
        view, bare = self._route(ref, user)
        return view.iter_session_messages(bare, **options)

    def session_messages_page(self, ref: str, *, user: str | None = None, **options: Any) -> MessagesPage:
        view, bare = self._route(ref, user)
        page = view.session_messages_page(bare, **options)
        return replace(page, ref=self._qualified(view._user, page.ref))

    def session_statistics(self, ref: str, *, user: str | None = None) -> dict:
        view, bare = self._route(ref, user)
        stats = view.session_statistics(bare)
        return {**stats, "ref": self._qualified(view._user, stats["ref"]), "user": view._user}

    # --- token usage and resuming --------------------------------------------------------

    def usage_report(self, *, user: str | None = None, **options: Any) -> usage.UsageReport:
        records: list[usage_records.Record] = []
        owners: dict[int, usage.Owner] = {}
        for view in self._views(user):
            got, mine = view._usage_source()
            records += got
            owners.update(mine)
        return usage.report(records, owners, **options)

    def sessions_usage(self, session_ids, *, user: str | None = None) -> dict[str, usage.Totals]:
        wanted = list(session_ids)
        out: dict[str, usage.Totals] = {}
        for view in self._views(user):
            mine = [sid for sid in wanted if sid in view.library.sessions]
            if mine:
                out.update(view.sessions_usage(mine))
        return {sid: out.get(sid, usage.Totals()) for sid in wanted}

    def session_usage(self, ref: str, *, user: str | None = None) -> usage.Totals:
        view, bare = self._route(ref, user)
        return view.session_usage(bare)

    def resume_plan(self, ref: str, *, user: str | None = None) -> resume.ResumePlan:
        view, bare = self._route(ref, user)
        return view.resume_plan(bare)

    def reference_block(self, ref: str, *, user: str | None = None) -> str:
        view, bare = self._route(ref, user)
        resolved = view.resolve(bare)
        return qualify_text(view._user, resolved, handoff.reference_block(resolved), self._collisions)

    def content_markdown(self, ref: str, budget_chars: int = handoff.DEFAULT_BUDGET, *, user: str | None = None) -> str:
        view, bare = self._route(ref, user)
        resolved = view.resolve(bare)
        text = handoff.content_markdown(resolved, view.turns, budget_chars)
        return qualify_text(view._user, resolved, text, self._collisions)

    # --- stats ----------------------------------------------------------------------------

    def stats(self) -> IndexStats:
        libs = self._current()
        files = self._query("SELECT path, size, skipped, error FROM files")
        documents = self._query("SELECT n_docs FROM corpus WHERE id=1")[0][0]
        index_bytes = self._query("SELECT pg_database_size(current_database())")[0][0]
        agents: dict[str, int] = {}
        for lib in libs.values():
            for s in lib.sessions.values():
                agents[s.agent] = agents.get(s.agent, 0) + 1
        return IndexStats(
            files=len(files),
            sessions=sum(len(lib.sessions) for lib in libs.values()),
            turns=sum(s.turn_count for lib in libs.values() for s in lib.sessions.values()),
            documents=int(documents),
            segments=0,
            transcript_bytes=sum(max(0, f[1]) for f in files),
            index_bytes=int(index_bytes),
            skipped_lines=sum(f[2] for f in files),
            files_with_skips=tuple((f[0], f[2]) for f in files if f[2]),
            errors=tuple((f[0], f[3]) for f in files if f[3]),
            agents=agents,
        )


def _newer_first(timestamp: str | None) -> tuple[bool, float]:
    """Ascending key: newer times first, unknown times last."""
    known, ts = newest_first(timestamp)
    return (not known, -ts)
