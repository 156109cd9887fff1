"""Passage vectors on disk, shared by every process of a cache like the BM25 segments.

Layout: ``<cache>/vectors/<model id>/v-<time>-<pid>.npz``, each file the rows of the
passages one batch embedded: per row a passage's doc id, the sequence of the message
its slot came from, the key of the slot's text (:mod:`core.semantic.passages`) and
the float16 vector. All rows of a passage are in one file, so a passage is embedded
or not. Only the process holding ``writer.lock`` writes; a file appears by an atomic
rename, so a reader sees whole files or none and never waits. A passage that changes
gets a new doc id (its old one is tombstoned), so stale rows are simply never asked
for, and the writer drops them when it merges the files.

Damage: an ``.npz`` is a zip whose members carry a CRC-32, checked as they are read,
so a truncated or altered file fails to load. Each member's header is checked before
its data is read: the dtype we write, one row count for all four, and a size that
fits the member (a foreign file that passes the CRC check with a string dtype or a
header claiming 55 billion rows is damage, not a crash or a 400 GB allocation). A
reader skips a damaged file; the writer deletes it, and its passages are embedded
again. Vectors of another model (another folder name) are deleted by the writer: a
model change re-embeds everything.

In memory a search holds each row as int8 with its own step (the row's largest component
/ 127): half of float16's bytes (15 MB instead of 29 for the 1.8 GB bench's 38,381 slots),
read a chunk at a time, and a query's cosines skip float16's slow conversion (3 ms instead
of ~30 over 43,000 rows). A cosine moves by 0.002 at most (the dev set's vectors; the
eval's ranks are the same); the files, merges and reused vectors stay float16.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
import zipfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

import numpy as np

from . import VECTORS_DIR
from .embedder import DIM, MODEL_ID

# (np.isin: kind="sort" throughout: doc ids span 2^24 per segment and keys 2^63, and isin's default
# table method allocates the range: 75 ms of a one-shot search for 300 doc ids)
MERGE_FILES = 24  # more files than this: the writer merges them into one
SIMS_CHUNK = 1_024  # rows turned to float32 at a time, read or searched (1.5 MB, not a copy of them all)
STEPS = 127  # int8 steps each side of zero for a row in memory
# What reading a damaged, truncated or foreign file raises (a vanished one is FileNotFoundError, apart)
UNREADABLE = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile, MemoryError)
# member → (dtype, row shape) of what the writer stores
COLUMNS: dict[str, tuple[np.dtype, tuple[int, ...]]] = {
    "doc_ids": (np.dtype("<i8"), ()),
    "seqs": (np.dtype("<i8"), ()),
    "keys": (np.dtype("<i8"), ()),
    "vectors": (np.dtype("<f2"), (DIM,)),
}


@dataclass(frozen=True)
class Vectors:
    """Loaded rows (one per embedded slot) grouped by passage, for a query's cosines.

    ``doc_ids`` are the embedded passages (sorted, unique); ``order`` lists the rows
    passage by passage and ``starts`` where each passage's rows begin in it."""

    doc_ids: np.ndarray
    row_docs: np.ndarray
    seqs: np.ndarray
    # int8, one row per slot, and each row's step: each file's rows as it was read, shared by the loads that list it
    blocks: tuple[np.ndarray, ...]
    steps: tuple[np.ndarray, ...]
    order: np.ndarray
    starts: np.ndarray
    files: tuple[str, ...] = ()
    damaged: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return int(self.doc_ids.shape[0])

    @property
    def rows(self) -> int:
        return int(self.row_docs.shape[0])

    @property
    def nbytes(self) -> int:
        """What a search holds in memory for these rows."""
        held = (*self.blocks, *self.steps, self.row_docs, self.seqs, self.order)
        return sum(a.nbytes for a in held)

    def row_cosines(self, query: np.ndarray) -> np.ndarray:
        """The cosine of every row with a unit query vector (float32), a chunk at a time."""
        q = query.astype(np.float32)
        out = np.empty(self.rows, dtype=np.float32)
        at = 0
        for block, steps in zip(self.blocks, self.steps, strict=True):
            for start in range(0, block.shape[0], SIMS_CHUNK):
                chunk = block[start : start + SIMS_CHUNK]
                out[at : at + chunk.shape[0]] = (chunk.astype(np.float32) @ q) * steps[start : start + SIMS_CHUNK]
                at += chunk.shape[0]
        return out

    def best(self, row_sims: np.ndarray) -> np.ndarray:
        """Each passage's best slot cosine (aligned with ``doc_ids``)."""
        if not self.count:
            return np.zeros(0, dtype=np.float32)
        return np.maximum.reduceat(row_sims[self.order], self.starts)

    def best_sequence(self, doc_id: int, row_sims: np.ndarray) -> int | None:
        """The message sequence of a passage's closest slot; None when that is its start (slot 0 spans the
        prompt and the first answers: the snippet decides) or it is not embedded."""
        i = int(np.searchsorted(self.doc_ids, doc_id))
        if i >= self.count or self.doc_ids[i] != doc_id:
            return None
        end = int(self.starts[i + 1]) if i + 1 < self.count else self.rows
        rows = self.order[int(self.starts[i]) : end]  # (a passage's rows in slot order: stored so, sorted stably)
        best = int(np.argmax(row_sims[rows]))
        return None if best == 0 else int(self.seqs[rows[best]])


