"""Pushing one user's parsed sessions into the team store, incrementally.

The local embedded :class:`~core.api.Archive` is the source of truth for what a
session is (its files, their order, continuation links, replayed records). For each
of its sessions the pusher compares every file with the file's row in the store
(byte offset, size, mtime, inode, adapter state) using the embedded indexer's own
rule (:meth:`Indexer._job_for`), so a file is read exactly as the local index would
read it: appended bytes from the stored offset, a rewritten file whole again.

A file read yields (via :func:`core.archive.ingest.run_job`, the same code the local index
runs) its touched turn passages with their term counts, and (via the local
:class:`~core.query.reading.MessageReader`) its full-text messages, of which only those
past the stored count are sent. Sessions go in batches; one batch is one
transaction that writes the rows *and* the new offsets, so a connection lost
mid-sync leaves the store at the last committed batch and the next run resumes
there — nothing lost, nothing twice (unique keys back that up).
"""

from __future__ import annotations

import socket
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path
from typing import TYPE_CHECKING, Any

import msgspec
import numpy as np
from msgspec.structs import replace

from core.archive.ingest import BODY_CHARS, Job, JobOutput, run_job
from core.archive.library import FileEntry
from core.model import Message
from core.sources import MAIN, SourceFile
from core.sources.fspath import display_text
from core.timeutil import parse_ts
from core.views import Progress

from .encode import clean, clean_opt, message_row, postings_binary, session_digest, to_json
from .schema import LOCK_KEY, ensure_schema

if TYPE_CHECKING:
    from core.api import Archive

BATCH_BYTES = 32 << 20  # bytes of transcript read per transaction
BATCH_SESSIONS = 200
VACUUM_AFTER_DOCS = 2000  # passages pushed in one run before the index tables are vacuumed
_encode_state = msgspec.msgpack.Encoder().encode

_LOCAL_FILE_COLS = ("file_id", "path", "agent", "kind", "project_key", "order_key", "session_id", "replay_of")
_MESSAGE_COLS = "file_id, idx, role, type, text, ts, uuid, parent_uuid, side, entry_index, turn, tool_name, tool_input, branch"
_DOC_COLS = "doc_id, file_id, turn, part, first_seq, last_seq, ts, ts_epoch, side, body, len_main, len_tool, seen"
@dataclass(slots=True)
class FilePlan:
    entry: FileEntry  # the local file, numbered from 0 (file-local sequence and turns)
    job: Job
    remote: dict[str, Any] | None  # the store's row for this path when planned
    replay_key: str | None
    size: int
    key: str  # the store's name for the file: its path, odd bytes escaped (core.sources.fspath)


@dataclass(slots=True)
class SessionPlan:
    session_id: str
    row: dict[str, Any]  # the local catalog's session row
    paths: list[str]  # its files, in session order
    digest: str
    files: list[FilePlan]

    @property
    def bytes(self) -> int:
        return sum(max(0, f.size - f.job.offset) for f in self.files)


@dataclass(slots=True)
class PushResult:
    sessions: int = 0
    files: int = 0
    messages: int = 0
    docs: int = 0
    failed: list[tuple[str, str]] = field(default_factory=list)  # (path, why)
    stale: int = 0  # sessions another sync of the same user changed meanwhile

    @property
    def changed(self) -> bool:
        return bool(self.sessions or self.files)


