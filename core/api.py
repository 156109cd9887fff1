"""The one query API every front end uses (CLI, MCP server, HTTP API, app).

:class:`Archive` owns the cache (catalog + segments), keeps the searcher's snapshot
current, and answers queries from whatever snapshot is published: a query never
waits for indexing. Results are model objects with ``to_dict()`` in the MCP shapes.
The work behind each call is delegated (:mod:`core.archive.opening`, :mod:`core.archive.upkeep`,
:mod:`core.query.searching`, :mod:`core.query.read_calls`, :mod:`core.outputs.archive_usage`, …); what
stays here is checking arguments, the cache's state, and the glue.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec.structs

from core.archive import opening, usage_records
from core.archive.indexer import Indexer
from core.archive.library import Library
from core.archive.scope import Scope
from core.archive.semantic_job import SemanticJob
from core.archive.store import SEGMENTS_DIR, WriterLock, open_catalog, wipe_cache
from core.archive.tags import TagStore
from core.archive.upkeep import Upkeep
from core.index.bm25 import Snapshot
from core.index.segment import SegmentError
from core.outputs import archive_usage, handoff
from core.query import answers, coverage, meaning, read_calls, resolving, searching
from core.query import execute as query_exec
from core.query import filters as session_filters
from core.query.execute import check_limit as _check_limit
from core.query.hybrid import check_mode
from core.query.reading import MessageReader
from core.query.stats import index_stats

from .budget import DEFAULT_TURNS, RESULT_BUDGET
from .config import Config
from .errors import BadInput
from .model import Message, SearchHit, SessionInfo, Turn
from .timeutil import parse_user_time
from .views import Conversation, IndexStats, MessageContext, MessagesPage, Progress, Resolved, UpdateResult

if TYPE_CHECKING:  # imported where used: a search needs no usage tables, resume rules or turn builder
    from core.outputs import resume, usage

MERGE_WAIT_ON_CLOSE = 10.0  # seconds; a merge of the whole index takes ~1 s


class Archive:
    """A person's transcripts, indexed. Thread-safe for queries."""

    def __init__(
        self, config: Config, *, writer: bool, now: Callable[[], float] | None = None, lock_wait: float = 0.0, verify: bool = False
    ) -> None:
        self.config = config
        self.scope = Scope(config.pattern)  # applied to every answer; the cache holds every project
        self.cache = config.cache_path
        self._now = now or time.time
        self._lock = WriterLock(self.cache)
        self.writer, note = opening.take_writer_lock(self._lock, writer, lock_wait)
        try:
            self._open(verify, note)
        except BaseException:
            # (damage found while opening: the caller repairs the cache, which needs the lock)
            self._lock.release()
            raise

    def _open(self, verify: bool, note: str | None) -> None:
        # (cache_note: the cache answers but cannot be updated — a full disk, a read-only directory)
        catalog, self.rebuilt, self.writer, self.cache_note = opening.open_cache_for(
            self.cache, self._lock, writer=self.writer, verify=verify, note=note
        )
        self.tags = TagStore(self.config.data_path)
        self._snapshot: Snapshot | None = None
        self._library: Library | None = None
        self._tags_version: tuple[int, int] = (0, 0)
        self._library_lock = threading.Lock()
        self._upkeep = Upkeep(self)  # syncing, watching, listeners
        self.semantic = SemanticJob(self)  # passage vectors: hybrid recall (core/query/hybrid.py)
        self._attach(catalog)
        try:
            rebuilt = opening.publish_first_snapshot(self.indexer, self._publish, self._wipe, writer=self.writer, verify=verify)
        except BaseException:
            self.catalog.close()
            self.tags.close()
            raise
        if rebuilt is not None:
            self.rebuilt = rebuilt

    def _attach(self, catalog) -> None:
        self.catalog = catalog
        self.indexer = Indexer(self.config, catalog, self.cache / SEGMENTS_DIR, self._publish)
        self.reader = MessageReader(catalog)

    def _wipe(self) -> None:
        """Throw the cache away and start an empty one (the writer only)."""
        with self.semantic.paused():  # (its vectors are keyed by doc ids, which the new catalog reuses)
            self.catalog.close()
            wipe_cache(self.cache)
            self._attach(open_catalog(self.cache, writer=True)[0])
            self._publish(self.indexer.load_snapshot())

    # --- lifecycle ---------------------------------------------------------------------

    @classmethod
    def open(
        cls,
        config: Config,
        *,
        progress: Callable[[Progress], None] | None = None,
        read_only: bool | None = None,
        sync: bool = True,
        now: Callable[[], float] | None = None,
        lock_wait: float = 0.0,
        verify: bool = False,
    ) -> Archive:
        """``lock_wait``: seconds to wait for the writer lock (else open read-only at once).
        ``verify``: check every byte of the cache (checksums), not only sizes and shapes."""
        archive = cls(config, writer=not read_only, now=now, lock_wait=lock_wait, verify=verify)
        opening.first_sync(archive, sync=sync, progress=progress)
        return archive

    def sync_in_background(self, progress: Callable[[Progress], None] | None = None) -> threading.Thread:
        """Catch up with the disk on a thread; queries answer from the cache meanwhile."""
        return self._upkeep.sync_in_background(progress)

    def wait_for_first_index(self, timeout: float) -> bool:
        """Block (at most ``timeout`` s) only while a never-indexed cache is being built.

        A server started on an empty cache should not answer "no results" in its
        first seconds; once any index exists, queries never wait.
        """
        return self._upkeep.first_index.wait(timeout)

    def sync(self, paths: Iterable[Path] | None = None, progress: Callable[[Progress], None] | None = None, *, quick: bool = False) -> UpdateResult:
        """Bring the index up to date with the disk (all files, or these paths; :mod:`core.archive.upkeep`).

        ``quick``: a one-shot process trusts directory mtimes (core/sources/discovery.py).
        """
        return self._upkeep.sync(paths, progress, quick=quick)

    def compact(self) -> None:
        """Merge every segment into one (``relay-search index`` does this)."""
        if self.writer:
            self.indexer.merge_all()

    def rebuild(self, progress: Callable[[Progress], None] | None = None) -> UpdateResult:
        if not self.writer:
            raise BadInput("Another relay-search process is updating the cache; stop it to rebuild")
        self.stop_watching()
        self._wipe()
        return self.sync(progress=progress)

    def start_watching(self, on_change: Callable[[UpdateResult], None] | None = None, *, embed: bool = True) -> None:
        """Watch the transcript roots (a reader: the writer's cache) and sync what changes.

        Returns once the roots are watched: a change made after it is seen. ``embed=False``
        leaves embedding the passages without vectors to :meth:`embed_in_background`
        (the app starts it once it is interactive); later changes are embedded as they land."""
        self._upkeep.start_watching(on_change, embed=embed)

    def embed_in_background(self) -> None:
        """Start embedding what has no vector yet (the writer only); returns at once."""
        self.semantic.kick()

    def remove_listener(self, on_change: Callable[[UpdateResult], None]) -> None:
        """Stop calling ``on_change`` (an app closing while the archive lives on)."""
        self._upkeep.remove_listener(on_change)

    def stop_watching(self) -> None:
        self._upkeep.stop_watching()

    def wait_semantic(self, timeout: float | None = None) -> bool:
        """Embed every passage in the background and wait (tests; a search never waits); False on timeout."""
        return self.semantic.wait(timeout)

    def meaning_gap(self, query: str, mode: str = "auto", sort: str = "relevance") -> dict[str, Any] | None:
        """How many passages a prose ``query`` cannot reach by meaning yet, and the note saying so."""
        return meaning.meaning_gap(self, query, mode, sort)

    def stop_syncing(self) -> None:
        """End a sync on another thread between chunks, its commits kept (``Indexer.closing``)."""
        self.indexer.closing.set()

    def close(self) -> None:
        self.stop_syncing()
        self.stop_watching()
        self.semantic.close()
        # A merge still writing when the catalog closes would fail on its thread
        # (and a traceback from a daemon thread at interpreter exit is a crash).
        self.indexer.wait_for_merge(MERGE_WAIT_ON_CLOSE)
        self._upkeep.closed = True
        self.catalog.close()
        self.tags.close()
        self._lock.release()

    def __enter__(self) -> Archive:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # --- snapshots -------------------------------------------------------------------

    def _publish(self, snapshot: Snapshot) -> None:
        self._snapshot = snapshot
        with self._library_lock:
            self._library = None

    def _refresh_from_disk(self) -> None:
        """Readers in another process follow the writer's commits."""
        try:
            if self._snapshot is None or self.catalog.generation() != self._snapshot.generation:
                self._publish(self.indexer.load_snapshot())
        except (OSError, ValueError, SegmentError):
            pass  # the writer is mid-merge; the next query tries again

    @property
    def generation(self) -> int:
        return self._snapshot.generation if self._snapshot else 0

    @property
    def library(self) -> Library:
        if not self.writer:
            self._refresh_from_disk()
        tags = self.tags.version()  # before reading them: a change meanwhile refreshes again
        with self._library_lock:
            if self._library is None or self._library.generation != self.generation or self._tags_version != tags:
                self._library = Library(self.catalog, self.tags.all(), now=self._now(), scope=self.scope, lazy=True)
                self._tags_version = tags
            return self._library

    def tags_version(self) -> tuple[int, int]:
        """Moves when any process changes the tags (the app polls it to show them)."""
        return self.tags.version()

    def _invalidate_library(self) -> None:
        with self._library_lock:
            self._library = None

    # --- search ----------------------------------------------------------------------

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
        """Ranked turns for ``query`` (syntax: :mod:`core.query.syntax`).

        ``sort="recent"``: newest first among the best-matching turns; ``offset``
        pages; ``group="session"``: one hit per session (its best) with
        ``more_in_session``; ``typing``: the last word is a prefix (search-as-you-type);
        ``snippets=False``: no snippets (the app's reader only marks the turns hit);
        ``mode``: ``auto`` (prose queries hybrid, code-like BM25), ``hybrid`` or ``lexical`` (:mod:`core.query.hybrid`).
        """
        mode = check_mode(mode)
        limit = _check_limit(limit)
        query_exec.check_paging(offset, sort, group)
        ts_from = parse_user_time(date_from, name="date_from", now=self._now())  # bad input is an error even when nothing matches
        ts_to = parse_user_time(date_to, end_of_day=True, name="date_to", now=self._now())
        return searching.archive_search(
            self, query, typing=typing, project=project, slug=slug, session_id=session_id, agent=agent, user=user, tags=tags,
            limit=limit, offset=offset, sort=sort, group=group, ts_from=ts_from, ts_to=ts_to, snippets=snippets, mode=mode,
        )  # fmt: skip

    # --- sessions ----------------------------------------------------------------------

    def _filter_sessions(self, lib: Library, **filters: Any) -> list[SessionInfo]:
        """The sessions these filters keep (:func:`core.query.filters.matching`); the team store's views use it too."""
        return session_filters.matching(lib, now=self._now, **filters)

    def list_sessions(
        self, *, project: str | None = None, slug: str | None = None, agent: str | None = None, user: str | None = None,
        date_from: str | None = None, date_to: str | None = None, tags: list[str] | None = None, limit: int = 50, offset: int = 0,
    ) -> list[SessionInfo]:  # fmt: skip
        limit = _check_limit(limit)
        if offset < 0:
            raise BadInput("offset must be 0 or more")
        lib = self.library
        if not slug and not project:  # (a project's name needs every cwd: those build the library)
            return session_filters.newest_page(
                lib, now=self._now, agent=agent, user=user, date_from=date_from, date_to=date_to, tags=tags, limit=limit, offset=offset
            )
        sessions = self._filter_sessions(lib, project=project, slug=slug, agent=agent, user=user, date_from=date_from, date_to=date_to, tags=tags)
        return session_filters.listed(sessions, slug=slug)[offset : offset + limit]

    def list_projects(self, *, user: str | None = None, date_from: str | None = None, date_to: str | None = None) -> list[str]:
        sessions = self._filter_sessions(self.library, user=user, date_from=date_from, date_to=date_to)
        return sorted({s.project for s in sessions})

    def list_users(self, *, project: str | None = None, date_from: str | None = None, date_to: str | None = None) -> list[str]:
        sessions = self._filter_sessions(self.library, project=project, date_from=date_from, date_to=date_to)
        return sorted({s.user for s in sessions if s.user})

    def set_tags(self, session_id: str, tags: list[str]) -> None:
        resolved = self.resolve(session_id)
        for info in resolved.sessions:
            self.tags.set(info.session_id, tags)
        self._invalidate_library()

    def get_tags(self, session_id: str) -> list[str]:
        resolved = self.resolve(session_id)
        return list(self.tags.all().get(resolved.sessions[0].session_id, ()))

    # --- references --------------------------------------------------------------------

    def resolve(self, ref: str) -> Resolved:
        """Sessions (and maybe a turn) named by any reference form (SPEC §4; :mod:`core.query.resolving`)."""
        return resolving.resolve(self.library, ref)

    # --- reading -----------------------------------------------------------------------

    def session_messages(self, ref: str) -> list[Message]:
        """The whole stitched stream (file by file) of the one session a reference names."""
        info = self.one_session(ref)
        return self.reader.session(self.library.files_of(info.session_id))

    def one_session(self, ref: str, call: str = "This call") -> SessionInfo:
        """The session a one-session call reads; a chain or range is refused (one line)."""
        return coverage.one_session(self.resolve(ref), call)

    def turns(self, info: SessionInfo) -> list[Turn]:
        from core.archive.turns import build_turns

        return build_turns(self.reader.session(self.library.files_of(info.session_id)))

    def read_turn(self, ref: str, turn_number: int | None = None, *, budget: int | None = RESULT_BUDGET) -> Turn:
        """One turn of one session (a chain, a range or a conflicting turn_number is refused)."""
        return read_calls.read_turn(self, ref, turn_number, budget=budget)

    def get_conversation(
        self,
        ref: str,
        *,
        session: str | None = None,
        around_timestamp: str | None = None,
        roles: list[str] | None = None,
        offset: int = 0,
        limit: int | None = DEFAULT_TURNS,
        budget: int | None = RESULT_BUDGET,
    ) -> Conversation:
        """A page of a conversation's turns (``limit=None``/``budget=None``: no bound)."""
        if offset < 0:
            raise BadInput("offset must be 0 or more")
        if limit is not None:
            _check_limit(limit)
        answers.check_roles(roles)
        return read_calls.conversation(
            self, ref, session=session, around_timestamp=around_timestamp, roles=roles, offset=offset, limit=limit, budget=budget
        )

    def get_message_context(
        self, ref: str, sequence: int, *, before: int = 5, after: int = 5, include_tool_outputs: bool = True,
        budget: int | None = RESULT_BUDGET,
    ) -> MessageContext:  # fmt: skip
        """A message and its neighbours in the session's time order (subagents interleaved)."""
        return read_calls.message_context(
            self, ref, sequence, before=before, after=after, include_tool_outputs=include_tool_outputs, budget=budget
        )

    def message_sessions(self, ref: str) -> tuple[str, tuple[SessionInfo, ...]]:
        """(the ref covered, the sessions) a messages call streams: a session, a range or a chain."""
        return read_calls.message_sessions(self, ref)

    def iter_session_messages(self, ref: str, *, since: str | None = None, include_tools: bool = False, include_thinking: bool = False) -> Iterator[Message]:
        """Messages of a session, range or chain, streamed (SPEC §5 get_session_messages).

        One session: its files merged in time order (subagent messages where they
        happened). Several: session after session, each after a boundary marker.
        ``since`` is strictly after, on that same order.
        """
        return read_calls.iter_messages(self, ref, since=since, include_tools=include_tools, include_thinking=include_thinking)

    def session_messages_page(
        self, ref: str, *, since: str | None = None, include_tools: bool = False, include_thinking: bool = False,
        offset: int = 0, budget: int | None = RESULT_BUDGET,
    ) -> MessagesPage:  # fmt: skip
        """One budget-sized page of :meth:`iter_session_messages` (the MCP tool's answer)."""
        if offset < 0:
            raise BadInput("offset must be 0 or more")
        return read_calls.messages_page(
            self, ref, since=since, include_tools=include_tools, include_thinking=include_thinking, offset=offset, budget=budget
        )

    def session_statistics(self, ref: str) -> dict:
        """Counts and token usage over every session the reference names (a session, a range, a chain)."""
        return archive_usage.session_statistics(self, ref)

    # --- token usage and resuming (core.outputs.usage, core.outputs.resume do the work) --------------------

    def _usage_source(self) -> tuple[list[usage_records.Record], dict[int, usage.Owner]]:
        """Each API response once, and who owns each file (the team view reads its store)."""
        return archive_usage.catalog_source(self.catalog, self.library)

    def usage_report(self, *, by: str = "day", date_from: str | None = None, date_to: str | None = None,
                     project: str | None = None, agent: str | None = None) -> usage.UsageReport:
        return archive_usage.usage_report(self, by=by, date_from=date_from, date_to=date_to, project=project, agent=agent)

    def sessions_usage(self, session_ids: Iterable[str]) -> dict[str, usage.Totals]:
        """Tokens and estimated cost per session: every file of its id (subagents, pings)."""
        from core.outputs import usage
        return usage.catalog_sessions_totals(self.catalog, session_ids)

    def session_usage(self, ref: str) -> usage.Totals:
        """Token usage of every session ``ref`` names (a session, a range or a chain)."""
        return archive_usage.session_usage(self, ref)

    def resume_plan(self, ref: str) -> resume.ResumePlan:
        """The command that resumes ``ref`` in its agent (core.outputs.resume)."""
        from core.outputs import resume

        resolved = self.resolve(ref)
        return resume.plan(resume.pick_session(ref, resolved.sessions, resolved.single))

    # --- handoff -----------------------------------------------------------------------

    def reference_block(self, ref: str) -> str:
        return handoff.reference_block(self.resolve(ref))

    def content_markdown(self, ref: str, budget_chars: int = handoff.DEFAULT_BUDGET) -> str:
        resolved = self.resolve(ref)
        return handoff.content_markdown(resolved, lambda info: self.turns(info), budget_chars)

    # --- stats -------------------------------------------------------------------------

    def stats(self) -> IndexStats:
        """What is indexed, within this process's scope (index size and segments: the shared cache's)."""
        stats = index_stats(self.library, self.catalog, self._snapshot, self.scope, self.cache)
        return msgspec.structs.replace(stats, semantic=self.semantic.summary())