def _empty_vectors(files: tuple[str, ...] = (), damaged: tuple[str, ...] = ()) -> Vectors:
    none = np.zeros(0, dtype=np.int64)
    return Vectors(none, none, none, (), (), none, none, files, damaged)


EMPTY = _empty_vectors()


def _check_headers(zf: zipfile.ZipFile, members: tuple[str, ...]) -> int:
    """The row count of a file whose ``members`` have the dtypes, shapes and sizes we write; raises ValueError."""
    n_rows = None
    for name in members:
        dtype, row = COLUMNS[name]
        info = zf.getinfo(f"{name}.npy")
        with zf.open(info) as f:
            version = np.lib.format.read_magic(f)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f"{name}: npy version {version}")
            read = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
            shape, fortran, got = read(f)
        if got != dtype or fortran or len(shape) != 1 + len(row) or tuple(shape[1:]) != row:
            raise ValueError(f"{name}: {got} {shape}")
        if shape[0] * dtype.itemsize * int(np.prod(row, dtype=np.int64)) > info.file_size:
            raise ValueError(f"{name}: {shape[0]} rows do not fit {info.file_size} bytes")
        if n_rows is not None and shape[0] != n_rows:
            raise ValueError(f"{name}: {shape[0]} rows, not {n_rows}")
        n_rows = shape[0]
    return int(n_rows or 0)


def read_file(path: Path, members: tuple[str, ...] = tuple(COLUMNS)) -> dict[str, np.ndarray]:
    """The checked ``members`` of one vector file; raises one of :data:`UNREADABLE` for a bad file."""
    with zipfile.ZipFile(path) as zf:
        _check_headers(zf, tuple(COLUMNS))
        return _read_members(zf, members)


def _read_members(zf: zipfile.ZipFile, members: tuple[str, ...]) -> dict[str, np.ndarray]:
    out = {}
    for name in members:
        with zf.open(f"{name}.npy") as f:  # (a member's CRC-32 is checked as it is read to the end)
            out[name] = np.lib.format.read_array(f, allow_pickle=False)
    return out


def _skip_header(f: IO[bytes]) -> int:
    """Past a checked member's npy header; where its data starts."""
    version = np.lib.format.read_magic(f)
    (np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0)(f)
    return f.tell()


def quantize(rows: np.ndarray, out: np.ndarray, steps: np.ndarray) -> None:
    """float ``rows`` into int8 ``out`` and each row's step (float32): ``out * step`` is the row within
    half a step. In place past one float32 copy of ``rows``."""
    v = rows.astype(np.float32)
    np.maximum(v.max(axis=1), -v.min(axis=1), out=steps)
    steps /= STEPS
    steps[steps == 0] = 1.0
    v /= steps[:, None]
    out[...] = np.rint(v, out=v)


