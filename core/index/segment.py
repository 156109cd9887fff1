"""Immutable index segments: postings and per-document arrays on disk.

A segment is a directory of ``.npy`` files, memory-mapped when loaded, so opening
an index costs page faults, not parsing. Postings are stored term-major (CSC):
``terms`` (sorted term ids, with the field in the high bit), ``offsets`` into
``postings``/``tfs``, where a posting is a document's position in this segment.
Per-document arrays (``doc_ids``, ``file_ids``, ``ts``, ``len_main``,
``len_tool``) sit beside them.

Segments never change after they are written. Deleting a document records a
tombstone in the catalog; merging writes a new segment without the dead documents.
"""

from __future__ import annotations

import errno
import json
import mmap
import os
import re
import shutil
import zlib
from collections.abc import Sequence
from pathlib import Path

import msgspec
import numpy as np

TOOL_FIELD = np.int64(1) << 48  # added to a term id (< 2**48) for the tools field

ARRAYS = ("terms", "offsets", "postings", "tfs", "doc_ids", "file_ids", "ts", "len_main", "len_tool", "vocab")
_EMPTY_VOCAB = np.zeros(0, dtype=np.uint8)


class Segment(msgspec.Struct, frozen=True):
    """One immutable segment's arrays (see the module docstring)."""

    name: str
    terms: np.ndarray
    offsets: np.ndarray
    postings: np.ndarray
    tfs: np.ndarray
    doc_ids: np.ndarray
    file_ids: np.ndarray
    ts: np.ndarray
    len_main: np.ndarray
    len_tool: np.ndarray
    vocab: np.ndarray = msgspec.field(default_factory=lambda: _EMPTY_VOCAB)  # the words of its documents, for prefixes (core.index.vocab)

    @property
    def n_docs(self) -> int:
        return int(self.doc_ids.shape[0])

    def postings_for(self, term: int) -> tuple[np.ndarray, np.ndarray] | None:
        """(local doc positions, term frequencies) of one term, or None."""
        terms = self.terms
        i = int(np.searchsorted(terms, term))
        if i >= terms.shape[0] or terms[i] != term:
            return None
        start, end = int(self.offsets[i]), int(self.offsets[i + 1])
        return self.postings[start:end], self.tfs[start:end]

    def nbytes(self) -> int:
        return sum(getattr(self, name).nbytes for name in ARRAYS)


def build_from_coo(name, term_arr, doc_pos, tf_arr, doc_ids, file_ids, ts, len_main, len_tool, vocab=_EMPTY_VOCAB) -> Segment:
    """A segment from (term, local doc position, tf) triples and per-doc arrays."""
    order = np.lexsort((doc_pos, term_arr))
    term_sorted = term_arr[order]
    if term_sorted.shape[0]:
        starts = np.flatnonzero(np.r_[True, term_sorted[1:] != term_sorted[:-1]])
    else:
        starts = np.zeros(0, dtype=np.int64)
    terms = term_sorted[starts]
    offsets = np.append(starts, term_sorted.shape[0]).astype(np.int64)
    return Segment(
        name=name,
        terms=terms.astype(np.int64),
        offsets=offsets,
        postings=doc_pos[order].astype(np.int32),
        tfs=tf_arr[order].astype(np.float32),
        doc_ids=doc_ids,
        file_ids=file_ids,
        ts=ts,
        len_main=len_main,
        len_tool=len_tool,
        vocab=vocab,
    )


MERGE_BLOCK_POSTINGS = 1 << 20  # postings of one segment handled at a time while merging


