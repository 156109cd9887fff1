"""One file in, its turn documents and term counts out — the unit of parallel work.

Runs in worker processes during a cold index and inline for live updates, so it
takes and returns only plain, picklable values and touches no shared state.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass, field
from itertools import repeat
from pathlib import Path
from typing import Any

import msgspec
import numpy as np
from msgspec.structs import replace

from core.index import vocab
from core.index.document import TurnDoc
from core.index.postings import Postings, count_terms
from core.index.segment import Segment, build_from_coo, save_segment
from core.index.tokenize import default_tokenizer
from core.model import FileMeta, Usage
from core.sources import MAIN, SourceFile, get_source
from core.sources.regular import open_regular
from core.timeutil import parse_ts

from . import usage_records as usage_rows
from .turns import DocBuilder

# What the catalog keeps of a document's prompt and answer, for snippets.
BODY_CHARS = 8000
CHUNK_SHIFT = 24  # doc ids are chunk_id << 24 | position: workers need no shared counter


def uuid_hash(uuid: str) -> int:
    """A stable 63-bit hash of a record uuid, folded from all 128 bits.

    (Hand-made uuids in test data share long prefixes and suffixes, so no slice of
    the digits is safe to use alone.)
    """
    compact = uuid.replace("-", "")
    if len(compact) == 32:
        try:
            value = int(compact, 16)
            return ((value >> 64) ^ (value & 0xFFFFFFFFFFFFFFFF)) >> 1
        except ValueError:
            pass
    return int.from_bytes(hashlib.blake2b(uuid.encode(), digest_size=8).digest(), "little") >> 1


def uuid_hashes(uuids: list[str]) -> np.ndarray:
    """:func:`uuid_hash` of each, a file's at once: uuids (hex) or record keys (``uuid@digest``).

    A file's uuids are parsed as one hex string, its record keys hashed in one list;
    a file mixing the two kinds, or holding a uuid that is not plain hex, takes
    :func:`uuid_hash` one at a time. (Per uuid, in Python, this was 2% of a cold index.)
    """
    n = len(uuids)
    compact = np.fromiter(map(len, uuids), np.int64, n) - np.fromiter(map(str.count, uuids, repeat("-")), np.int64, n)
    if (compact == 32).all():
        try:
            raw = bytes.fromhex("".join(uuids).replace("-", ""))
        except ValueError:  # (int() reads a few forms fromhex does not: "0x", "_", other digits)
            raw = b""
        if len(raw) == 16 * n:  # (fromhex skips whitespace, which int() would not take)
            halves = np.frombuffer(raw, dtype=">u8").reshape(n, 2)
            return ((halves[:, 0] ^ halves[:, 1]) >> 1).astype(np.int64)
    elif not (compact == 32).any():
        digests = b"".join([hashlib.blake2b(uuid.encode(), digest_size=8).digest() for uuid in uuids])
        return (np.frombuffer(digests, dtype="<u8") >> 1).astype(np.int64)
    return np.fromiter(map(uuid_hash, uuids), dtype=np.int64, count=n)


@dataclass(frozen=True, slots=True)
class Job:
    """One file to read, from a byte offset (0 for a new file)."""

    file: SourceFile
    file_id: int
    offset: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    exclude: np.ndarray | None = None  # record hashes (uuid and content) replayed from another session
    size: int = 0  # the file's size when the job was planned (progress, chunking)
    mtime_ns: int = 0  # when it was last written (a cold index reads the newest first)


_encode_usage = msgspec.msgpack.Encoder().encode
_decode_usage = msgspec.msgpack.Decoder(list[Usage]).decode


@dataclass(slots=True)
class JobOutput:
    """What a worker read from one file: its documents, messages, usage and skipped lines."""

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
    record_hashes: np.ndarray  # of uuid and content (ReadResult.record_keys)
    docs: list[TurnDoc]
    postings: Postings
    n_messages: int
    n_turns: int
    file_id: int = 0
    doc_ids: np.ndarray | None = None
    meta_json: str = ""  # catalog encodings, made here so the writer only stores them
    state_blob: bytes = b""
    error: str | None = None
    missing: bool = False
    reasons: dict[str, int] = field(default_factory=dict)  # why the skipped lines were skipped
    usage: list[Usage] = field(default_factory=list)  # token usage of the responses read

    # Sent from a pool worker with the usage as one msgpack blob: pickling tens of
    # thousands of msgspec structs one at a time cost a cold index more than storing them.
    def __getstate__(self) -> dict[str, Any]:
        state = {name: getattr(self, name) for name in self.__slots__}
        state["usage"] = _encode_usage(self.usage)
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        for name, value in state.items():
            object.__setattr__(self, name, _decode_usage(value) if name == "usage" else value)


def run_job(job: Job) -> JobOutput:
    """Read a file from the job's offset and count the terms of the turns touched.

    Whatever goes wrong with one file is that file's error (listed by ``index
    --stats``, retried when the file changes); it never reaches the sync, and so
    never costs another file. (Adapters already skip and count a bad line; this is
    the last line of defence against a failure nobody foresaw.)
    """
    try:
        return _run_job(job)
    except Exception as exc:
        try:
            stat = os.stat(job.file.path)
        except OSError:
            return _missing(job)
        return _failed(job, stat, f"{type(exc).__name__}: {exc}"[:500])


def _run_job(job: Job) -> JobOutput:
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
    except (OSError, ValueError) as exc:
        return _failed(job, stat, f"{type(exc).__name__}: {exc}")
    entries = result.entries
    meta = result.meta
    # kept whole (a replayed response shares its key and is counted once), merged per
    # response: the writer stores half as many rows, and pickling them cost the pool
    usage = usage_rows.merge(result.usage)
    if job.exclude is not None and job.exclude.shape[0]:
        excluded = set(job.exclude.tolist())
        entries = [e for e in entries if not (e.record_key and uuid_hash(e.record_key) in excluded)]
        # The session starts where its own records start, not at the replayed ones
        # (remembered across incremental reads, which only see the new records).
        own = [e.timestamp for e in entries if e.timestamp]
        own_first = job.state.get("own_first") if not result.replace else None
        own_first = own_first or (min(own) if own else None)
        if own_first:
            meta = replace(meta, first_timestamp=own_first)
    builder = DocBuilder(None if result.replace else job.state.get("builder"), main_file=job.file.kind == MAIN)
    docs = builder.feed(entries)
    state = {"adapter": result.state, "builder": builder.state(), "read": fingerprint(path, result.offset)}
    if job.exclude is not None and meta.first_timestamp:
        state["own_first"] = meta.first_timestamp
    meta_json = msgspec.json.encode(meta).decode()
    state_blob = msgspec.msgpack.encode(state)
    return JobOutput(
        file=job.file,
        size=stat.st_size,
        mtime_ns=stat.st_mtime_ns,
        inode=stat.st_ino,
        offset=result.offset,
        replace=result.replace,
        meta=meta,
        skipped=result.skipped,
        state=state,
        summaries=result.summaries,
        hashes=uuid_hashes(result.uuids),
        record_hashes=uuid_hashes(result.record_keys),
        docs=docs,
        postings=count_terms(docs, default_tokenizer()),
        n_messages=builder.next_seq,
        n_turns=builder.turn + 1,
        file_id=job.file_id,
        meta_json=meta_json,
        state_blob=state_blob,
        error=result.error,
        reasons=dict(result.reasons),
        usage=usage,
    )


FINGERPRINT_BYTES = 4096


def fingerprint(path: Path, offset: int) -> str | None:
    """A hash of the first and last few KB of what has been read (``[0, offset)``).

    An append leaves them as they were; a rewrite in place (same inode, not
    shorter: size and inode alone cannot tell) almost always changes one of them.
    Two small reads, so a sync can check every changed file cheaply.
    """
    if offset <= 0:
        return None
    try:
        with open_regular(path) as handle:
            head = handle.read(min(offset, FINGERPRINT_BYTES))
            handle.seek(max(0, offset - FINGERPRINT_BYTES))
            tail = handle.read(min(offset, FINGERPRINT_BYTES))
    except OSError:
        return None
    return hashlib.blake2b(head + b"|" + tail + b"|" + str(offset).encode(), digest_size=12).hexdigest()


def same_bytes_read(path: Path, offset: int, state: dict[str, Any]) -> bool:
    """Whether the bytes read so far are still there (no fingerprint saved: assume so)."""
    saved = state.get("read")
    return saved is None or fingerprint(path, offset) == saved


def _missing(job: Job) -> JobOutput:
    out = _failed(job, None, None)
    out.missing = True
    return out


def failed_output(out: JobOutput, error: str) -> JobOutput:
    """``out``'s file kept as an error: nothing of what was read from it is stored."""
    return JobOutput(
        file=out.file, size=out.size, mtime_ns=out.mtime_ns, inode=out.inode, offset=0, replace=True,
        meta=FileMeta(), skipped=0, state={}, summaries=[], hashes=np.zeros(0, dtype=np.int64),
        record_hashes=np.zeros(0, dtype=np.int64), docs=[], postings=Postings.empty(), n_messages=0, n_turns=0,
        file_id=out.file_id, error=error,
    )


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
        record_hashes=np.zeros(0, dtype=np.int64),
        docs=[],
        postings=Postings.empty(),
        n_messages=0,
        n_turns=0,
        file_id=job.file_id,
        error=error,
    )