class Pusher:
    """Pushes ``archive``'s sessions for ``user`` over ``conn`` (autocommit)."""

    def __init__(
        self,
        archive: Archive,
        conn,
        user: str,
        *,
        progress: Callable[[Progress], None] | None = None,
        after_batch: Callable[[int], None] | None = None,
        batch_bytes: int = BATCH_BYTES,
        batch_sessions: int = BATCH_SESSIONS,
    ) -> None:
        self.archive = archive
        self.conn = conn
        self.user = user
        self.progress = progress
        self.after_batch = after_batch  # tests: fail or cut the connection between batches
        self.batch_bytes = batch_bytes
        self.batch_sessions = batch_sessions
        ensure_schema(conn)
        self.user_id = self._user_id()

    def _user_id(self) -> int:
        row = self.conn.execute(
            "INSERT INTO users(name) VALUES (%s) ON CONFLICT (name) DO UPDATE SET name=EXCLUDED.name RETURNING user_id",
            (self.user,),
        ).fetchone()
        return int(row[0])

    # --- planning ---------------------------------------------------------------------

    def plan(self) -> list[SessionPlan]:
        """Sessions with a file to read or a changed row, compared with the store."""
        archive = self.archive
        lib = archive.library
        local_rows = {r["session_id"]: r for r in archive.catalog.sessions()}
        local_files = {r["file_id"]: r for r in archive.catalog.files(_LOCAL_FILE_COLS)}
        cols = ("path", "session_id", "kind", "replay_key", "n_messages", "size", "mtime_ns", "inode", "read_offset", "state")
        remote_files = {
            r[0]: dict(zip(cols, r))
            for r in self.conn.execute(f"SELECT {', '.join(cols)} FROM files WHERE user_id=%s", (self.user_id,))
        }
        digests = dict(self.conn.execute("SELECT session_id, digest FROM sessions WHERE user_id=%s", (self.user_id,)).fetchall())
        plans = []
        for sid in lib.sessions:
            row = local_rows.get(sid)
            if row is None:
                continue
            entries = lib.session_files.get(sid, [])
            files = [p for p in (self._plan_file(sid, e, local_files, remote_files) for e in entries) if p is not None]
            paths = [display_text(e.path) for e in entries]
            digest = session_digest(row, paths)
            if files or digests.get(sid) != digest:
                plans.append(SessionPlan(sid, row, paths, digest, files))
        plans.sort(key=lambda p: (p.row.get("last_ts") or "", p.session_id))
        return plans

    def _plan_file(self, sid: str, entry: FileEntry, local_files: dict, remote_files: dict) -> FilePlan | None:
        f = local_files.get(entry.file_id)
        if f is None:
            return None
        main = f["kind"] == MAIN
        source = SourceFile(
            Path(f["path"]), f["agent"], f["kind"], f["project_key"],
            session_id=sid if main else None, parent_session_id=None if main else sid, order_key=f["order_key"],
        )  # fmt: skip
        replay = local_files.get(f["replay_of"]) if f["replay_of"] else None
        replay_key = display_text(replay["path"]) if replay else None
        key = display_text(f["path"])
        remote = remote_files.get(key)
        # What the store holds, in the shape of a catalog row; "nothing" forces a whole read.
        row = {"file_id": entry.file_id, "replay_of": f["replay_of"], "inode": -1, "offset": 0, "size": -1, "mtime_ns": -1, "state": None}
        if remote and remote["session_id"] == sid and remote["kind"] == f["kind"] and remote["replay_key"] == replay_key:
            row.update(inode=remote["inode"], offset=remote["read_offset"], size=remote["size"], mtime_ns=remote["mtime_ns"], state=remote["state"])
        job = self.archive.indexer.planner.job_for(source, row, entry.file_id)
        if job is None:
            return None
        # Numbered from 0 and read as if primary: the store keeps each file's own
        # numbering and raw sidechain flags; readers apply the session's bases.
        local = replace(entry, turn_base=0, seq_base=0, file_index=0, primary=True)
        try:
            size = source.path.stat().st_size
        except OSError:
            return None
        return FilePlan(local, job, remote, replay_key, size, key)

    # --- pushing ----------------------------------------------------------------------

    def push(self, plans: list[SessionPlan] | None = None) -> PushResult:
        """Push the planned sessions batch by batch; the next batch is read while the
        store writes the current one (parsing is Python, writing is the server)."""
        plans = self.plan() if plans is None else plans
        result = PushResult()
        total = len(plans)
        total_bytes = sum(p.bytes for p in plans)
        done = done_bytes = 0
        if self.progress and plans:
            self.progress(Progress(0, total, 0, total_bytes, phase="syncing"))
        batches = list(self._batches(plans))
        with ThreadPoolExecutor(1, thread_name_prefix="relay-search-push-read") as reader:
            ahead = reader.submit(self._read_batch, batches[0], result) if batches else None
            for number, batch in enumerate(batches):
                assert ahead is not None  # (one read is always ahead while batches remain)
                outputs = ahead.result()
                ahead = reader.submit(self._read_batch, batches[number + 1], result) if number + 1 < len(batches) else None
                with self.conn.transaction():
                    self._apply(batch, outputs, result)
                done += len(batch)
                done_bytes += sum(p.bytes for p in batch)
                if self.progress:
                    self.progress(Progress(done, total, min(done_bytes, total_bytes), total_bytes, phase="syncing"))
                if self.after_batch:
                    self.after_batch(number)
        if result.docs >= VACUUM_AFTER_DOCS:
            # Mark the new pages all-visible so searches stay index-only scans (a
            # member who does not own the tables gets a warning from the server, no error).
            self.conn.execute("VACUUM (ANALYZE) postings, docs")
        return result

    def _read_batch(self, batch: list[SessionPlan], result: PushResult) -> dict[int, Any]:
        return {id(fp): self._read(fp, result) for sp in batch for fp in sp.files}

    def _batches(self, plans: list[SessionPlan]) -> Iterator[list[SessionPlan]]:
        batch: list[SessionPlan] = []
        size = 0
        for plan in plans:
            batch.append(plan)
            size += plan.bytes
            if size >= self.batch_bytes or len(batch) >= self.batch_sessions:
                yield batch
                batch, size = [], 0
        if batch:
            yield batch

    def _read(self, fp: FilePlan, result: PushResult) -> tuple[JobOutput, list[Message], bool] | None:
        """The file's new passages (with term counts), its new messages, and whether
        they stand for the whole file; None when it cannot be read now."""
        out = run_job(fp.job)
        if out.missing:
            return None
        if out.error and out.n_messages == 0 and not out.docs:
            result.failed.append((fp.key, out.error))
            return None
        whole = out.replace or fp.job.offset == 0
        start = 0 if whole else fp.job.state.get("builder", {}).get("next_seq", 0)
        messages = list(islice(self.archive.reader.iter_file(fp.entry), start, out.n_messages))
        if len(messages) != out.n_messages - start:
            result.failed.append((fp.key, "the file changed while it was read; the next sync retries"))
            return None
        return out, messages, whole

    def _apply(self, batch: list[SessionPlan], outputs: dict[int, Any], result: PushResult) -> None:
        conn = self.conn
        conn.execute("SELECT pg_advisory_xact_lock(%s, %s)", (LOCK_KEY, self.user_id))
        fresh = self._locked_rows([fp.key for sp in batch for fp in sp.files])
        conn.execute("CREATE TEMP TABLE IF NOT EXISTS stage_messages (LIKE messages) ON COMMIT DELETE ROWS")
        delta = [0, 0.0, 0.0]  # docs, main length, tool length
        for sp in batch:
            if any(_moved(fp.remote, fresh.get(fp.key)) for fp in sp.files):
                result.stale += 1  # another sync for this user got there first
                continue
            for fp in sp.files:
                got = outputs.get(id(fp))
                if got is None:
                    continue
                out, messages, whole = got
                self._apply_file(fp, out, messages, whole, delta, result)
            self._upsert_session(sp)
            result.sessions += 1
        conn.execute(
            "UPDATE corpus SET n_docs=n_docs+%s, sum_main=sum_main+%s, sum_tool=sum_tool+%s WHERE id=1",
            (delta[0], delta[1], delta[2]),
        )
        conn.execute(
            "UPDATE users SET generation=generation+1, last_sync=now(), host=%s WHERE user_id=%s",
            (socket.gethostname(), self.user_id),
        )

    def _locked_rows(self, paths: list[str]) -> dict[str, dict]:
        cols = ("path", "read_offset", "n_messages", "inode", "size")
        rows = self.conn.execute(
            f"SELECT {', '.join(cols)} FROM files WHERE user_id=%s AND path = ANY(%s) FOR UPDATE", (self.user_id, paths)
        ).fetchall()
        return {r[0]: dict(zip(cols, r)) for r in rows}

    def _apply_file(self, fp: FilePlan, out: JobOutput, messages: list[Message], whole: bool, delta: list, result: PushResult) -> None:
        conn = self.conn
        file_id = None
        if fp.remote is not None:
            file_id = conn.execute("SELECT file_id FROM files WHERE user_id=%s AND path=%s", (self.user_id, fp.key)).fetchone()[0]
            if whole:
                conn.execute("DELETE FROM messages WHERE file_id=%s", (file_id,))
                gone = conn.execute("DELETE FROM docs WHERE file_id=%s RETURNING doc_id, len_main, len_tool", (file_id,)).fetchall()
            elif out.docs:
                gone = conn.execute(
                    "DELETE FROM docs WHERE file_id=%s AND (turn, part) IN (SELECT * FROM unnest(%s::int[], %s::int[])) "
                    "RETURNING doc_id, len_main, len_tool",
                    (file_id, [d.turn for d in out.docs], [d.part for d in out.docs]),
                ).fetchall()
            else:
                gone = []
            if gone:
                conn.execute("DELETE FROM postings WHERE doc_id = ANY(%s)", ([g[0] for g in gone],))
                delta[0] -= len(gone)
                delta[1] -= sum(g[1] for g in gone)
                delta[2] -= sum(g[2] for g in gone)
        file_id = self._upsert_file(fp, out, whole)
        if messages:
            # A file new to the store (or just emptied) has no rows to collide with:
            # straight in. Appends go through a staging table and ON CONFLICT.
            fresh = fp.remote is None or whole
            target = "messages" if fresh else "stage_messages"
            with conn.cursor().copy(f"COPY {target} ({_MESSAGE_COLS}) FROM STDIN") as copy:
                for m in messages:
                    copy.write_row(message_row(file_id, m))
            if not fresh:
                conn.execute("INSERT INTO messages SELECT * FROM stage_messages ON CONFLICT (file_id, idx) DO NOTHING")
                conn.execute("TRUNCATE stage_messages")
        if out.docs:
            self._insert_docs(file_id, out, delta)
        self._upsert_usage(file_id, out, whole)
        result.files += 1
        result.messages += len(messages)
        result.docs += len(out.docs)

    def _upsert_file(self, fp: FilePlan, out: JobOutput, whole: bool) -> int:
        f = fp.job.file
        row = self.conn.execute(
            """
            INSERT INTO files(user_id, path, session_id, agent, kind, project_key, order_key, replay_key, n_messages,
                              n_turns, size, mtime_ns, inode, read_offset, state, skipped, error)
            VALUES (%(user)s, %(path)s, %(sid)s, %(agent)s, %(kind)s, %(pkey)s, %(okey)s, %(replay)s, %(n_messages)s,
                    %(n_turns)s, %(size)s, %(mtime)s, %(inode)s, %(offset)s, %(state)s, %(skipped)s, %(error)s)
            ON CONFLICT (user_id, path) DO UPDATE SET
                session_id=EXCLUDED.session_id, agent=EXCLUDED.agent, kind=EXCLUDED.kind,
                project_key=EXCLUDED.project_key, order_key=EXCLUDED.order_key, replay_key=EXCLUDED.replay_key,
                n_messages=EXCLUDED.n_messages, n_turns=EXCLUDED.n_turns, size=EXCLUDED.size,
                mtime_ns=EXCLUDED.mtime_ns, inode=EXCLUDED.inode, read_offset=EXCLUDED.read_offset,
                state=EXCLUDED.state, error=EXCLUDED.error,
                skipped=CASE WHEN %(replace)s THEN EXCLUDED.skipped ELSE files.skipped + EXCLUDED.skipped END
            RETURNING file_id
            """,
            {
                "user": self.user_id, "path": fp.key, "sid": fp.entry.session_id, "agent": f.agent,
                "kind": f.kind, "pkey": f.project_key, "okey": f.order_key, "replay": fp.replay_key,
                "n_messages": out.n_messages, "n_turns": out.n_turns, "size": out.size, "mtime": out.mtime_ns,
                "inode": out.inode, "offset": out.offset, "state": _encode_state(out.state), "skipped": out.skipped,
                "error": clean(out.error) if out.error else None, "replace": whole,
            },
        ).fetchone()  # fmt: skip
        return int(row[0])

    def _upsert_usage(self, file_id: int, out: JobOutput, whole: bool) -> None:
        """The file's token usage, merged per response like the embedded catalog's."""
        if whole:
            self.conn.execute("DELETE FROM usage WHERE file_id=%s", (file_id,))
        if not out.usage:
            return
        with self.conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO usage(file_id, key, ts, model, input, output, cache_creation, cache_read) "
                "VALUES (%s, %s, %s, %s, %s, %s, %s, %s) ON CONFLICT (file_id, key) DO UPDATE SET "
                "input=GREATEST(usage.input, EXCLUDED.input), output=GREATEST(usage.output, EXCLUDED.output), "
                "cache_creation=GREATEST(usage.cache_creation, EXCLUDED.cache_creation), "
                "cache_read=GREATEST(usage.cache_read, EXCLUDED.cache_read), "
                "model=COALESCE(usage.model, EXCLUDED.model), ts=COALESCE(usage.ts, EXCLUDED.ts)",
                [(file_id, clean(u.key), u.timestamp, clean_opt(u.model), u.input_tokens, u.output_tokens,
                  u.cache_creation_tokens, u.cache_read_tokens) for u in out.usage],
            )

    def _insert_docs(self, file_id: int, out: JobOutput, delta: list) -> None:
        conn = self.conn
        n = len(out.docs)
        ids = np.array([r[0] for r in conn.execute("SELECT nextval('doc_ids') FROM generate_series(1, %s)", (n,))], dtype=np.int64)
        p = out.postings
        with conn.cursor().copy(f"COPY docs ({_DOC_COLS}) FROM STDIN") as copy:
            for i, d in enumerate(out.docs):
                copy.write_row((
                    int(ids[i]), file_id, d.turn, d.part, d.first_seq, d.last_seq, d.timestamp, parse_ts(d.timestamp),
                    bool(d.is_sidechain), clean(d.body[:BODY_CHARS]), float(p.len_main[i]), float(p.len_tool[i]),
                    clean(d.seen) if d.seen else None,
                ))  # fmt: skip
        if p.term.shape[0]:
            with conn.cursor().copy("COPY postings (term, field, doc_id, tf, dl) FROM STDIN (FORMAT BINARY)") as copy:
                copy.write(postings_binary(p, ids))
        delta[0] += n
        delta[1] += float(np.asarray(p.len_main, dtype=np.float64).sum())
        delta[2] += float(np.asarray(p.len_tool, dtype=np.float64).sum())

    def _upsert_session(self, sp: SessionPlan) -> None:
        conn = self.conn
        rows = conn.execute(
            "SELECT path, file_id, kind, n_messages, n_turns FROM files WHERE user_id=%s AND session_id=%s",
            (self.user_id, sp.session_id),
        ).fetchall()
        by_path = {r[0]: r for r in rows}
        ordered = [by_path[p] for p in sp.paths if p in by_path]
        r = sp.row
        extra = {k: v for k, v in r.items() if k != "file_ids"}
        conn.execute(
            """
            INSERT INTO sessions(user_id, session_id, agent, project_key, cwd, slug, title, summary, first_ts, last_ts,
                                 turn_count, message_count, file_ids, mtime_ns, extra, digest)
            VALUES (%s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s, %s)
            ON CONFLICT (user_id, session_id) DO UPDATE SET
                agent=EXCLUDED.agent, project_key=EXCLUDED.project_key, cwd=EXCLUDED.cwd, slug=EXCLUDED.slug,
                title=EXCLUDED.title, summary=EXCLUDED.summary, first_ts=EXCLUDED.first_ts, last_ts=EXCLUDED.last_ts,
                turn_count=EXCLUDED.turn_count, message_count=EXCLUDED.message_count, file_ids=EXCLUDED.file_ids,
                mtime_ns=EXCLUDED.mtime_ns, extra=EXCLUDED.extra, digest=EXCLUDED.digest
            """,
            (
                self.user_id, sp.session_id, r["agent"], r["project_key"], clean_opt(r.get("cwd")), clean_opt(r.get("slug")),
                clean_opt(r.get("title")), clean_opt(r.get("summary")), r.get("first_ts"), r.get("last_ts"),
                sum(o[4] for o in ordered if o[2] == MAIN), sum(o[3] for o in ordered), [o[1] for o in ordered],
                int(r.get("mtime_ns") or 0), to_json(extra), sp.digest,
            ),
        )  # fmt: skip


def _moved(planned: dict | None, now: dict | None) -> bool:
    """Did the file's row change between planning and this transaction?"""
    if planned is None:
        return now is not None
    if now is None:
        return True
    return any(planned[k] != now[k] for k in ("read_offset", "n_messages", "inode", "size"))