def merge_segments(name: str, segments: Sequence[Segment], alive: Sequence[np.ndarray]) -> Segment:
    """One segment holding the alive documents of ``segments``, postings rebuilt.

    The same arrays as sorting every (term, document) pair again, in bounded
    memory: each segment's postings are already in term order, and a document's
    new position grows with its segment and old position, so each segment's alive
    postings of a term are copied, in order, after those of the segments before it.
    Beyond the merged arrays themselves, a merge holds one block of
    :data:`MERGE_BLOCK_POSTINGS` postings' worth of work arrays (sorting all pairs
    at once held ~70 bytes per posting: 300 MB for a 37-segment merge).
    """
    remaps, doc_parts = _remaps(segments, alive)
    terms = np.unique(np.concatenate([np.asarray(seg.terms) for seg in segments] or [np.zeros(0, np.int64)]))
    per_segment = [_alive_per_term(seg, remap) for seg, remap in zip(segments, remaps, strict=True)]
    counts = np.zeros(terms.shape[0], dtype=np.int64)
    where = []
    for seg, alive_counts in zip(segments, per_segment, strict=True):
        at = np.searchsorted(terms, np.asarray(seg.terms))
        counts[at] += alive_counts  # (a segment holds each term once)
        where.append(at)
    used = counts > 0
    offsets = np.zeros(terms.shape[0] + 1, dtype=np.int64)
    np.cumsum(counts, out=offsets[1:])
    postings = np.empty(int(offsets[-1]), dtype=np.int32)
    tfs = np.empty(int(offsets[-1]), dtype=np.float32)
    fill = offsets[:-1].copy()  # next free place of each term
    for seg, remap, at, alive_counts in zip(segments, remaps, where, per_segment, strict=True):
        _copy_postings(seg, remap, fill[at], alive_counts, postings, tfs)
        fill[at] += alive_counts
    kept_offsets = np.append(offsets[:-1][used], offsets[-1])
    return Segment(
        name=name, terms=terms[used].astype(np.int64), offsets=kept_offsets, postings=postings, tfs=tfs,
        doc_ids=doc_parts["doc_ids"], file_ids=doc_parts["file_ids"], ts=doc_parts["ts"],
        len_main=doc_parts["len_main"], len_tool=doc_parts["len_tool"], vocab=merged_vocab(segments),
    )


_DOC_DTYPES = {
    "doc_ids": np.int64, "file_ids": np.int32, "ts": np.float64, "len_main": np.float32, "len_tool": np.float32,
}


def _remaps(segments: Sequence[Segment], alive: Sequence[np.ndarray]) -> tuple[list[np.ndarray], dict[str, np.ndarray]]:
    """Per segment, old document position → new one (-1: dead); and the merged per-document arrays."""
    remaps = []
    parts: dict[str, list[np.ndarray]] = {key: [] for key in _DOC_DTYPES}
    base = 0
    for seg, keep in zip(segments, alive, strict=True):
        kept = np.flatnonzero(keep)
        remap = np.full(seg.n_docs, -1, dtype=np.int32)
        remap[kept] = np.arange(base, base + kept.shape[0], dtype=np.int32)
        remaps.append(remap)
        for key in parts:
            parts[key].append(np.asarray(getattr(seg, key))[kept])
        base += kept.shape[0]
    merged = {key: np.concatenate(parts[key] or [np.zeros(0)]).astype(dtype) for key, dtype in _DOC_DTYPES.items()}
    return remaps, merged


def _blocks(seg: Segment) -> list[tuple[int, int]]:
    """Runs of whole terms, ~MERGE_BLOCK_POSTINGS postings each: (first term, end term)."""
    offsets = np.asarray(seg.offsets)
    n_terms = seg.terms.shape[0]
    if n_terms == 0:
        return []
    marks = np.arange(MERGE_BLOCK_POSTINGS, int(offsets[-1]), MERGE_BLOCK_POSTINGS)
    cuts = np.searchsorted(offsets, marks, "right") - 1
    bounds = np.unique(np.concatenate(([0], np.clip(cuts, 1, n_terms), [n_terms]))).tolist()
    return list(zip(bounds[:-1], bounds[1:], strict=True))