@dataclass(slots=True)
class ChunkOutput:
    """A worker's outputs for a chunk of jobs, and the segment it wrote for them."""

    outputs: list[JobOutput]
    segment: str | None  # name of the segment written for these outputs' documents
    n_docs: int


def run_chunk(chunk_id: int, jobs: list[Job], segments_dir: str | None) -> ChunkOutput:
    """Read a chunk of files and write their documents as one segment.

    Runs in a worker during a cold index: parsing, tokenizing and sorting postings
    all happen here, and the writer only records the result in the catalog.
    """
    outputs = [run_job(job) for job in jobs]
    segment = chunk_segment(chunk_id, outputs)
    for out in outputs:
        _strip_indexed(out)
    if segment is None:
        return ChunkOutput(outputs, None, 0)
    if segments_dir is not None:
        save_segment(segment, Path(segments_dir))
    return ChunkOutput(outputs, segment.name, segment.n_docs)


def _strip_indexed(out: JobOutput) -> None:
    """Drop what the segment now holds, so the writer is not sent it back.

    (The index text of every document was a tenth of the chunk's bytes, pickled by
    the worker and unpickled by the writer while both compete for the cores.)
    """
    out.postings = Postings.empty()
    out.docs = [
        TurnDoc(d.turn, d.part, d.first_seq, d.last_seq, d.timestamp, "", "", d.body[:BODY_CHARS], d.is_sidechain, d.marks,
                d.seen, d.places)
        for d in out.docs
    ]
    if out.state_blob:
        out.state = {}


