"""Keeps the cache in step with the transcripts on disk.

``sync`` compares what the sources discover with what the catalog has read: new
files are read whole, grown files from their last offset, shrunk or replaced ones
(size below the offset, another inode) whole again, vanished ones removed. Each
batch of read files becomes one new segment plus catalog rows in one transaction,
then the searcher's snapshot is swapped — queries never wait for indexing and
never see half an update. Small segments are merged as they pile up.

This module orders that work, publishes snapshots and merges segments; deciding
what to read is core/archive/planning.py, recording what was read
core/archive/writing.py.
"""

from __future__ import annotations

import shutil
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from core.config import Config
from core.errors import SyncStopped
from core.index.bm25 import Snapshot
from core.index.retire import ReaderPins, delete_segments
from core.index.segment import load_segment, merge_segments, save_segment
from core.index.workers import available_cpus, make_pool, next_result, worker_count
from core.memory import release_freed_memory
from core.sources import discovery
from core.views import Progress, UpdateResult

from .catalog import Catalog
from .planning import Planner, plan_chunks, source_file
from .writing import Tally, Writer

# Imported where they are used, not here: a one-shot search with nothing changed on disk
# reads no file, so it loads no parser, no merge policy, no relinking (issue 35).
if TYPE_CHECKING:
    from concurrent.futures import Future

    from core.index.merge_policy import TieredPolicy

    from .ingest import ChunkOutput, Job

PARALLEL_MIN_BYTES = 48 << 20  # below this a pool costs more than it saves
CHUNK_BYTES = 48 << 20  # one worker task (and one segment) during a cold index
INLINE_CHUNK_BYTES = 64 << 20  # inline, results are published every ~this many bytes
FIRST_CHUNK_BYTES = 2 << 20  # the first chunk is small: a cold start shows results at once
MERGE_POLICY: TieredPolicy | None = None  # which segments a merge takes; None: core/index/merge_policy.py's default
BULK_CACHE_KB = 16 << 10  # the writer's SQLite page cache during a big sync (see _bulk_cache)


