"""The one query API every front end uses (CLI, MCP server, HTTP API, app).

:class:`Archive` owns the cache (catalog + segments), keeps the searcher's snapshot
current, and answers queries from whatever snapshot is published: a query never
waits for indexing. Results are model objects with ``to_dict()`` in the MCP shapes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path

import numpy as np

from . import handoff, resume, snippets, usage
from .catalog import CatalogError
from .chains import parse_session_range
from .config import Config
from .errors import BadInput, NotFound
from .index.bm25 import Snapshot
from .indexer import Indexer
from .library import Library
from .model import Message, SearchHit, SessionInfo, Turn
from .reading import MessageReader
from .refs import format_reference, parse_reference
from .sources import all_sources
from .store import SEGMENTS_DIR, WriterLock, open_catalog, wipe_cache
from .tags import TagStore
from .timeutil import parse_ts, parse_user_time
from .tokenize import default_tokenizer, term_id
from .turns import build_turns
from .views import Conversation, IndexStats, MessageContext, Progress, Resolved, UpdateResult
from .watch import Watcher

MAX_LIMIT = 500
AROUND_WINDOW_SECONDS = 2 * 3600
MERGE_WAIT_ON_CLOSE = 10.0  # seconds; a merge of the whole index takes ~1 s


class Archive:
    """A person's transcripts, indexed. Thread-safe for queries."""

    def __init__(self, config: Config, *, writer: bool, now: Callable[[], float] | None = None) -> None:
        self.config = config
        self.cache = config.cache_path
        self._now = now or time.time
        self._lock = WriterLock(self.cache)
        self.writer = writer and self._lock.acquire()
        if not self.writer and not (self.cache / "catalog.sqlite").exists():
            self._wait_for_writer()
        catalog, self.rebuilt = open_catalog(self.cache, writer=self.writer)
        self.tags = TagStore(config.data_path)
        self._snapshot: Snapshot | None = None
        self._library: Library | None = None
        self._library_lock = threading.Lock()
        self._watcher: Watcher | None = None
        self._listeners: list[Callable[[UpdateResult], None]] = []
        self._first_index = threading.Event()  # set once the cache holds a first index
        self._closed = False
        self._attach(catalog)
        if self.writer:
            self.indexer.remove_orphan_segments()
        try:
            self._publish(self.indexer.load_snapshot())
        except (OSError, ValueError, CatalogError) as exc:
            if not self.writer:
                raise CatalogError(f"the cache is being rebuilt by another process: {exc}") from exc
            self.rebuilt = f"relay-search: rebuilding the cache (a segment was unreadable: {exc})"
            self._wipe()

    def _attach(self, catalog) -> None:
        self.catalog = catalog
        self.indexer = Indexer(self.config, catalog, self.cache / SEGMENTS_DIR, self._publish)
        self.reader = MessageReader(catalog)

    def _wipe(self) -> None:
        """Throw the cache away and start an empty one (the writer only)."""
        self.catalog.close()
        wipe_cache(self.cache)
        self._attach(open_catalog(self.cache, writer=True)[0])
        self._publish(self.indexer.load_snapshot())

    def _wait_for_writer(self) -> None:
        """Another process is creating the cache right now: wait briefly for it."""
        deadline = time.monotonic() + 5
        while time.monotonic() < deadline and not (self.cache / "catalog.sqlite").exists():
            time.sleep(0.05)

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
    ) -> Archive:
        archive = cls(config, writer=not read_only, now=now)
        if sync:
            archive.sync(progress=progress)
        elif not archive.writer or archive.catalog.files(("file_id",), "LIMIT 1"):
            archive._first_index.set()
        return archive

    def sync_in_background(self, progress: Callable[[Progress], None] | None = None) -> threading.Thread:
        """Catch up with the disk on a thread; queries answer from the cache meanwhile."""

        def run() -> None:
            try:
                self.sync(progress=progress)
            except Exception as exc:  # the watcher still runs; the next change retries
                if not self._closed:  # (closed under it: nothing to report)
                    logging.getLogger(__name__).warning("relay-search: background sync failed: %s", exc)
            finally:
                self._first_index.set()

        thread = threading.Thread(target=run, name="relay-search-sync", daemon=True)
        thread.start()
        return thread

    def wait_for_first_index(self, timeout: float) -> bool:
        """Block (at most ``timeout`` s) only while a never-indexed cache is being built.

        A server started on an empty cache should not answer "no results" in its
        first seconds; once any index exists, queries never wait.
        """
        return self._first_index.wait(timeout)

    def sync(self, paths: Iterable[Path] | None = None, progress: Callable[[Progress], None] | None = None) -> UpdateResult:
        """Bring the index up to date with the disk (all files, or these paths)."""
        if not self.writer:
            self._refresh_from_disk()
            return UpdateResult()
        result = self.indexer.sync(paths, progress)
        if paths is None:
            self._first_index.set()
        if self._watcher is not None:  # a long-lived process: keep segments few
            self.indexer.merge_in_background()
        if result.changed:
            for listener in list(self._listeners):
                listener(result)
        return result

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

    def start_watching(self, on_change: Callable[[UpdateResult], None] | None = None) -> None:
        if on_change is not None:
            self._listeners.append(on_change)
        if self._watcher is not None:
            return
        self.indexer.merge_in_background()
        roots = [root for source in all_sources(self.config.agents) for root in source.watch_roots(self.config)]
        if self.writer:
            self._watcher = Watcher(roots, lambda paths: self.sync(paths))
        else:
            self._watcher = Watcher([self.cache], lambda _: self._notify_external())
        self._watcher.start()

    def remove_listener(self, on_change: Callable[[UpdateResult], None]) -> None:
        """Stop calling ``on_change`` (an app closing while the archive lives on)."""
        if on_change in self._listeners:
            self._listeners.remove(on_change)

    def _notify_external(self) -> None:
        before = self.generation
        self._refresh_from_disk()
        if self.generation != before:
            for listener in list(self._listeners):
                listener(UpdateResult(changed_sessions=tuple(self.library.sessions)))

    def stop_watching(self) -> None:
        if self._watcher is not None:
            self._watcher.stop()
            self._watcher = None

    def close(self) -> None:
        self.stop_watching()
        # A merge still writing when the catalog closes would fail on its thread
        # (and a traceback from a daemon thread at interpreter exit is a crash).
        self.indexer.wait_for_merge(MERGE_WAIT_ON_CLOSE)
        self._closed = True
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
        except (OSError, ValueError):
            pass  # the writer is mid-merge; the next query tries again

    @property
    def generation(self) -> int:
        return self._snapshot.generation if self._snapshot else 0

    @property
    def library(self) -> Library:
        if not self.writer:
            self._refresh_from_disk()
        with self._library_lock:
            if self._library is None or self._library.generation != self.generation:
                self._library = Library(self.catalog, self.tags.all(), now=self._now())
            return self._library

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
    ) -> list[SearchHit]:
        limit = _check_limit(limit)
        ts_from = parse_user_time(date_from, name="date_from")  # bad input is an error even when nothing matches
        ts_to = parse_user_time(date_to, end_of_day=True, name="date_to")
        lib = self.library
        snapshot = self._snapshot
        terms = default_tokenizer().query_terms(query or "")
        if not terms or snapshot is None:
            return []
        ids = [term_id(t) for t in terms]
        allowed = None
        if project or slug or session_id or agent or user or tags:
            sessions = self._filter_sessions(lib, project=project, slug=slug, agent=agent, user=user, tags=tags)
            if session_id:
                wanted = {s.session_id for s in self.resolve(session_id).sessions}
                sessions = [s for s in sessions if s.session_id in wanted]
            allowed = np.array(lib.file_ids_for(s.session_id for s in sessions), dtype=np.int32)
            if allowed.shape[0] == 0:
                return []
        raw = snapshot.search(ids, limit * 3 + 10, allowed_files=allowed, ts_from=ts_from, ts_to=ts_to)
        return self._hits(lib, raw, terms, limit)

    def _hits(self, lib: Library, raw, terms: list[str], limit: int) -> list[SearchHit]:
        docs = self.catalog.docs([h.doc_id for h in raw])
        hits: list[SearchHit] = []
        seen: set[tuple[str, int | None]] = set()
        for h in raw:
            doc = docs.get(h.doc_id)
            entry = lib.files.get(h.file_id)
            if doc is None or entry is None:
                continue
            info = lib.sessions.get(entry.session_id)
            if info is None:
                continue
            if entry.primary and (not doc["side"] or entry.kind != "main"):
                turn = entry.turn_base + doc["turn"]
            else:
                turn = self._parent_turn(lib, entry.session_id, doc["ts"])
            key = (info.session_id, turn)
            if key in seen:
                continue
            seen.add(key)
            hits.append(
                SearchHit(
                    session_id=info.session_id,
                    slug=info.slug,
                    session_number=info.session_number,
                    project=info.project,
                    agent=info.agent,
                    turn_number=turn,
                    sequence=entry.seq_base + doc["first_seq"],
                    score=h.score,
                    snippet=snippets.snippet(doc["body"] or "", terms),
                    timestamp=doc["ts"],
                    ref=format_reference(slug=info.slug, session_id=info.session_id, numbers=[info.session_number or 1], turn=turn),
                    user=info.user,
                    is_sidechain=not entry.primary or (bool(doc["side"]) and entry.kind == "main"),
                    match_terms=tuple(terms),
                )
            )
            if len(hits) >= limit:
                break
        return hits

    def _parent_turn(self, lib: Library, session_id: str, ts: str | None) -> int | None:
        """The main-stream turn during which a subagent's work happened."""
        mains = [e for e in lib.session_files.get(session_id, ()) if e.kind == "main"]
        best = None
        for entry in mains:
            row = self.catalog.db.execute(
                "SELECT turn FROM docs WHERE file_id=? AND side=0 AND ts<=? ORDER BY ts DESC LIMIT 1", (entry.file_id, ts or "")
            ).fetchone()
            if row is not None:
                best = entry.turn_base + row[0]
        return best

    # --- sessions ----------------------------------------------------------------------

    def _filter_sessions(self, lib: Library, *, project=None, slug=None, agent=None, user=None, date_from=None, date_to=None, tags=None) -> list[SessionInfo]:
        sessions: Iterable[SessionInfo]
        if slug:
            key = lib.slugs.get(slug)
            sessions = list(lib.chains.get(key, [])) if key else []
        else:
            sessions = lib.sessions.values()
            if project:
                sessions = [s for s in sessions if s.project == project or s.project.endswith("/" + project)]
        if agent:
            sessions = [s for s in sessions if s.agent == agent]
        if user:
            sessions = [s for s in sessions if s.user == user]
        ts_from = parse_user_time(date_from, name="date_from")
        ts_to = parse_user_time(date_to, end_of_day=True, name="date_to")
        if ts_from is not None:
            sessions = [s for s in sessions if parse_ts(s.last_timestamp) >= ts_from]
        if ts_to is not None:
            sessions = [s for s in sessions if parse_ts(s.first_timestamp) <= ts_to]
        if tags:
            wanted = set(tags)
            sessions = [s for s in sessions if wanted & set(s.tags)]
        return list(sessions)

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
        lib = self.library
        sessions = self._filter_sessions(lib, project=project, slug=slug, agent=agent, user=user, date_from=date_from, date_to=date_to, tags=tags)
        if slug:
            sessions.sort(key=lambda s: s.session_number or 0)
        else:
            sessions.sort(key=lambda s: (s.last_timestamp or "", s.session_id), reverse=True)
        return sessions[offset : offset + limit]

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
        """Sessions (and maybe a turn) named by any reference form (SPEC §4)."""
        parsed = parse_reference(ref)
        lib = self.library
        key = lib.slugs.get(parsed.name)
        if key is not None:
            chain = tuple(lib.chains[key])
            if parsed.sessions:
                try:
                    picked = parse_session_range(parsed.sessions, len(chain))
                except ValueError as exc:
                    raise BadInput(str(exc)) from None
                sessions = tuple(chain[i] for i in picked)
            else:
                sessions = chain
            if parsed.turn is not None and len(sessions) != 1:
                raise BadInput(f"Bad reference {ref!r}: a turn needs exactly one session, e.g. {parsed.name}#{len(chain)}:{parsed.turn}")
            return Resolved(ref=ref, sessions=sessions, chain=chain, turn=parsed.turn, single=False)
        if parsed.sessions:
            raise NotFound(f"Unknown session_id: {parsed.name}")
        found = lib.find_ids(parsed.name)
        if not found:
            raise NotFound(f"Unknown session_id: {parsed.name}")
        if len(found) > 1:
            shown = ", ".join(found[:5])
            raise BadInput(f"Ambiguous session id prefix {parsed.name!r}: matches {len(found)} sessions ({shown}); give more characters")
        info = lib.sessions[found[0]]
        return Resolved(ref=ref, sessions=(info,), chain=tuple(lib.chain(info.session_id)), turn=parsed.turn, single=True)

    # --- reading -----------------------------------------------------------------------

    def session_messages(self, ref: str) -> list[Message]:
        """The whole stitched stream of one session (the first one a reference names)."""
        info = self.one_session(ref)
        return self.reader.session(self.library.session_files.get(info.session_id, []))

    def one_session(self, ref: str) -> SessionInfo:
        """The session a reading call on ``ref`` reads: the one named, or a chain's latest."""
        resolved = self.resolve(ref)
        if len(resolved.sessions) == 1 or resolved.single:
            return resolved.sessions[0]
        return resolved.sessions[-1]  # a whole chain: its latest session

    def turns(self, info: SessionInfo) -> list[Turn]:
        return build_turns(self.reader.session(self.library.session_files.get(info.session_id, [])))

    def read_turn(self, ref: str, turn_number: int | None = None) -> Turn:
        resolved = self.resolve(ref)
        number = turn_number if turn_number is not None else resolved.turn
        if number is None:
            raise BadInput("Which turn? Give turn_number or a reference like slug#4:12 or id:12")
        info = resolved.sessions[0] if len(resolved.sessions) == 1 else resolved.sessions[-1]
        turns = self.turns(info)
        total = info.turn_count
        if number < 0 or number >= len(turns):
            raise NotFound(f"Turn {number} out of range (session has {max(total, len(turns))} turns)")
        return turns[number]

    def get_conversation(
        self,
        ref: str,
        *,
        session: str | None = None,
        around_timestamp: str | None = None,
        roles: list[str] | None = None,
        offset: int = 0,
        limit: int | None = None,
    ) -> Conversation:
        resolved = self.resolve(ref)
        sessions = resolved.sessions
        if session and not resolved.single:
            try:
                picked = parse_session_range(session, len(resolved.chain))
            except ValueError as exc:
                raise BadInput(str(exc)) from None
            sessions = tuple(resolved.chain[i] for i in picked)
        turns: list[Turn] = []
        for info in sessions:
            turns.extend(self.turns(info))
        if resolved.turn is not None:
            turns = [t for t in turns if t.number == resolved.turn]
        if around_timestamp:
            center = parse_user_time(around_timestamp, name="around_timestamp")
            turns = [t for t in turns if abs(parse_ts(t.timestamp) - center) <= AROUND_WINDOW_SECONDS]
        if roles:
            turns = [_only_roles(t, set(roles)) for t in turns]
        total = len(turns)
        if offset < 0:
            raise BadInput("offset must be 0 or more")
        end = None if limit is None else offset + _check_limit(limit)
        return Conversation(sessions=tuple(sessions), turns=tuple(turns[offset:end]), total_turns=total, ref=self._ref_for(resolved, sessions))

    def _ref_for(self, resolved: Resolved, sessions) -> str:
        first = sessions[0]
        if resolved.single or not first.slug:
            return first.session_id
        return format_reference(slug=first.slug, session_id=first.session_id, numbers=[s.session_number for s in sessions], chain_length=len(resolved.chain))

    def get_message_context(self, ref: str, sequence: int, *, before: int = 5, after: int = 5, include_tool_outputs: bool = True) -> MessageContext:
        info = self.one_session(ref)
        messages = self.reader.session(self.library.session_files.get(info.session_id, []))
        if not include_tool_outputs:
            messages = [m for m in messages if m.type != "tool_result" or m.sequence == sequence]
        index = next((i for i, m in enumerate(messages) if m.sequence == sequence), None)
        if index is None:
            last = messages[-1].sequence if messages else -1
            raise NotFound(f"Sequence {sequence} out of range (session has messages 0-{last})")
        lo = max(0, index - max(0, before))
        hi = min(len(messages), index + 1 + max(0, after))
        return MessageContext(
            previous=tuple(messages[lo:index]),
            current=messages[index],
            following=tuple(messages[index + 1 : hi]),
            has_more_before=lo > 0,
            has_more_after=hi < len(messages),
            first_sequence=messages[lo].sequence,
            last_sequence=messages[hi - 1].sequence,
        )

    def iter_session_messages(self, ref: str, *, since: str | None = None, include_tools: bool = False, include_thinking: bool = False) -> Iterator[Message]:
        """Messages of one session, streamed file by file (SPEC §5 get_session_messages)."""
        info = self.one_session(ref)
        threshold = parse_user_time(since, name="since")
        files = list(self.library.session_files.get(info.session_id, []))

        def stream() -> Iterator[Message]:
            for message in self.reader.iter_session(files):
                if message.type in ("tool_use", "tool_result") and not include_tools:
                    continue
                if message.type == "thinking" and not include_thinking:
                    continue
                if threshold is not None and parse_ts(message.timestamp) <= threshold:
                    continue
                yield message

        return stream()

    def session_statistics(self, ref: str) -> dict:
        info = self.one_session(ref)
        messages = self.session_messages(info.session_id)
        tools: dict[str, int] = {}
        for m in messages:
            if m.type == "tool_use":
                tools[m.tool_name or "tool"] = tools.get(m.tool_name or "tool", 0) + 1
        return {
            "session_id": info.session_id,
            "turns": info.turn_count,
            "messages": len(messages),
            "tool_calls": sum(tools.values()),
            "tool_calls_by_name": dict(sorted(tools.items(), key=lambda kv: -kv[1])),
            "first_activity": info.first_timestamp,
            "last_activity": info.last_timestamp,
            "usage": self.session_usage(info.session_id).to_dict(),
        }

    # --- token usage and resuming (core.usage, core.resume do the work) --------------------

    def _usage_source(self) -> tuple[list[usage.Record], dict[int, usage.Owner]]:
        """Each API response once, and who owns each file (the team view reads its store)."""
        lib = self.library
        owners = usage.owners(self.catalog.files(("file_id", "agent", "session_id", "project_key")), lib.sessions)
        return usage.catalog_records(self.catalog, lib.generation), owners

    def usage_report(self, *, by: str = "day", date_from: str | None = None, date_to: str | None = None,
                     project: str | None = None, agent: str | None = None) -> usage.UsageReport:
        records, owners = self._usage_source()
        return usage.report(records, owners, by=by, date_from=date_from, date_to=date_to, project=project, agent=agent)

    def sessions_usage(self, session_ids: Iterable[str]) -> dict[str, usage.Totals]:
        """Tokens and estimated cost per session: every file of its id (subagents, pings)."""
        wanted = list(session_ids)
        files: dict[str, list[int]] = {sid: [] for sid in wanted}
        marks = ",".join("?" * len(wanted))
        for row in self.catalog.files(("file_id", "session_id"), f"WHERE session_id IN ({marks})", wanted) if wanted else ():
            files[row["session_id"]].append(row["file_id"])
        return {sid: usage.totals_of(usage.catalog_file_records(self.catalog, ids)) for sid, ids in files.items()}

    def session_usage(self, ref: str) -> usage.Totals:
        info = self.one_session(ref)
        return self.sessions_usage([info.session_id])[info.session_id]

    def resume_plan(self, ref: str) -> resume.ResumePlan:
        """The command that resumes ``ref`` in its agent (core.resume)."""
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
        db = self.catalog.db
        files = self.catalog.files(("path", "agent", "size", "skipped", "error"))
        snapshot = self._snapshot
        index_bytes = sum(p.stat().st_size for p in self.cache.rglob("*") if p.is_file() and not p.name.endswith(".lock"))
        agents: dict[str, int] = {}
        for s in self.library.sessions.values():
            agents[s.agent] = agents.get(s.agent, 0) + 1
        return IndexStats(
            files=len(files),
            sessions=len(self.library.sessions),
            turns=int(db.execute("SELECT coalesce(sum(turn_count), 0) FROM sessions").fetchone()[0]),
            documents=snapshot.n_docs if snapshot else 0,
            segments=len(snapshot.segments) if snapshot else 0,
            transcript_bytes=sum(max(0, f["size"]) for f in files),
            index_bytes=index_bytes,
            skipped_lines=sum(f["skipped"] for f in files),
            files_with_skips=tuple((f["path"], f["skipped"]) for f in files if f["skipped"]),
            errors=tuple((f["path"], f["error"]) for f in files if f["error"]),
            agents=agents,
        )


def _check_limit(limit: int) -> int:
    if not isinstance(limit, int) or limit < 1 or limit > MAX_LIMIT:
        raise BadInput(f"limit must be between 1 and {MAX_LIMIT}")
    return limit


def _only_roles(turn: Turn, roles: set[str]) -> Turn:
    from dataclasses import replace

    return replace(
        turn,
        user_text=turn.user_text if "user" in roles else "",
        assistant_text=turn.assistant_text if "assistant" in roles else "",
        tools_used=turn.tools_used if ("tool" in roles or "assistant" in roles) else (),
    )