def _alive_per_term(seg: Segment, remap: np.ndarray) -> np.ndarray:
    """How many of each term's postings in ``seg`` are of alive documents."""
    offsets = np.asarray(seg.offsets)
    counts = np.zeros(seg.terms.shape[0], dtype=np.int64)
    for lo, hi in _blocks(seg):
        start, end = int(offsets[lo]), int(offsets[hi])
        ok = remap[np.asarray(seg.postings[start:end])] >= 0
        running = np.zeros(end - start + 1, dtype=np.int64)
        np.cumsum(ok, out=running[1:])
        counts[lo:hi] = running[offsets[lo + 1 : hi + 1] - start] - running[offsets[lo:hi] - start]
    return counts


def _copy_postings(seg: Segment, remap: np.ndarray, starts: np.ndarray, alive_counts: np.ndarray,
                   postings: np.ndarray, tfs: np.ndarray) -> None:
    """Copy ``seg``'s alive postings, renumbered, to ``starts`` (one place per term of ``seg``)."""
    offsets = np.asarray(seg.offsets)
    for lo, hi in _blocks(seg):
        start, end = int(offsets[lo]), int(offsets[hi])
        new_pos = remap[np.asarray(seg.postings[start:end])]
        ok = new_pos >= 0
        n = alive_counts[lo:hi]
        first = np.zeros(hi - lo, dtype=np.int64)  # each term's first alive posting, counted in this block
        np.cumsum(n[:-1], out=first[1:])
        dest = np.repeat(starts[lo:hi] - first, n)
        dest += np.arange(dest.shape[0])
        postings[dest] = new_pos[ok]
        tfs[dest] = np.asarray(seg.tfs[start:end])[ok]


def merged_vocab(segments: Sequence[Segment]) -> np.ndarray:
    from .vocab import decode, encode  # (a leaf module; imported here to keep segment.py first)

    words: set[str] = set()
    for seg in segments:
        words.update(w for w in decode(seg.vocab) if w)
    return encode(words)


MANIFEST = "manifest.json"


class SegmentError(Exception):
    """A segment on disk is missing, truncated or damaged: the cache must be rebuilt."""


def save_segment(segment: Segment, directory: Path) -> Path:
    """Write atomically: a temp dir renamed into place once every file is synced.

    A manifest records each array file's size, mtime and CRC-32, so a damaged
    segment is found when opened instead of silently changing results.
    """
    final = directory / segment.name
    tmp = directory / f".{segment.name}.tmp-{os.getpid()}"
    if tmp.exists():
        shutil.rmtree(tmp)
    tmp.mkdir(parents=True)
    try:
        manifest = {}
        for key in ARRAYS:
            path = tmp / f"{key}.npy"
            with open(path, "wb") as handle:
                np.save(handle, np.ascontiguousarray(getattr(segment, key)))
                handle.flush()
                os.fsync(handle.fileno())
            st = path.stat()
            manifest[key] = [st.st_size, st.st_mtime_ns, _crc(path)]
        with open(tmp / MANIFEST, "w") as handle:
            json.dump(manifest, handle)
            handle.flush()
            os.fsync(handle.fileno())
    except BaseException as exc:
        shutil.rmtree(tmp, ignore_errors=True)  # (a full disk: give the space back)
        if isinstance(exc, OSError) and exc.errno is None and "written" in str(exc):
            # numpy reports a short write ("6990 requested and 2016 written")
            # without the errno; on a local disk it is a full one
            raise OSError(errno.ENOSPC, f"No space left on device ({exc})") from exc
        raise
    if final.exists():
        shutil.rmtree(final)
    os.replace(tmp, final)
    return final


