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

This module connects, follows the members' pushes and keeps each user's library
current, and routes a reference to its user; the calls themselves are mixed in from
:mod:`core.team.store_search` (search, session listings) and
:mod:`core.team.store_reading` (reading, usage, handoff, stats).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from core.archive.library import Library
from core.errors import BadInput, NotFound, StoreError
from core.refs import parse_reference
from core.views import UpdateResult

from .db import check_url, connect, describe, guard_logs, redact
from .names import changed_sessions, collisions, qualify, split_user
from .rows import PgReader, load_user_rows
from .schema import ensure_schema_or_explain
from .search import DocPlaces
from .store_reading import TeamReading
from .store_search import TeamSearch
from .view import UserView

log = logging.getLogger(__name__)

REFRESH_SECONDS = 0.5  # how stale the sessions may be before a query looks again
POLL_SECONDS = 3.0  # start_watching: how often to look for other members' pushes


class TeamArchive(TeamSearch, TeamReading):
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

    def start_watching(self, on_change: Callable[[UpdateResult], None] | None = None, *, embed: bool = True) -> None:
        """Poll the shared store for other users' changes (``embed``: nothing to embed here)."""
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

    def stop_syncing(self) -> None:
        """Nothing long to stop: a sync here is one query for other members' pushes."""

    def rebuild(self, progress=None) -> UpdateResult:
        raise BadInput("The team store is rebuilt by its members' syncs, not from here")

    def stop_watching(self) -> None:
        self._stop.set()
        if self._poller is not None:
            self._poller.join(timeout=5)
            self._poller = None

    def embed_in_background(self) -> None:
        """Nothing to embed: team search is by words only (see :meth:`wait_semantic`)."""

    def meaning_gap(self, query: str, mode: str = "auto", sort: str = "relevance") -> dict[str, Any] | None:
        """Nothing is missing: team search is by words only, and says so in its stats."""
        return None

    def wait_semantic(self, timeout: float | None = None) -> bool:
        """Nothing to wait for: team search is by words only (no vectors in the shared store yet)."""
        return True

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
                rows = self._run(lambda conn: load_user_rows(conn, uid, name, gen))  # noqa: B023 (run at once, in this iteration)
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