def segment_name(chunk_id: int) -> str:
    return f"seg-{chunk_id:010d}"


def chunk_segment(chunk_id: int, outputs: list[JobOutput]) -> Segment | None:
    """One segment for the documents of ``outputs``; assigns their doc ids."""
    terms, docs, tfs, doc_ids, file_ids, ts, len_main, len_tool = [], [], [], [], [], [], [], []
    base = 0
    for out in outputs:
        n = len(out.docs)
        out.doc_ids = np.arange(base, base + n, dtype=np.int64) + (np.int64(chunk_id) << CHUNK_SHIFT)
        if not n:
            continue
        p = out.postings
        terms.append(p.term)
        docs.append(p.doc + base)
        tfs.append(p.tf)
        doc_ids.append(out.doc_ids)
        file_ids.append(np.full(n, out.file_id, dtype=np.int32))
        ts.append(np.fromiter((parse_ts(d.timestamp) for d in out.docs), dtype=np.float64, count=n))
        len_main.append(p.len_main)
        len_tool.append(p.len_tool)
        base += n
    if not base:
        return None
    cat = np.concatenate
    return build_from_coo(
        segment_name(chunk_id), cat(terms), cat(docs).astype(np.int32), cat(tfs), cat(doc_ids),
        cat(file_ids), cat(ts), cat(len_main), cat(len_tool),
        vocab.encode(vocab.words_of(d.main for out in outputs for d in out.docs)),
    )
