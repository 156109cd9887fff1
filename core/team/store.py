"""``TeamArchive``: the query API of :class:`core.api.Archive` on a team PostgreSQL store.

Every front end takes either store unchanged. Each user's sessions are loaded into
a :class:`~core.library.Library` (chains, numbers and references per user, as on
that user's own machine) and answered by an :class:`_UserView` — an ``Archive``
whose library is that user's and whose reader is the store — so resolving,
reading, statistics and handoff run the embedded store's own code. This class only
routes: ``user`` is optional everywhere (empty = everyone); a reference names its
user when it has to (``alice/velvet-puzzling-eclipse#4``), and a bare one that two
users share is refused as ambiguous with the qualified form to use.

Search scores Lucene BM25 in SQL from the postings of the query's terms, with the
same tokens, fields, weights and constants as the embedded index and statistics
over the whole team store (``corpus`` keeps N and the field lengths' sums).
"""

from __future__ import annotations

import heapq
import logging
import re
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from typing import Any

from .. import handoff
from ..api import Archive, _check_limit
from ..errors import BadInput, NotFound, StoreError
from ..index.bm25 import B, K1, TOOLS_WEIGHT, Hit
from ..library import Library
from ..model import Message, SearchHit, SessionInfo, Turn
from ..refs import parse_reference
from ..timeutil import parse_ts, parse_user_time
from ..tokenize import default_tokenizer, term_id
from ..views import Conversation, IndexStats, MessageContext, Resolved, UpdateResult
from .db import check_url, connect, describe, guard_logs, redact
from .rows import PgReader, load_user_rows
from .schema import ensure_schema

log = logging.getLogger(__name__)

REFRESH_SECONDS = 0.5  # how stale the sessions may be before a query looks again
POLL_SECONDS = 3.0  # start_watching: how often to look for other members' pushes

SEARCH_SQL = """
WITH c AS (
    SELECT n_docs::float8 AS n,
           CASE WHEN n_docs > 0 THEN sum_main / n_docs ELSE 1 END AS avg_main,
           CASE WHEN n_docs > 0 THEN sum_tool / n_docs ELSE 1 END AS avg_tool
    FROM corpus WHERE id = 1
), p AS MATERIALIZED (
    SELECT term, field, doc_id, tf, dl FROM postings WHERE term = ANY(%(terms)s)
), df AS (
    SELECT term, field, count(*)::float8 AS df FROM p GROUP BY term, field
), s AS (
    SELECT p.doc_id, sum(
        (CASE WHEN p.field = 0 THEN 1.0 ELSE %(tw)s END) * ln(1.0 + (c.n - df.df + 0.5) / (df.df + 0.5))
        * p.tf / (%(k1)s * ((1.0 - %(b)s) + %(b)s * p.dl
                  / greatest(CASE WHEN p.field = 0 THEN c.avg_main ELSE c.avg_tool END, 1e-9)) + p.tf)
    ) AS score
    FROM p JOIN df USING (term, field) CROSS JOIN c
    GROUP BY p.doc_id
)
SELECT s.doc_id, d.file_id, s.score, d.ts_epoch
FROM s JOIN docs d ON d.doc_id = s.doc_id
WHERE s.score > 0 {filters}
ORDER BY s.score DESC, d.ts_epoch DESC, s.doc_id
LIMIT %(k)s
"""


class _Docs:
    """The ``catalog.docs()`` that :meth:`Archive._hits` reads, prefetched in one query."""

    def __init__(self, rows: dict[int, dict[str, Any]]) -> None:
        self.rows = rows

    def docs(self, doc_ids) -> dict[int, dict[str, Any]]:
        return {i: self.rows[i] for i in doc_ids if i in self.rows}