def load_segment(path: Path, *, verify: bool = False) -> Segment:
    """Map a segment, checked against its manifest (raises :class:`SegmentError`).

    Always: every file is there with its recorded size, its header parses, and
    the arrays fit together. Its bytes are checksummed when ``verify`` is set
    (``relay-search index``) or when a file's mtime is not the recorded one (it
    was written after publish); otherwise reading every byte on each open would
    cost more than the query.
    """
    try:
        manifest = json.loads((path / MANIFEST).read_text())
    except FileNotFoundError:
        raise SegmentError(f"segment {path.name} has no manifest") from None
    except (OSError, ValueError) as exc:
        raise SegmentError(f"segment {path.name}: unreadable manifest ({exc})") from None
    arrays = {}
    for key in ARRAYS:
        file = path / f"{key}.npy"
        try:
            size, mtime_ns, crc = manifest[key]
            st = file.stat()
        except (KeyError, TypeError, ValueError) as exc:
            raise SegmentError(f"segment {path.name}: bad manifest ({exc})") from None
        except OSError as exc:
            raise SegmentError(f"segment {path.name}: {key}.npy: {exc.strerror or exc}") from None
        if st.st_size != size:
            raise SegmentError(f"segment {path.name}: {key}.npy is {st.st_size} bytes, not {size}")
        if (verify or st.st_mtime_ns != mtime_ns) and _crc(file) != crc:
            raise SegmentError(f"segment {path.name}: {key}.npy is damaged (checksum)")
        try:
            arrays[key] = _load_array(file)
        except Exception as exc:  # numpy's errors for a bad file are of many kinds
            raise SegmentError(f"segment {path.name}: {key}.npy: {type(exc).__name__}: {exc}") from None
    segment = Segment(name=path.name, **arrays)
    _check_shapes(segment)
    return segment


def _check_shapes(seg: Segment) -> None:
    n_terms, n_postings, n_docs = seg.terms.shape[0], seg.postings.shape[0], seg.doc_ids.shape[0]
    ok = (
        all(getattr(seg, key).ndim == 1 for key in ARRAYS)
        and seg.offsets.shape[0] == n_terms + 1
        and seg.tfs.shape[0] == n_postings
        and (n_terms == 0 or int(seg.offsets[-1]) == n_postings)
        and all(getattr(seg, key).shape[0] == n_docs for key in ("file_ids", "ts", "len_main", "len_tool"))
    )
    if not ok:
        raise SegmentError(f"segment {seg.name}: arrays do not fit together")


def _crc(path: Path) -> int:
    crc = 0
    with open(path, "rb") as handle:
        while block := handle.read(1 << 20):
            crc = zlib.crc32(block, crc)
    return crc


# The header np.save writes for a 1-d array, e.g. {'descr': '<i8', 'fortran_order': False, 'shape': (187368,), }
_NPY_HEADER = re.compile(rb"\{'descr': '([<>|][a-z]\d{1,2})', 'fortran_order': False, 'shape': \((\d+),\), \}\s*\n")


def _load_array(path: Path) -> np.ndarray:
    """Memory-map a 1-d ``.npy`` file as written by :func:`save_segment`.

    ``np.load(mmap_mode="r")`` costs ~0.3 ms per file (np.memmap resolves the
    path and parses the header with ``ast``); a one-shot search maps ~80 files, so
    the plain header np.save writes is read here and the data mapped directly.
    Anything else (another writer's header) goes through np.load.
    """
    with open(path, "rb") as handle:
        head = handle.read(256)
        if not head.startswith(b"\x93NUMPY\x01\x00") or len(head) < 10:
            return _np_load(path)
        start = 10 + int.from_bytes(head[8:10], "little")
        found = _NPY_HEADER.fullmatch(head[10:start])
        if found is None:
            return _np_load(path)
        dtype = np.dtype(found.group(1).decode("ascii"))
        count = int(found.group(2))
        size = os.fstat(handle.fileno()).st_size
        if size != start + count * dtype.itemsize:
            raise ValueError(f"{size} bytes for {count} items of {dtype} after a {start}-byte header")
        if count == 0:
            return np.zeros(0, dtype=dtype)
        mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    return np.frombuffer(mapped, dtype=dtype, count=count, offset=start)


def _np_load(path: Path) -> np.ndarray:
    try:
        return np.load(path, mmap_mode="r", allow_pickle=False)
    except ValueError:  # (older) numpy cannot memory-map an empty array
        return np.load(path, allow_pickle=False)


def segment_disk_bytes(path: Path) -> int:
    return sum(f.stat().st_size for f in path.glob("*.npy"))