def read_for_search(path: Path) -> tuple[dict[str, np.ndarray], np.ndarray, np.ndarray]:
    """A checked file's doc ids, seqs and keys, and its vectors as int8 rows and steps, converted
    SIMS_CHUNK rows at a time: a merged file's float16 matrix is never held whole beside them."""
    row_bytes = COLUMNS["vectors"][0].itemsize * DIM
    with zipfile.ZipFile(path) as zf:
        n_rows = _check_headers(zf, tuple(COLUMNS))
        out = _read_members(zf, ("doc_ids", "seqs", "keys"))
        rows, steps = np.empty((n_rows, DIM), dtype=np.int8), np.empty(n_rows, dtype=np.float32)
        with zf.open("vectors.npy") as f:
            _skip_header(f)
            for start in range(0, n_rows, SIMS_CHUNK):
                n = min(SIMS_CHUNK, n_rows - start)
                data = f.read(n * row_bytes)
                if len(data) != n * row_bytes:
                    raise EOFError(f"{path.name}: cut short at row {start}")
                chunk = np.frombuffer(data, dtype=COLUMNS["vectors"][0]).reshape(n, DIM)
                quantize(chunk, rows[start : start + n], steps[start : start + n])
            f.read()  # (to the member's end, where its CRC-32 is checked)
    return out, rows, steps


def _read_rows(path: Path, rows: np.ndarray) -> np.ndarray:
    """Some rows (ascending) of a checked file's vectors, read by seeking in its stored member: a
    growing session reuses a few vectors of a merged file without loading all of it."""
    size = COLUMNS["vectors"][0].itemsize * DIM
    out = np.empty((rows.shape[0], DIM), dtype=np.float16)
    with zipfile.ZipFile(path) as zf:
        n_rows = _check_headers(zf, tuple(COLUMNS))
        with zf.open("vectors.npy") as f:
            start = _skip_header(f)
            for i, row in enumerate(rows.tolist()):
                if not 0 <= row < n_rows:
                    raise ValueError(f"row {row} of {n_rows}")
                f.seek(start + row * size)  # (forward only: the rows ascend)
                data = f.read(size)
                if len(data) != size:
                    raise EOFError(f"{path.name}: row {row} cut short")
                out[i] = np.frombuffer(data, dtype=COLUMNS["vectors"][0])
    return out


@dataclass
class _FileRows:
    """What the writer and the stats need of one file, without its vectors."""

    doc_ids: np.ndarray
    keys: np.ndarray = field(repr=False)