class _UserView(Archive):
    """An Archive over one user's sessions in the team store (never opened itself)."""

    def __init__(self, team: TeamArchive, user: str, lib: Library, docs: _Docs | None = None) -> None:  # noqa: D107
        self._team = team
        self._user = user
        self._lib = lib
        self.reader = team.reader
        self.catalog = docs  # only _hits reads it
        self.config = team.config
        self._now = team._now

    @property
    def library(self) -> Library:  # type: ignore[override]
        return self._lib

    def _parent_turn(self, lib: Library, session_id: str, ts: str | None) -> int | None:
        mains = [e for e in lib.session_files.get(session_id, ()) if e.kind == "main"]
        best = None
        for entry in mains:
            row = self._team._query(
                "SELECT turn FROM docs WHERE file_id=%s AND NOT side AND ts<=%s ORDER BY ts DESC LIMIT 1",
                (entry.file_id, ts or ""),
            )
            if row:
                best = entry.turn_base + row[0][0]
        return best


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
            ensure_schema(conn)
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

    def sync(self, paths=None, progress=None) -> UpdateResult:
        """Look for other members' pushes now (the team store is written by `sync`)."""
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
                changed.extend(_changed(old, libs[name]))
            self._collisions = _collisions(libs)
            for name, lib in libs.items():
                _qualify(name, lib, self._collisions)
            self._files = {fid: name for name, lib in libs.items() for fid in lib.files}
            self._libs = libs
            self._generations = users
            self.reader.clear()
            return changed

    def _current(self) -> dict[str, Library]:
        self._refresh()
        return self._libs

    def _view(self, name: str, lib: Library, docs: _Docs | None = None) -> _UserView:
        return _UserView(self, name, lib, docs)

    def _views(self, user: str | None = None) -> list[_UserView]:
        libs = self._current()
        if user:
            if user not in libs:
                return []
            return [self._view(user, libs[user])]
        return [self._view(name, lib) for name, lib in sorted(libs.items())]

    def _route(self, ref: str, user: str | None = None) -> tuple[_UserView, str]:
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
    ) -> list[SearchHit]:
        limit = _check_limit(limit)
        terms = default_tokenizer().query_terms(query or "")
        ts_from = parse_user_time(date_from, name="date_from")
        ts_to = parse_user_time(date_to, end_of_day=True, name="date_to")
        if not terms:
            return []
        filters = []
        params: dict[str, Any] = {"terms": [term_id(t) for t in terms], "tw": TOOLS_WEIGHT, "k1": K1, "b": B, "k": limit * 3 + 10}
        if project or slug or session_id or agent or user:
            allowed = self._allowed_files(project=project, slug=slug, session_id=session_id, agent=agent, user=user)
            if not allowed:
                return []
            filters.append("AND d.file_id = ANY(%(files)s)")
            params["files"] = allowed
        if ts_from is not None:
            filters.append("AND d.ts_epoch >= %(ts_from)s")
            params["ts_from"] = ts_from
        if ts_to is not None:
            filters.append("AND d.ts_epoch <= %(ts_to)s")
            params["ts_to"] = ts_to
        raw = [Hit(int(r[0]), int(r[1]), float(r[2]), float(r[3])) for r in self._query(SEARCH_SQL.format(filters=" ".join(filters)), params)]
        if not raw:
            return []
        cols = ("doc_id", "file_id", "turn", "part", "first_seq", "last_seq", "ts", "side", "body")
        rows = self._query(f"SELECT {', '.join(cols)} FROM docs WHERE doc_id = ANY(%s)", ([h.doc_id for h in raw],))
        docs = _Docs({r[0]: dict(zip(cols, r)) for r in rows})
        libs = self._libs
        per_user: dict[str, list[Hit]] = {}
        for h in raw:
            owner = self._files.get(h.file_id)
            if owner is not None:
                per_user.setdefault(owner, []).append(h)
        streams = []
        for name, hits in per_user.items():
            found = self._view(name, libs[name], docs)._hits(libs[name], hits, terms, limit)
            streams.append([replace(h, ref=self._qualified(name, h.ref)) for h in found])
        merged = heapq.merge(*streams, key=lambda h: (-h.score, -parse_ts(h.timestamp)))
        return list(merged)[:limit]

    def _allowed_files(self, *, project, slug, session_id, agent, user) -> list[int]:
        wanted: set[str] | None = None
        views = self._views(user)
        if session_id:
            view, bare = self._route(session_id, user)
            wanted = {s.session_id for s in view.resolve(bare).sessions}
            views = [v for v in views if v._user == view._user]
        files: list[int] = []
        for view in views:
            sessions = view._filter_sessions(view.library, project=project, slug=slug, agent=agent)
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

    # --- references and reading ---------------------------------------------------------------

    def resolve(self, ref: str, *, user: str | None = None) -> Resolved:
        view, bare = self._route(ref, user)
        return view.resolve(bare)

    def one_session(self, ref: str, *, user: str | None = None) -> SessionInfo:
        view, bare = self._route(ref, user)
        return view.one_session(bare)

    def session_messages(self, ref: str, *, user: str | None = None) -> list[Message]:
        view, bare = self._route(ref, user)
        return view.session_messages(bare)

    def turns(self, info: SessionInfo) -> list[Turn]:
        return self._view(info.user or "", self._current()[info.user or ""]).turns(info)

    def read_turn(self, ref: str, turn_number: int | None = None, *, user: str | None = None) -> Turn:
        view, bare = self._route(ref, user)
        return view.read_turn(bare, turn_number)

    def get_conversation(self, ref: str, *, user: str | None = None, **options: Any) -> Conversation:
        view, bare = self._route(ref, user)
        conv = view.get_conversation(bare, **options)
        return replace(conv, ref=self._qualified(view._user, conv.ref))

    def get_message_context(self, ref: str, sequence: int, *, user: str | None = None, **options: Any) -> MessageContext:
        view, bare = self._route(ref, user)
        return view.get_message_context(bare, sequence, **options)

    def iter_session_messages(self, ref: str, *, user: str | None = None, **options: Any) -> Iterator[Message]:
        view, bare = self._route(ref, user)
        return view.iter_session_messages(bare, **options)

    def session_statistics(self, ref: str, *, user: str | None = None) -> dict:
        view, bare = self._route(ref, user)
        return {**view.session_statistics(bare), "user": view._user}

    def reference_block(self, ref: str, *, user: str | None = None) -> str:
        view, bare = self._route(ref, user)
        resolved = view.resolve(bare)
        return self._qualify_text(view._user, resolved, handoff.reference_block(resolved))

    def content_markdown(self, ref: str, budget_chars: int = handoff.DEFAULT_BUDGET, *, user: str | None = None) -> str:
        view, bare = self._route(ref, user)
        resolved = view.resolve(bare)
        text = handoff.content_markdown(resolved, view.turns, budget_chars)
        return self._qualify_text(view._user, resolved, text)

    def _qualify_text(self, user: str, resolved: Resolved, text: str) -> str:
        """Handoff text naming the user where the bare reference would be ambiguous."""
        canonical = handoff.canonical_ref(resolved)
        if parse_reference(canonical).name not in self._collisions:
            return text
        text = text.replace(f"reference: {canonical}", f"reference: {user}/{canonical}")
        text = text.replace(f"# Conversation {canonical}", f"# Conversation {user}/{canonical}")
        text = text.replace(f"server: {canonical})", f"server: {user}/{canonical})")
        return re.sub(r'(session_id(?:_or_slug)?=")', rf"\1{user}/", text)

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