class Indexer:
    def __init__(self, config: Config, catalog: Catalog, segments_dir: Path, on_publish: Callable[[Snapshot], None]) -> None:
        self.config = config
        self.catalog = catalog
        self.segments_dir = segments_dir
        self.on_publish = on_publish
        self._sync_lock = threading.RLock()
        # Set when the archive closes (the app quits mid-index): a sync stops between
        # chunks, or while it waits on a worker, instead of reading everything first.
        self.closing = threading.Event()
        self._merge_lock = threading.Lock()
        self._merger: threading.Thread | None = None
        self._segments: dict[str, Any] = {}
        self.pins = ReaderPins(segments_dir.parent)
        self.planner = Planner(config, catalog)
        self.writer = Writer(config, catalog)

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
            self._check_open()
            started = time.perf_counter()
            dirs_before: dict[str, int] = {}
            dir_scan = None
            if paths is None:
                # Dirs are stat-ed (and recorded) before their files are looked at: a
                # file added meanwhile moves its dir's mtime past the recorded one.
                dirs_before = discovery.recorded_dirs(self.catalog.db)
                dir_scan = discovery.scan(self.planner.roots(), dirs_before)
            if dir_scan is not None and quick and dirs_before:
                known, paths = self.planner.quick_candidates(dir_scan)
            else:
                known = self.planner.known_files()
            jobs, gone = self.planner.plan(known, paths)
            total_bytes = sum(max(0, j.size - j.offset) for j in jobs)
            result = Tally()
            if gone:
                self._remove(gone, known, result)
            if jobs:
                self._run(jobs, total_bytes, known, result, progress)
            if result.need_links or (result.new_main and self._links_may_change(result.new_main)):
                self._relink(result)
            self.purge_retired()  # what an earlier merge could not delete yet
            if dir_scan is not None and dir_scan.dirs != dirs_before:
                with self.catalog.write() as db:
                    discovery.record(db, dirs_before, dir_scan)
            result.seconds = time.perf_counter() - started
            return result.freeze()

    def _run(self, jobs: list[Job], total_bytes: int, known: dict[str, dict], result: Tally, progress) -> None:
        done_files = done_bytes = 0
        total_files = len(jobs)

        def report(chunk: ChunkOutput) -> None:
            nonlocal done_files, done_bytes
            self._commit(chunk, known, result)
            for out in chunk.outputs:  # (a file is in one chunk of a sync, and relinking reads
                known.pop(str(out.file.path), None)  # rows afresh: 100,000 rows held ~25 MB)
            release_freed_memory()  # the chunk's output and jobs, freed: ~30 MB at 100,000 files
            done_files += len(chunk.outputs)
            done_bytes += sum(max(0, o.offset) for o in chunk.outputs)
            if progress:
                progress(Progress(done_files, total_files, min(done_bytes, total_bytes), total_bytes))

        if progress:
            progress(Progress(0, total_files, 0, total_bytes))
        cpus = available_cpus()
        parallel = total_bytes >= PARALLEL_MIN_BYTES and cpus >= 2
        chunk_bytes = CHUNK_BYTES if parallel else INLINE_CHUNK_BYTES
        chunks = deque(plan_chunks(jobs, chunk_bytes, FIRST_CHUNK_BYTES, workers=cpus if parallel else 1))
        # Each chunk's jobs are let go of once handed on: the plan of 100,000 files (their
        # paths and source files, ~90 MB) was otherwise held to the end of the sync.
        jobs.clear()
        first_chunk = self._reserve_chunks(len(chunks))
        ids = range(first_chunk, first_chunk + len(chunks))
        with self._bulk_cache(total_bytes >= PARALLEL_MIN_BYTES):
            if not parallel:
                for n in ids:
                    self._check_open()
                    report(run_chunk(n, chunks.popleft(), str(self.segments_dir)))
                return
            workers = worker_count(len(chunks))
            with make_pool(workers) as pool:
                # (not pool.map: on Ctrl-C its generator cancels the queued futures from
                # this thread, and the pool's own thread then failed them again when the
                # workers were stopped - Python 3.11 printed InvalidStateError)
                # A few chunks ahead of the writer, each let go of once committed: with every
                # chunk submitted at once the workers ran ahead of the commits and the finished
                # outputs (~9 MB of objects per 2,000 small files) piled up in the writer, and a
                # list of the futures kept them all (issue 25: 770 MB for 100,000 files).
                # Committed as they finish: chunks are independent (doc ids come from the
                # chunk ids reserved above, a session's files share a chunk).
                pending: set[Future[ChunkOutput]] = set()
                for n in ids:
                    if len(pending) >= 2 * workers:
                        report(next_result(pool, pending, self.closing))
                    self._check_open()
                    pending.add(pool.submit(run_chunk, n, chunks.popleft(), str(self.segments_dir)))
                while pending:
                    report(next_result(pool, pending, self.closing))

    def _check_open(self) -> None:
        # (raised, not returned: a sync cut short must not record the dirs as read)
        if self.closing.is_set():
            raise SyncStopped

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

    def _commit(self, chunk: ChunkOutput, known: dict[str, dict], result: Tally) -> None:
        """Record a chunk's files, documents and segment in one transaction, then publish."""
        self.writer.commit(chunk, known, result)
        self.on_publish(self.load_snapshot())

    def _remove(self, gone: list[str], known: dict[str, dict], result: Tally) -> None:
        self.writer.remove(gone, known, result)
        self.on_publish(self.load_snapshot())


    # --- continuation links and replayed records -------------------------------------------

    def _links_may_change(self, new_main: set[int]) -> bool:
        from .links import links_may_change

        return links_may_change(self.catalog, new_main)

    def _relink(self, result: Tally) -> None:
        """Link slug-less continuations and drop records replayed from older sessions."""
        from . import sessions as session_rows
        from .ingest import Job
        from .links import find_links

        links, summaries, rereads = find_links(self.catalog.link_rows())
        with self.catalog.write() as db:
            for row, replay_of in rereads:
                db.execute("UPDATE files SET replay_of=?, size=-1 WHERE file_id=?", (replay_of, row["file_id"]))
                db.execute("UPDATE link_keys SET replay_of=? WHERE file_id=?", (replay_of, row["file_id"]))
            changed = session_rows.apply_links(db, links, summaries)
            result.note(changed)
            self.writer.bump(db)
        if rereads:
            # Read those files again, now without the records they replay.
            known = self.planner.known_files()
            jobs = []
            for row, _ in rereads:
                fresh = known.get(row["path"])
                if fresh is None:
                    continue  # gone meanwhile: nothing to read
                file = source_file(fresh, self.catalog)
                if file:
                    jobs.append(Job(file, fresh["file_id"], exclude=self.planner.exclusion(fresh)))
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

    def merging(self) -> bool:
        return self._merger is not None and self._merger.is_alive()

    def wait_for_merge(self, timeout: float) -> None:
        """Let a background merge finish (before the catalog closes)."""
        if self._merger is not None and self._merger.is_alive():
            self._merger.join(timeout)

    def _merge_if_worth_it(self) -> None:
        self.merge_until_settled()

    def merge_until_settled(self, *, force: bool = False) -> None:
        """Merge what the tiered policy picks, one capped merge at a time, until it
        picks nothing (so memory is one merge's, however many segments a cold index
        left). ``force`` (``relay-search index``): merge whatever fits under the cap."""
        from core.index.merge_policy import DEFAULT_POLICY, pick_merge

        while True:
            snapshot = self.load_snapshot()
            segs = list(snapshot.segments)
            sizes = [seg.nbytes() for seg in segs]
            dead = [float((~a).sum()) / max(1, seg.n_docs) for seg, a in zip(segs, snapshot.alive, strict=True)]
            picked = pick_merge(sizes, dead, MERGE_POLICY or DEFAULT_POLICY, force=force)
            if not picked:
                return
            self.merge([segs[i] for i in picked], [snapshot.alive[i] for i in picked])

    def merge_all(self) -> None:
        """Compact as far as the merge cap allows (one segment for all but big archives)."""
        self.merge_until_settled(force=True)

    def merge(self, segments, alive) -> None:
        """Replace ``segments`` by one holding their alive documents.

        The merge itself runs outside any transaction: a sync meanwhile may add
        segments or tombstones (tombstones name doc ids, so they apply to the
        merged segment too); only the swap is one short transaction.
        """
        from .ingest import segment_name

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
                self.writer.bump(db)
            self.on_publish(self.load_snapshot())
            self.purge_retired()


def run_chunk(chunk_id: int, jobs: list[Job], segments_dir: str) -> ChunkOutput:
    """Read a chunk of files into one segment (:func:`core.archive.ingest.run_chunk`): a
    worker's task. The parsers load with the first chunk, not with this module."""
    from .ingest import run_chunk as read_chunk

    return read_chunk(chunk_id, jobs, segments_dir)