class VectorStore:
    """The vector files of one cache and model; loads are cached until the files change."""

    def __init__(self, cache: Path, model_id: str = MODEL_ID) -> None:
        self.root = cache / VECTORS_DIR
        self.folder = self.root / model_id
        self.model_id = model_id
        self._loaded: Vectors = EMPTY
        self._meta: dict[str, _FileRows | None] = {}  # file → its rows' ids (None: damaged); files never change
        # file → (doc ids, seqs, int8 rows, steps) as load() read it, while the file is listed: a load after the
        # writer added a file reads that file alone. Reading every file again and joining them into one
        # matrix held all of them read again and the new matrix at once, twice the vectors (22 MB at
        # 1.8 GB), at the first search after each file the background job wrote.
        self._read: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]] = {}
        self._lock = threading.Lock()

    def _names(self) -> list[str]:
        try:
            return sorted(n for n in os.listdir(self.folder) if n.startswith("v-") and n.endswith(".npz"))
        except OSError:
            return []

    def load(self) -> Vectors:
        """Every readable vector file (cheap when nothing changed: one directory listing)."""
        with self._lock:
            names = tuple(self._names())
            if names == self._loaded.files:
                return self._loaded
            self._loaded = EMPTY  # the old rows go now (unless a search holds them), not after the new ones are read
            self._read = {name: self._read[name] for name in names if name in self._read}  # (files merged away, too)
            parts, damaged = [], []
            for name in names:
                part = self._read.get(name)
                if part is None:
                    if name in self._meta and self._meta[name] is None:  # damaged when first read (files never change)
                        damaged.append(name)
                        continue
                    try:
                        data, rows, steps = read_for_search(self.folder / name)
                    except FileNotFoundError:  # merged away by the writer meanwhile: its successor is listed next time
                        continue
                    except UNREADABLE:
                        damaged.append(name)
                        self._meta[name] = None
                        continue
                    self._meta[name] = _FileRows(data["doc_ids"], data["keys"])
                    part = self._read[name] = (data["doc_ids"], data["seqs"], rows, steps)
                parts.append(part)
            self._loaded = self._join(parts, names, tuple(damaged))
            return self._loaded

    @staticmethod
    def _join(parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]], names: tuple[str, ...], damaged: tuple[str, ...]) -> Vectors:
        if not parts:
            return _empty_vectors(names, damaged)
        row_docs = np.concatenate([part[0] for part in parts])
        seqs = np.concatenate([part[1] for part in parts])
        order = np.argsort(row_docs, kind="stable").astype(np.int64)
        doc_ids, starts = np.unique(row_docs[order], return_index=True)  # (a doc embedded twice: both files' rows)
        # The files' vectors as read, not copied into one matrix (issue 25: no copy held beside another)
        blocks, steps = tuple(part[2] for part in parts), tuple(part[3] for part in parts)
        return Vectors(doc_ids, row_docs, seqs, blocks, steps, order, starts.astype(np.int64), names, damaged)

    def _file_meta(self, name: str) -> _FileRows | None:
        """A file's doc ids and keys, checked as :meth:`load` checks them (headers, CRC) but without keeping
        the vectors; None when damaged. Raises FileNotFoundError when the file was merged away meanwhile."""
        path = self.folder / name
        try:
            with zipfile.ZipFile(path) as zf:
                if zf.testzip() is not None:  # streams every member through its CRC-32
                    return None
            data = read_file(path, ("doc_ids", "keys"))
        except FileNotFoundError:
            raise
        except UNREADABLE:
            return None
        return _FileRows(data["doc_ids"], data["keys"])

    def _file_table(self, names: list[str]) -> tuple[list[tuple[str, _FileRows]], list[str]]:
        """(name, rows) of each readable file of ``names``, in order, and the damaged ones; each file
        is read once per process (by :meth:`load` or here). The caller holds ``_lock``."""
        readable, damaged = [], []
        for name in names:
            if name not in self._meta:
                try:
                    self._meta[name] = self._file_meta(name)
                except FileNotFoundError:  # merged away by the writer meanwhile
                    continue
            meta = self._meta[name]
            if meta is None:
                damaged.append(name)
            else:
                readable.append((name, meta))
        self._meta = {n: self._meta[n] for n in names if n in self._meta}
        return readable, damaged

    def doc_ids(self) -> tuple[np.ndarray, list[str]]:
        """The passages the readable files hold (sorted, unique) and the damaged files, without their vectors.

        What the writer needs to know what to embed, and what the stats count: only a search needs the vectors."""
        with self._lock:
            names = self._names()
            if tuple(names) == self._loaded.files:
                return self._loaded.doc_ids, list(self._loaded.damaged)
            readable, damaged = self._file_table(names)
        return (np.unique(np.concatenate([m.doc_ids for _, m in readable])) if readable else EMPTY.doc_ids), damaged

    def stored_vectors(self, keys: np.ndarray) -> dict[int, np.ndarray]:
        """The stored vector of each of ``keys`` that some file holds (the writer reuses them, issue 35)."""
        with self._lock:
            readable, _ = self._file_table(self._names())
        wanted = np.unique(np.asarray(keys, dtype=np.int64))
        found: dict[int, np.ndarray] = {}
        for name, meta in readable:
            if not wanted.shape[0]:
                break
            hit = np.flatnonzero(np.isin(meta.keys, wanted, kind="sort"))
            if not hit.shape[0]:
                continue
            try:
                vecs = _read_rows(self.folder / name, hit)
            except UNREADABLE:  # (FileNotFoundError too: merged away meanwhile; embedded anew)
                continue
            for row, vector in zip(hit.tolist(), vecs):
                found.setdefault(int(meta.keys[row]), vector)
            wanted = wanted[~np.isin(wanted, list(found), kind="sort")]
        return found

    # --- the writer only ---------------------------------------------------------------

    def prepare(self) -> None:
        """Remove other models' vectors and half-written files of killed writers."""
        if self.root.is_dir():
            for other in self.root.iterdir():
                if other.name != self.model_id:
                    shutil.rmtree(other, ignore_errors=True) if other.is_dir() else other.unlink(missing_ok=True)
        self.folder.mkdir(parents=True, exist_ok=True)
        for name in os.listdir(self.folder):
            if name.startswith(".tmp-"):
                (self.folder / name).unlink(missing_ok=True)

    def remove_damaged(self) -> list[str]:
        """Delete the files that failed to load; their passages count as not embedded again."""
        damaged = self.doc_ids()[1]
        for name in damaged:
            (self.folder / name).unlink(missing_ok=True)
        return damaged

    def add(self, doc_ids: np.ndarray, seqs: np.ndarray, keys: np.ndarray, vectors: np.ndarray) -> None:
        """One file of rows: every slot of the passages a batch embedded."""
        self._write({
            "doc_ids": np.asarray(doc_ids, dtype=np.int64), "seqs": np.asarray(seqs, dtype=np.int64),
            "keys": np.asarray(keys, dtype=np.int64), "vectors": np.asarray(vectors, dtype=np.float16),
        })  # fmt: skip

    def _write(self, columns: dict[str, np.ndarray]) -> str:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"v-{time.time_ns():020d}-{os.getpid()}.npz"
        tmp = self.folder / f".tmp-{name}"
        with open(tmp, "wb") as f:
            np.savez(f, **columns)  # type: ignore[arg-type]  # (numpy types allow_pickle among the names)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.folder / name)
        return name

    def merge(self, alive: np.ndarray, *, force: bool = False) -> bool:
        """Rewrite the files as one holding only ``alive`` passages, when there are many files, when most of
        their rows belong to passages no longer indexed, or (``force``) whenever there is more than one."""
        with self._lock:
            readable, _ = self._file_table(self._names())
        if not readable:
            return False
        files = [n for n, _ in readable]
        stored = np.unique(np.concatenate([m.doc_ids for _, m in readable]))
        mostly_dead = int(np.isin(stored, alive, kind="sort").sum()) < stored.shape[0] // 2  # a rebuilt or much-changed index
        if len(files) <= (1 if force else MERGE_FILES) and not mostly_dead:
            return False
        # File by file into float16 columns (the doc ids are known without the vectors); a passage
        # embedded twice (a retried batch) keeps the first file's rows.
        taken: set[int] = set()
        columns: dict[str, list[np.ndarray]] = {name: [] for name in COLUMNS}
        for name, meta in readable:
            fresh = np.unique(meta.doc_ids[np.isin(meta.doc_ids, alive, kind="sort")])
            fresh = fresh[~np.isin(fresh, list(taken), kind="sort")] if taken else fresh
            if not fresh.shape[0]:
                continue
            try:
                data = read_file(self.folder / name)
            except UNREADABLE:  # damaged (or gone) since it was read
                return False
            keep = np.isin(data["doc_ids"], fresh, kind="sort")
            for column in COLUMNS:
                columns[column].append(data[column][keep])
            taken.update(fresh.tolist())
            del data
        if columns["doc_ids"]:
            self._write({name: np.concatenate(parts) for name, parts in columns.items()})
        for name in files:  # a reader that listed one of these skips it and lists again next query
            (self.folder / name).unlink(missing_ok=True)
        return True

    def nbytes(self) -> int:
        total = 0
        for name in self._names():
            try:
                total += (self.folder / name).stat().st_size
            except OSError:
                pass
        return total
