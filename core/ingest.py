"""One file in, its turn documents and term counts out — the unit of parallel work.

Runs in worker processes during a cold index and inline for live updates, so it
takes and returns only plain, picklable values and touches no shared state.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .index.postings import Postings, count_terms
from .model import FileMeta
from .sources import SourceFile, get_source
from .tokenize import default_tokenizer
from .turns import DocBuilder, TurnDoc


def uuid_hash(uuid: str) -> int:
    """A stable 63-bit hash of a record uuid (hex uuids take a fast path)."""
    compact = uuid.replace("-", "")
    if len(compact) >= 15:
        try:
            return int(compact[:15], 16)
        except ValueError:
            pass
    return int.from_bytes(hashlib.blake2b(uuid.encode(), digest_size=8).digest(), "little") >> 1


def uuid_hashes(uuids: list[str]) -> np.ndarray:
    return np.fromiter(map(uuid_hash, uuids), dtype=np.int64, count=len(uuids))


@dataclass(frozen=True, slots=True)
class Job:
    file: SourceFile
    offset: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    exclude: np.ndarray | None = None  # uuid hashes replayed from another session


@dataclass(slots=True)
class JobOutput:
    file: SourceFile
    size: int
    mtime_ns: int
    inode: int
    offset: int
    replace: bool
    meta: FileMeta
    skipped: int
    state: dict[str, Any]
    summaries: list[tuple[str, str]]
    hashes: np.ndarray
    docs: list[TurnDoc]
    postings: Postings
    n_messages: int
    n_turns: int
    error: str | None = None
    missing: bool = False


def run_job(job: Job) -> JobOutput:
    """Read a file from the job's offset and count the terms of the turns touched."""
    path = job.file.path
    try:
        stat = os.stat(path)
    except OSError:
        return _missing(job)
    source = get_source(job.file.agent)
    adapter_state = job.state.get("adapter") if job.offset else None
    try:
        result = source.read(job.file, offset=job.offset, state=adapter_state)
    except FileNotFoundError:
        return _missing(job)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        return _failed(job, stat, f"{type(exc).__name__}: {exc}")
    entries = result.entries
    if job.exclude is not None and job.exclude.shape[0]:
        excluded = set(job.exclude.tolist())
        entries = [e for e in entries if not (e.uuid and uuid_hash(e.uuid) in excluded)]
    builder = DocBuilder(None if result.replace else job.state.get("builder"))
    docs = builder.feed(entries)
    state = {"adapter": result.state, "builder": builder.state()}
    return JobOutput(
        file=job.file,
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
        inode=stat.st_ino,
        offset=result.offset,
        replace=result.replace,
        meta=result.meta,
        skipped=result.skipped,
        state=state,
        summaries=result.summaries,
        hashes=uuid_hashes(result.uuids),
        docs=docs,
        postings=count_terms(docs, default_tokenizer()),
        n_messages=builder.next_seq,
        n_turns=builder.turn + 1,
        error=result.error,
    )


def _missing(job: Job) -> JobOutput:
    out = _failed(job, None, None)
    out.missing = True
    return out


def _failed(job: Job, stat: os.stat_result | None, error: str | None) -> JobOutput:
    return JobOutput(
        file=job.file,
        size=stat.st_size if stat else 0,
        mtime_ns=stat.st_mtime_ns if stat else 0,
        inode=stat.st_ino if stat else 0,
        offset=0,
        replace=True,
        meta=FileMeta(),
        skipped=0,
        state={},
        summaries=[],
        hashes=np.zeros(0, dtype=np.int64),
        docs=[],
        postings=Postings.empty(),
        n_messages=0,
        n_turns=0,
        error=error,
    )


def run_jobs(jobs: list[Job]) -> list[JobOutput]:
    """A batch of jobs in one worker call (amortizes pickling and scheduling)."""
    return [run_job(job) for job in jobs]
