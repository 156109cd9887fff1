"""Keeps the cache in step with the transcripts on disk.

``sync`` compares what the sources discover with what the catalog has read: new
files are read whole, grown files from their last offset, shrunk or replaced ones
(size below the offset, another inode) whole again, vanished ones removed. Each
batch of read files becomes one new segment plus catalog rows in one transaction,
then the searcher's snapshot is swapped — queries never wait for indexing and
never see half an update. Small segments are merged as they pile up.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import msgspec
import numpy as np

from core.config import Config
from core.index.bm25 import Snapshot
from core.index.retire import ReaderPins, delete_segments
from core.index.segment import load_segment, merge_segments, save_segment
from core.index.workers import available_cpus, make_pool, worker_count
from core.sources import MAIN, SourceFile, all_sources, discovery, get_source
from core.sources.fspath import path_to_db
from core.views import Progress, UpdateResult

from . import sessions as session_rows
from . import usage_records as usage_rows
from .catalog import Catalog
from .ingest import BODY_CHARS, ChunkOutput, Job, JobOutput, run_chunk, same_bytes_read, segment_name
from .links import find_links

PARALLEL_MIN_BYTES = 48 << 20  # below this a pool costs more than it saves
CHUNK_BYTES = 48 << 20  # one worker task (and one segment) during a cold index
INLINE_CHUNK_BYTES = 64 << 20  # inline, results are published every ~this many bytes
FIRST_CHUNK_BYTES = 2 << 20  # the first chunk is small: a cold start shows results at once
MAX_SMALL_SEGMENTS = 8
BULK_CACHE_KB = 16 << 10  # the writer's SQLite page cache during a big sync (see _bulk_cache)

_KNOWN_COLUMNS = ("file_id", "path", "agent", "kind", "session_id", "size", "mtime_ns", "inode", "offset", "replay_of", "error")

_encode_state = msgspec.msgpack.Encoder().encode
_decode_state = msgspec.msgpack.Decoder().decode


class Indexer:
    def __init__(self, config: Config, catalog: Catalog, segments_dir: Path, on_publish: Callable[[Snapshot], None]) -> None:
        self.config = config
        self.catalog = catalog
        self.segments_dir = segments_dir
        self.on_publish = on_publish
        self._sync_lock = threading.RLock()
        self._merge_lock = threading.Lock()
        self._merger: threading.Thread | None = None
        self._segments: dict[str, Any] = {}
        self.pins = ReaderPins(segments_dir.parent)

    # --- snapshots -------------------------------------------------------------------

    def load_snapshot(self, verify: bool = False) -> Snapshot:
        """The catalog's current segments, mapped (see core/index/retire.py);
        ``verify``: checksum the ones not loaded yet."""
        with self.pins.reading():
            names, dead, generation = self.catalog.snapshot_rows()
            segments = []
            for name in names:
                seg = self._segments.get(name)
                if seg is None:
                    seg = load_segment(self.segments_dir / name, verify=verify)
                    self._segments[name] = seg
                segments.append(seg)
        for stale in set(self._segments) - set(names):
            self._segments.pop(stale, None)
        return Snapshot.create(segments, np.array(sorted(dead), dtype=np.int64), generation)

    def remove_orphan_segments(self) -> None:
        """Segment dirs no catalog row names (left by a writer killed mid-update),
        and retired ones no reader is opening any more."""
        self.purge_retired()
        known = set(self.catalog.segment_names()) | set(self.catalog.retired_names())
        if not self.segments_dir.exists():
            return
        for path in self.segments_dir.iterdir():
            if path.name not in known:
                shutil.rmtree(path, ignore_errors=True)

    def purge_retired(self) -> None:
        """Delete the segments merges replaced, unless a reader is opening a snapshot now."""
        names = self.catalog.retired_names()
        if not names:
            return
        with self.pins.deleting() as free:
            if not free:
                return  # a reader may be about to map one: the next merge or update retries
            delete_segments(self.segments_dir, names)
            with self.catalog.write() as db:
                db.executemany("DELETE FROM retired WHERE name=?", [(n,) for n in names])

    # --- sync --------------------------------------------------------------------------

    def sync(self, paths: Iterable[Path] | None = None, progress: Callable[[Progress], None] | None = None, *, quick: bool = False) -> UpdateResult:
        """Read what changed: these paths, or everything under the roots.

        ``quick`` (a one-shot CLI process): trust directory mtimes and look only at
        files in changed dirs and recently written ones (core/sources/discovery.py), so a
        call with nothing changed does not grow with the number of files.
        """
        with self._sync_lock:
            started = time.perf_counter()
            dirs_before: dict[str, int] = {}
            dir_scan = None
            if paths is None:
                # Dirs are stat-ed (and recorded) before their files are looked at: a
                # file added meanwhile moves its dir's mtime past the recorded one.
                dirs_before = discovery.recorded_dirs(self.catalog.db)
                dir_scan = discovery.scan(self._roots(), dirs_before)
            if dir_scan is not None and quick and dirs_before:
                known, paths = self._quick_candidates(dir_scan)
            else:
                known = self._known_files()
            jobs, gone = self._plan(known, paths)
            total_bytes = sum(max(0, j.size - j.offset) for j in jobs)
            result = _Tally()
            if gone:
                self._remove(gone, known, result)
            if jobs:
                self._run(jobs, total_bytes, known, result, progress)
            if result.need_links:
                self._relink(result)
            self.purge_retired()  # what an earlier merge could not delete yet
            if dir_scan is not None and dir_scan.dirs != dirs_before:
                with self.catalog.write() as db:
                    discovery.record(db, dirs_before, dir_scan)
            result.seconds = time.perf_counter() - started
            return result.freeze()

    def _roots(self) -> list[Path]:
        return [root for source in all_sources(self.config.agents) for root in source.watch_roots(self.config)]

    def _known_files(self) -> dict[str, dict]:
        return {row["path"]: row for row in self.catalog.files(_KNOWN_COLUMNS)}

    def _quick_candidates(self, found: discovery.DirScan) -> tuple[dict[str, dict], list[Path]]:
        """The catalog rows and paths a quick sync looks at (see core/sources/discovery.py)."""
        known: dict[str, dict] = {}
        paths: set[Path] = set()
        for directory, names in found.listed.items():
            for row in discovery.files_under(self.catalog, _KNOWN_COLUMNS, directory, direct=True):
                known[row["path"]] = row
                paths.add(Path(row["path"]))  # still there (stat it) or gone (drop it)
            paths.update(Path(directory, name) for name in names)
        for directory in found.vanished:
            for row in discovery.files_under(self.catalog, _KNOWN_COLUMNS, directory, direct=False):
                known[row["path"]] = row
            paths.add(Path(directory))
        for row in discovery.recent_files(self.catalog, _KNOWN_COLUMNS, time.time_ns()):
            if row["path"] in known or discovery.moved(row):
                known[row["path"]] = row
                paths.add(Path(row["path"]))
        return known, sorted(paths)

    def _plan(self, known: dict[str, dict], paths: Iterable[Path] | None) -> tuple[list[Job], list[str]]:
        sources = all_sources(self.config.agents)
        found: dict[str, SourceFile] = {}
        if paths is None:
            for source in sources:
                for file in source.discover(self.config):
                    found[str(file.path)] = file
            gone = [p for p in known if p not in found]
        else:
            gone = []
            rescan = False
            for path in {Path(p) for p in paths}:
                if path.is_dir():
                    rescan = True
                    continue
                if not path.exists():
                    prefix = str(path)
                    gone.extend(p for p in known if p == prefix or p.startswith(prefix + os.sep))
                    continue
                for source in sources:
                    file = source.classify(path, self.config)
                    if file is not None:
                        found[str(file.path)] = file  # Ash: state.json and history.jsonl name context.jsonl
                        break
            if rescan:
                known.update(self._known_files())  # a quick sync's rows are only some of them
                return self._plan(known, None)
        jobs = []
        next_file = self._next_file_id()
        for key, file in found.items():
            row = known.get(key)
            job = self._job_for(file, row, next_file)
            if job is not None:
                jobs.append(job)
                if row is None:
                    next_file += 1
        return jobs, gone

    def _next_file_id(self) -> int:
        got = self.catalog.db.execute("SELECT max(file_id) FROM files").fetchone()[0]
        return (got or 0) + 1

    def _job_for(self, file: SourceFile, row: dict | None, new_file_id: int) -> Job | None:
        try:
            stat = file.path.stat()
        except OSError:
            return None
        size = stat.st_size
        if row is None:
            return Job(file, new_file_id, size=size, mtime_ns=stat.st_mtime_ns)
        file_id = row["file_id"]
        if stat.st_ino == row["inode"] and size == row["size"] and stat.st_mtime_ns == row["mtime_ns"]:
            return None  # unchanged (the common case: nothing else is looked at)
        exclude = self._exclusion(row)
        if stat.st_ino != row["inode"] or size < row["offset"]:
            return Job(file, file_id, exclude=exclude, size=size, mtime_ns=stat.st_mtime_ns)  # rewritten or replaced: read whole again
        # The parser's saved state, read only for a file that changed (it holds the
        # open turn's text: loading every file's on each sync would cost more than
        # the append itself).
        if "state" in row:  # a caller that tracks offsets elsewhere (team sync) brings its own
            blob = row["state"]
        else:
            got = self.catalog.db.execute("SELECT state FROM files WHERE file_id=?", (file_id,)).fetchone()
            blob = got[0] if got else None
        state = _decode_state(blob) if blob else {}
        if not same_bytes_read(file.path, row["offset"], state):
            return Job(file, file_id, exclude=exclude, size=size, mtime_ns=stat.st_mtime_ns)  # rewritten in place (same inode, not shorter)
        if size == row["offset"] == row["size"] and get_source(file.agent).append_only:
            return None  # touched without new bytes: nothing more to read
        return Job(file, file_id, offset=row["offset"], state=state, exclude=exclude, size=size, mtime_ns=stat.st_mtime_ns)

    def _exclusion(self, row: dict) -> np.ndarray | None:
        if not row.get("replay_of"):
            return None
        got = self.catalog.db.execute("SELECT record_hashes FROM files WHERE file_id=?", (row["replay_of"],)).fetchone()
        return np.frombuffer(got[0], dtype=np.int64) if got and got[0] else None

    def _run(self, jobs: list[Job], total_bytes: int, known: dict[str, dict], result: _Tally, progress) -> None:
        done_files = done_bytes = 0
        total_files = len(jobs)

        def report(chunk: ChunkOutput) -> None:
            nonlocal done_files, done_bytes
            self._commit(chunk, known, result)
            done_files += len(chunk.outputs)
            done_bytes += sum(max(0, o.offset) for o in chunk.outputs)
            if progress:
                progress(Progress(done_files, total_files, min(done_bytes, total_bytes), total_bytes))

        if progress:
            progress(Progress(0, total_files, 0, total_bytes))
        parallel = total_bytes >= PARALLEL_MIN_BYTES and available_cpus() >= 2
        chunks = _chunks(jobs, CHUNK_BYTES if parallel else INLINE_CHUNK_BYTES, FIRST_CHUNK_BYTES)
        first_chunk = self._reserve_chunks(len(chunks))
        with self._bulk_cache(total_bytes >= PARALLEL_MIN_BYTES):
            if not parallel:
                for n, chunk in enumerate(chunks):
                    report(run_chunk(first_chunk + n, chunk, str(self.segments_dir)))
                return
            ids = [first_chunk + n for n in range(len(chunks))]
            with make_pool(worker_count(len(chunks))) as pool:
                for chunk in pool.map(run_chunk, ids, chunks, [str(self.segments_dir)] * len(chunks)):
                    report(chunk)

    @contextmanager
    def _bulk_cache(self, bulk: bool) -> Iterator[None]:
        """A bigger SQLite page cache for the writer while a big sync lasts.

        Each chunk's commit touches pages all over the usage and file indexes; with
        SQLite's default 2 MB cache most were read back from the file every time
        (a cold index spent ~0.4 s of the writer's CPU in pread). Put back after,
        so a long-lived process does not keep the pages.
        """
        if not bulk:
            yield
            return
        db = self.catalog.db
        before = db.execute("PRAGMA cache_size").fetchone()[0]
        db.execute(f"PRAGMA cache_size=-{BULK_CACHE_KB}")
        try:
            yield
        finally:
            db.execute(f"PRAGMA cache_size={int(before)}")

    def _reserve_chunks(self, n: int) -> int:
        """Chunk ids name segments and seed doc ids; reserved before workers start."""
        with self.catalog.write() as db:
            first = int(self.catalog.get_meta("segment_counter", "0") or 0) + 1
            Catalog.set_meta(db, "segment_counter", str(first + n - 1))
        return first

    # --- committing ---------------------------------------------------------------------

    def _commit(self, chunk: ChunkOutput, known: dict[str, dict], result: _Tally) -> None:
        """Record a chunk's files, documents and segment in one transaction."""
        affected: set[str] = set()
        doc_rows: list[tuple] = []
        with self.catalog.write() as db:
            for out in chunk.outputs:
                key = str(out.file.path)
                row = known.get(key)
                if out.missing:
                    if row:
                        self._drop_file(db, row["file_id"], affected, row.get("session_id"))
                        known.pop(key, None)
                    continue
                file_id = self._upsert_file(db, out, row)
                known[key] = {**(row or {}), "file_id": file_id, "path": key, "session_id": out.meta.session_id}
                if row and row.get("session_id") and row["session_id"] != out.meta.session_id:
                    affected.add(row["session_id"])
                if out.meta.session_id:
                    affected.add(out.meta.session_id)
                if row is None:
                    pass  # a new file has no documents to replace
                elif out.replace:
                    _tombstone(db, "SELECT doc_id FROM docs WHERE file_id=?", (file_id,))
                    db.execute("DELETE FROM docs WHERE file_id=?", (file_id,))
                elif out.docs:
                    # an append re-emits the passages it changed: replace those
                    keys = [(file_id, d.turn, d.part) for d in out.docs]
                    db.executemany("INSERT OR IGNORE INTO tombstones(doc_id) SELECT doc_id FROM docs WHERE file_id=? AND turn=? AND part=?", keys)
                    db.executemany("DELETE FROM docs WHERE file_id=? AND turn=? AND part=?", keys)
                usage_rows.store(db, file_id, out.usage, replace=row is not None and out.replace)
                doc_rows.extend(
                    (doc_id, file_id, d.turn, d.part, d.first_seq, d.last_seq, d.timestamp, int(d.is_sidechain), d.body[:BODY_CHARS])
                    for doc_id, d in zip(out.doc_ids.tolist(), out.docs)
                )
                result.files_read += 1
                result.bytes_read += out.offset - ((row or {}).get("offset") or 0) if not out.replace else out.offset
                result.skipped += out.skipped
                if out.summaries or (out.replace and out.file.kind == MAIN):
                    result.need_links = True
            db.executemany(
                "INSERT INTO docs(doc_id, file_id, turn, part, first_seq, last_seq, ts, side, body) VALUES(?,?,?,?,?,?,?,?,?)",
                doc_rows,
            )
            if chunk.segment:
                db.execute("INSERT INTO segments(name, n_docs) VALUES(?, ?)", (chunk.segment, chunk.n_docs))
            result.note(session_rows.rebuild(db, affected, self.config))
            self._bump(db)
        self.on_publish(self.load_snapshot())

    def _upsert_file(self, db, out: JobOutput, row: dict | None) -> int:
        summaries = json.dumps(out.summaries) if out.summaries else None
        reasons = out.reasons
        if row is None or out.replace:
            hashes = out.hashes.tobytes() if out.hashes.shape[0] else None
            records = out.record_hashes.tobytes() if out.record_hashes.shape[0] else None
            skipped = out.skipped
        else:
            old = db.execute(
                "SELECT uuid_hashes, skipped, summaries, record_hashes, skip_reasons FROM files WHERE file_id=?",
                (row["file_id"],),
            ).fetchone()
            hashes = (old[0] or b"") + out.hashes.tobytes()
            records = (old[3] or b"") + out.record_hashes.tobytes()
            skipped = (old[1] or 0) + out.skipped
            reasons = _add_counts(json.loads(old[4]) if old[4] else {}, out.reasons)
            if old[2]:
                summaries = json.dumps(json.loads(old[2]) + out.summaries) if out.summaries else old[2]
        values = dict(
            path=path_to_db(str(out.file.path)), agent=out.file.agent, kind=out.file.kind, project_key=out.file.project_key,
            order_key=out.file.order_key, session_id=out.meta.session_id, size=out.size, mtime_ns=out.mtime_ns,
            inode=out.inode, offset=out.offset, skipped=skipped,
            skip_reasons=json.dumps(reasons, sort_keys=True) if reasons else None, error=out.error, n_messages=out.n_messages,
            n_turns=out.n_turns, meta=out.meta_json or json.dumps(msgspec.to_builtins(out.meta)),
            state=out.state_blob or _encode_state(out.state), summaries=summaries, uuid_hashes=hashes,
            record_hashes=records,
        )
        if row is None:
            values = {"file_id": out.file_id, **values}
            cols = ", ".join(values)
            marks = ", ".join("?" * len(values))
            db.execute(f"INSERT INTO files({cols}) VALUES({marks})", tuple(values.values()))
            return out.file_id
        sets = ", ".join(f"{k}=?" for k in values)
        db.execute(f"UPDATE files SET {sets} WHERE file_id=?", (*values.values(), row["file_id"]))
        return int(row["file_id"])

    def _drop_file(self, db, file_id: int, affected: set[str], session_id: str | None) -> None:
        _tombstone(db, "SELECT doc_id FROM docs WHERE file_id=?", (file_id,))
        db.execute("DELETE FROM docs WHERE file_id=?", (file_id,))
        db.execute("DELETE FROM files WHERE file_id=?", (file_id,))
        usage_rows.drop(db, file_id)
        if session_id:
            affected.add(session_id)

    def _remove(self, gone: list[str], known: dict[str, dict], result: _Tally) -> None:
        affected: set[str] = set()
        with self.catalog.write() as db:
            for path in gone:
                row = known.pop(path, None)
                if row:
                    self._drop_file(db, row["file_id"], affected, row.get("session_id"))
            changed = session_rows.rebuild(db, affected, self.config)
            result.note(changed)
            self._bump(db)
        result.need_links = True
        self.on_publish(self.load_snapshot())

    def _bump(self, db) -> None:
        generation = int(self.catalog.get_meta("generation", "0") or 0) + 1
        Catalog.set_meta(db, "generation", str(generation))

    # --- continuation links and replayed records -------------------------------------------

    def _relink(self, result: _Tally) -> None:
        """Link slug-less continuations and drop records replayed from older sessions."""
        rows = self.catalog.files(("file_id", "path", "session_id", "uuid_hashes", "record_hashes", "summaries", "replay_of"), "WHERE kind='main'")
        links, summaries, rereads = find_links(rows)
        with self.catalog.write() as db:
            for row, replay_of in rereads:
                db.execute("UPDATE files SET replay_of=?, size=-1 WHERE file_id=?", (replay_of, row["file_id"]))
            changed = session_rows.apply_links(db, links, summaries)
            result.note(changed)
            self._bump(db)
        if rereads:
            # Read those files again, now without the records they replay.
            known = self._known_files()
            jobs = []
            for row, _ in rereads:
                fresh = known.get(row["path"])
                file = _source_file(fresh or row, self.catalog)
                if fresh and file:
                    jobs.append(Job(file, fresh["file_id"], exclude=self._exclusion(fresh)))
            if jobs:
                chunk_id = self._reserve_chunks(1)
                self._commit(run_chunk(chunk_id, jobs, str(self.segments_dir)), known, result)
        else:
            self.on_publish(self.load_snapshot())

    # --- merging ---------------------------------------------------------------------------

    def merge_in_background(self) -> None:
        """Merge small segments (and purge dead documents) on a thread, if worth it.

        Long-lived processes (app, servers) call this after syncs; queries go on
        using the published snapshot until the merged segment is swapped in.
        """
        if self._merger is not None and self._merger.is_alive():
            return
        self._merger = threading.Thread(target=self._merge_if_worth_it, name="relay-search-merge", daemon=True)
        self._merger.start()

    def wait_for_merge(self, timeout: float) -> None:
        """Let a background merge finish (before the catalog closes)."""
        if self._merger is not None and self._merger.is_alive():
            self._merger.join(timeout)

    def _merge_if_worth_it(self) -> None:
        snapshot = self.load_snapshot()
        segs = list(snapshot.segments)
        if len(segs) <= 1:
            if segs and snapshot.dead_count() > 0.25 * max(1, segs[0].n_docs):
                self.merge(segs, list(snapshot.alive))
            return
        sizes = [s.n_docs for s in segs]
        biggest = max(range(len(segs)), key=sizes.__getitem__)
        dead_big = int((~snapshot.alive[biggest]).sum())
        if dead_big > 0.25 * max(1, sizes[biggest]):
            picked = list(range(len(segs)))
        elif len(segs) > MAX_SMALL_SEGMENTS:
            picked = [i for i in range(len(segs)) if i != biggest]
        else:
            return
        self.merge([segs[i] for i in picked], [snapshot.alive[i] for i in picked])

    def merge_all(self) -> None:
        snapshot = self.load_snapshot()
        if len(snapshot.segments) > 1 or snapshot.dead_count():
            self.merge(list(snapshot.segments), list(snapshot.alive))

    def merge(self, segments, alive) -> None:
        """Replace ``segments`` by one holding their alive documents.

        The merge itself runs outside any transaction: a sync meanwhile may add
        segments or tombstones (tombstones name doc ids, so they apply to the
        merged segment too); only the swap is one short transaction.
        """
        with self._merge_lock:
            name = segment_name(self._reserve_chunks(1))
            merged = merge_segments(name, segments, alive)
            save_segment(merged, self.segments_dir)
            old = [s.name for s in segments]
            gone_ids = np.concatenate([np.asarray(s.doc_ids)[~a] for s, a in zip(segments, alive)]) if segments else np.zeros(0)
            with self.catalog.write() as db:
                db.executemany("DELETE FROM segments WHERE name=?", [(n,) for n in old])
                db.executemany("INSERT OR IGNORE INTO retired(name) VALUES(?)", [(n,) for n in old])
                db.execute("INSERT INTO segments(name, n_docs) VALUES(?, ?)", (name, merged.n_docs))
                db.executemany("DELETE FROM tombstones WHERE doc_id=?", [(int(d),) for d in gone_ids.tolist()])
                self._bump(db)
            self.on_publish(self.load_snapshot())
            self.purge_retired()


class _Tally:
    def __init__(self) -> None:
        self.changed: set[str] = set()
        self.removed: set[str] = set()
        self.new: set[str] = set()
        self.files_read = 0
        self.bytes_read = 0
        self.skipped = 0
        self.need_links = False
        self.seconds = 0.0

    def note(self, changed: session_rows.Changes) -> None:
        self.changed |= changed.changed
        self.removed |= changed.removed
        self.new |= changed.new

    def freeze(self) -> UpdateResult:
        return UpdateResult(
            changed_sessions=tuple(sorted(self.changed - self.removed)),
            removed_sessions=tuple(sorted(self.removed)),
            new_sessions=tuple(sorted(self.new - self.removed)),
            files_read=self.files_read,
            bytes_read=self.bytes_read,
            skipped_lines=self.skipped,
        )


def _add_counts(old: dict[str, int], new: dict[str, int]) -> dict[str, int]:
    total = dict(old)
    for reason, n in new.items():
        total[reason] = total.get(reason, 0) + n
    return total


def _tombstone(db, select_sql: str, args: tuple) -> None:
    db.execute(f"INSERT OR IGNORE INTO tombstones(doc_id) {select_sql}", args)


def _source_file(row: dict, catalog: Catalog) -> SourceFile | None:
    full = catalog.files(("path", "agent", "kind", "project_key", "order_key", "session_id"), "WHERE file_id=?", (row["file_id"],))
    if not full:
        return None
    r = full[0]
    return SourceFile(Path(r["path"]), r["agent"], r["kind"], r["project_key"], session_id=r["session_id"] if r["kind"] == MAIN else None, parent_session_id=r["session_id"] if r["kind"] != MAIN else None, order_key=r["order_key"])


def _chunks(jobs: list[Job], chunk_bytes: int, first_bytes: int | None = None) -> list[list[Job]]:
    """Jobs grouped into chunks of about ``chunk_bytes`` to read, newest sessions first.

    Each chunk becomes a segment published as it lands, so on a cold start the
    sessions someone most likely wants are searchable first; the first chunks are
    small (``first_bytes``, growing fourfold) so that happens within moments. A
    session's files (main and subagents) stay together, in path order.
    """
    groups: dict[str, list[Job]] = {}
    for job in jobs:
        key = job.file.session_id or job.file.parent_session_id or str(job.file.path)
        groups.setdefault(key, []).append(job)
    ordered = sorted(groups.values(), key=lambda g: (-max(j.mtime_ns for j in g), min(str(j.file.path) for j in g)))
    chunks: list[list[Job]] = []
    current: list[Job] = []
    size = 0
    limit = min(first_bytes or chunk_bytes, chunk_bytes)
    for group in ordered:
        for job in sorted(group, key=lambda j: str(j.file.path)):
            current.append(job)
            size += job.size - job.offset
        if size >= limit:
            chunks.append(current)
            current, size = [], 0
            limit = min(limit * 4, chunk_bytes)
    if current:
        chunks.append(current)
    return chunks
