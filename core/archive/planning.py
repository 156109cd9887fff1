"""Planning a sync: what changed on disk, and the jobs and chunks that read it.

Compares what the sources discover (or the paths a watcher names) with the rows
the catalog has read, and decides for each file whether to read it whole, from its
last offset, or not at all; then groups the jobs into chunks, newest sessions
first. Reads the catalog, never writes it: the indexer runs the jobs and
core/archive/writing.py records what they read.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import numpy as np

from core.config import Config
from core.sources import MAIN, SourceFile, all_sources, discovery, get_source
from core.sources.regular import is_regular

from .catalog import Catalog

if TYPE_CHECKING:
    from .ingest import Job

KNOWN_COLUMNS = ("file_id", "path", "agent", "kind", "session_id", "size", "mtime_ns", "inode", "offset", "replay_of", "error")

_decode_state = msgspec.msgpack.Decoder().decode


class Planner:
    """Decides which files a sync reads, and how (whole, from an offset, not at all)."""

    def __init__(self, config: Config, catalog: Catalog) -> None:
        self.config = config
        self.catalog = catalog

    def roots(self) -> list[Path]:
        return [root for source in all_sources(self.config.agents) for root in source.watch_roots(self.config)]

    def known_files(self) -> dict[str, dict]:
        return {row["path"]: row for row in self.catalog.files(KNOWN_COLUMNS)}

    def quick_candidates(self, found: discovery.DirScan) -> tuple[dict[str, dict], list[Path]]:
        """The catalog rows and paths a quick sync looks at (see core/sources/discovery.py)."""
        known: dict[str, dict] = {}
        paths: set[Path] = set()
        for directory, names in found.listed.items():
            for row in discovery.files_under(self.catalog, KNOWN_COLUMNS, directory, direct=True):
                known[row["path"]] = row
                paths.add(Path(row["path"]))  # still there (stat it) or gone (drop it)
            paths.update(Path(directory, name) for name in names)
        for directory in found.vanished:
            for row in discovery.files_under(self.catalog, KNOWN_COLUMNS, directory, direct=False):
                known[row["path"]] = row
            paths.add(Path(directory))
        for row in discovery.recent_files(self.catalog, KNOWN_COLUMNS, time.time_ns()):
            if row["path"] in known or discovery.moved(row):
                known[row["path"]] = row
                paths.add(Path(row["path"]))
        return known, sorted(paths)

    def plan(self, known: dict[str, dict], paths: Iterable[Path] | None) -> tuple[list[Job], list[str]]:
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
                    classified = source.classify(path, self.config)
                    if classified is not None:
                        found[str(classified.path)] = classified  # Ash: state.json and history.jsonl name context.jsonl
                        break
            if rescan:
                known.update(self.known_files())  # a quick sync's rows are only some of them
                return self.plan(known, None)
        jobs = []
        next_file = self.next_file_id()
        for key, file in found.items():
            row = known.get(key)
            try:
                stat = file.path.stat()
            except OSError:
                continue
            if not is_regular(stat.st_mode):  # a FIFO, a device: never read (core/sources/regular.py)
                if row is not None:
                    gone.append(key)
                continue
            job = self.job_for(file, row, next_file, stat)
            if job is not None:
                jobs.append(job)
                if row is None:
                    next_file += 1
        return jobs, gone

    def next_file_id(self) -> int:
        got = self.catalog.db.execute("SELECT max(file_id) FROM files").fetchone()[0]
        return (got or 0) + 1

    def job_for(self, file: SourceFile, row: dict | None, new_file_id: int, stat: os.stat_result | None = None) -> Job | None:
        if stat is None:
            try:
                stat = file.path.stat()
            except OSError:
                return None
            if not is_regular(stat.st_mode):
                return None
        size = stat.st_size
        if row is not None and stat.st_ino == row["inode"] and size == row["size"] and stat.st_mtime_ns == row["mtime_ns"]:
            return None  # unchanged (the common case: nothing else is looked at)
        from .ingest import Job, same_bytes_read  # (the parsers: loaded once a file is to be read)

        if row is None:
            return Job(file, new_file_id, size=size, mtime_ns=stat.st_mtime_ns)
        file_id = row["file_id"]
        exclude = self.exclusion(row)
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

    def exclusion(self, row: dict) -> np.ndarray | None:
        if not row.get("replay_of"):
            return None
        got = self.catalog.db.execute("SELECT record_hashes FROM files WHERE file_id=?", (row["replay_of"],)).fetchone()
        return np.frombuffer(got[0], dtype=np.int64) if got and got[0] else None


# Files in one chunk at most: a chunk's outputs are held until it is written, and many
# small files cost far more memory than their bytes (100,000 two-turn sessions in
# 64 MB chunks: ~9 KB a file, 770 MB for a cold `relay-search index`).
CHUNK_FILES = 2_000
TAIL_CHUNK_BYTES = 4 << 20  # the smallest of the shrinking last chunks (see plan_chunks)


def source_file(row: dict, catalog: Catalog) -> SourceFile | None:
    full = catalog.files(("path", "agent", "kind", "project_key", "order_key", "session_id"), "WHERE file_id=?", (row["file_id"],))
    if not full:
        return None
    r = full[0]
    main = r["kind"] == MAIN
    return SourceFile(
        Path(r["path"]), r["agent"], r["kind"], r["project_key"],
        session_id=r["session_id"] if main else None, parent_session_id=None if main else r["session_id"], order_key=r["order_key"],
    )


def plan_chunks(jobs: list[Job], chunk_bytes: int, first_bytes: int | None = None,
                max_files: int = CHUNK_FILES, workers: int = 1) -> list[list[Job]]:
    """Jobs grouped into chunks of about ``chunk_bytes`` to read, newest sessions first.

    Each chunk becomes a segment published as it lands, so on a cold start the
    sessions someone most likely wants are searchable first; the first chunks are
    small (``first_bytes``, growing fourfold) so that happens within moments. A
    session's files (main and subagents) stay together, in path order.

    The last chunks shrink ("guided" scheduling: each about the bytes left over
    ``workers``, down to :data:`TAIL_CHUNK_BYTES`), so the ``workers`` finish
    together: with full-size chunks to the end one worker read the last chunk alone
    while the others idled (0.2-0.25 s of a 2 s cold index of the 446 MB bench).
    """
    groups: dict[str, list[Job]] = {}
    for job in jobs:
        key = job.file.session_id or job.file.parent_session_id or str(job.file.path)
        groups.setdefault(key, []).append(job)
    ordered = sorted(groups.values(), key=lambda g: (-max(j.mtime_ns for j in g), min(str(j.file.path) for j in g)))
    left = sum(j.size - j.offset for j in jobs)
    chunks: list[list[Job]] = []
    current: list[Job] = []
    size = 0
    ramp = min(first_bytes or chunk_bytes, chunk_bytes)
    limit = _tail_limit(ramp, left, workers)
    for group in ordered:
        for job in sorted(group, key=lambda j: str(j.file.path)):
            current.append(job)
            size += job.size - job.offset
        if size >= limit or len(current) >= max_files:
            chunks.append(current)
            left -= size
            current, size = [], 0
            ramp = min(ramp * 4, chunk_bytes)
            limit = _tail_limit(ramp, left, workers)
    if current:
        chunks.append(current)
    return chunks


def _tail_limit(limit: int, left: int, workers: int) -> int:
    if workers <= 1:
        return limit
    return min(limit, max(TAIL_CHUNK_BYTES, left // workers))