def split_user(ref: str, user: str | None = None) -> tuple[str | None, str]:
    """``alice/ref`` → ("alice", "ref"); a ``user`` argument must agree with the prefix."""
    text = (ref or "").strip()
    owner = None
    if "/" in text:
        head, _, rest = text.partition("/")
        if head and rest:
            owner, text = head, rest
    if user and owner and user != owner:
        raise BadInput(f"Reference {ref!r} names user {owner!r}, not {user!r}")
    return owner or user or None, text


def _collisions(libs: dict[str, Library]) -> set[str]:
    """Slugs and session ids that more than one user has."""
    seen: dict[str, str] = {}
    shared: set[str] = set()
    for name, lib in libs.items():
        for key in set(lib.slugs) | set(lib.sessions):
            if seen.setdefault(key, name) != name:
                shared.add(key)
    return shared


def _qualify(user: str, lib: Library, shared: set[str]) -> None:
    """Give sessions whose slug or id another user shares a ``user/`` reference."""
    prefix = user + "/"
    for key, chain in lib.chains.items():
        for i, info in enumerate(chain):
            if not info.ref:
                continue
            bare = info.ref[len(prefix) :] if info.ref.startswith(prefix) else info.ref
            clash = info.session_id in shared or (info.slug is not None and info.slug in shared)
            want = prefix + bare if clash else bare
            if want != info.ref:
                info = replace(info, ref=want)
                chain[i] = info
                lib.sessions[info.session_id] = info


def _changed(old: Library | None, new: Library) -> list[str]:
    if old is None:
        return list(new.sessions)
    return [sid for sid, info in new.sessions.items() if old.sessions.get(sid) != info] + [
        sid for sid in old.sessions if sid not in new.sessions
    ]
