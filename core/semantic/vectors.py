"""Passage vectors on disk, shared by every process of a cache like the BM25 segments.

Layout: ``<cache>/vectors/<model id>/v-<time>-<pid>.npz``, each file the doc ids and
float16 vectors of one batch the writer embedded. Only the process holding
``writer.lock`` writes; a file appears by an atomic rename, so a reader sees whole
files or none and never waits. A vector is kept for a passage's doc id; a passage
that changes gets a new doc id (its old one is tombstoned), so stale vectors are
simply never asked for, and the writer drops them when it merges the files.

Damage: an ``.npz`` is a zip whose members carry a CRC-32, checked as they are
read, so a truncated or altered file fails to load. A reader skips it; the writer
deletes it, and the passages it held are embedded again (as a damaged segment is
rebuilt). Vectors of another model (another folder name) are deleted by the writer:
a model change re-embeds everything.
"""

from __future__ import annotations

import os
import shutil
import threading
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .embedder import DIM, MODEL_ID

VECTORS_DIR = "vectors"
MERGE_FILES = 24  # more files than this: the writer merges them into one
# What reading a damaged, truncated or foreign file raises (a vanished one is FileNotFoundError, apart)
UNREADABLE = (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile)


@dataclass(frozen=True)
class Vectors:
    """Loaded vectors: doc ids (sorted) and their unit vectors (float32, one row each)."""

    doc_ids: np.ndarray
    matrix: np.ndarray
    files: tuple[str, ...] = ()
    damaged: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return int(self.doc_ids.shape[0])


EMPTY = Vectors(np.zeros(0, dtype=np.int64), np.zeros((0, DIM), dtype=np.float32))


class VectorStore:
    """The vector files of one cache and model; loads are cached until the files change."""

    def __init__(self, cache: Path, model_id: str = MODEL_ID) -> None:
        self.root = cache / VECTORS_DIR
        self.folder = self.root / model_id
        self.model_id = model_id
        self._loaded: Vectors = EMPTY
        self._ids: dict[str, np.ndarray | None] = {}  # file → its doc ids (None: damaged); files never change
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
            self._loaded = EMPTY  # the old matrix goes now (unless a search holds it), not after the new one is built
            doc_ids, rows, damaged, kept = [], [], [], []
            for name in names:
                try:
                    with np.load(self.folder / name) as data:
                        ids, vecs = np.asarray(data["doc_ids"], dtype=np.int64), np.asarray(data["vectors"])
                    if vecs.ndim != 2 or vecs.shape != (ids.shape[0], DIM):
                        raise ValueError(f"shape {vecs.shape}")
                except FileNotFoundError:  # merged away by the writer meanwhile: its successor is listed next time
                    continue
                except UNREADABLE:
                    damaged.append(name)
                    self._ids[name] = None
                    continue
                self._ids[name] = ids  # (what doc_ids() and merge() would read again)
                kept.append(name)
                doc_ids.append(ids)
                rows.append(vecs)
            if doc_ids:
                ids = np.concatenate(doc_ids)
                # One float32 matrix filled file by file: concatenating, casting and then picking
                # the unique rows held three copies at once (40 MB for 11k passages; issue 25).
                matrix = np.empty((ids.shape[0], DIM), dtype=np.float32)
                start = 0
                for vecs in rows:
                    matrix[start : start + vecs.shape[0]] = vecs
                    start += vecs.shape[0]
                del rows
                if ids.shape[0] > 1 and not bool((ids[1:] > ids[:-1]).all()):  # else already sorted, unique
                    ids, first = np.unique(ids, return_index=True)  # a doc embedded twice (a retried batch): keep one
                    matrix = matrix[first]
            else:
                ids, matrix = EMPTY.doc_ids, EMPTY.matrix
            self._loaded = Vectors(ids, matrix, names, tuple(damaged))
            return self._loaded

    def _file_ids(self, name: str) -> np.ndarray | None:
        """A file's doc ids, its vectors checked as :meth:`load` checks them (CRC, shape) but not kept;
        None when damaged. Raises FileNotFoundError when the file was merged away meanwhile."""
        path = self.folder / name
        try:
            with zipfile.ZipFile(path) as zf:
                if zf.testzip() is not None:  # streams every member through its CRC-32
                    return None
                with zf.open("vectors.npy") as f:
                    version = np.lib.format.read_magic(f)
                    read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) else np.lib.format.read_array_header_2_0
                    shape = read_header(f)[0]
            with np.load(path) as data:
                ids = np.asarray(data["doc_ids"], dtype=np.int64)
        except FileNotFoundError:
            raise
        except UNREADABLE:
            return None
        return ids if len(shape) == 2 and shape == (ids.shape[0], DIM) else None

    def _file_table(self, names: list[str]) -> tuple[list[tuple[str, np.ndarray]], list[str]]:
        """(name, doc ids) of each readable file of ``names``, in order, and the damaged ones; each file
        is read once per process (by :meth:`load` or here). The caller holds ``_lock``."""
        readable, damaged = [], []
        for name in names:
            if name not in self._ids:
                try:
                    self._ids[name] = self._file_ids(name)
                except FileNotFoundError:  # merged away by the writer meanwhile
                    continue
            ids = self._ids[name]
            if ids is None:
                damaged.append(name)
            else:
                readable.append((name, ids))
        self._ids = {n: self._ids[n] for n in names if n in self._ids}
        return readable, damaged

    def doc_ids(self) -> tuple[np.ndarray, list[str]]:
        """The doc ids the readable files hold (sorted, unique) and the damaged files, without their vectors.

        What the writer needs to know what to embed, and what the stats count: only a search needs the
        float32 matrix (300 MB for 200,000 passages; issue 25)."""
        with self._lock:
            names = self._names()
            if tuple(names) == self._loaded.files:
                return self._loaded.doc_ids, list(self._loaded.damaged)
            readable, damaged = self._file_table(names)
        return (np.unique(np.concatenate([ids for _, ids in readable])) if readable else EMPTY.doc_ids), damaged

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

    def add(self, doc_ids: np.ndarray, vectors: np.ndarray) -> None:
        self._write(np.asarray(doc_ids, dtype=np.int64), np.asarray(vectors, dtype=np.float16))

    def _write(self, doc_ids: np.ndarray, vectors: np.ndarray) -> str:
        self.folder.mkdir(parents=True, exist_ok=True)
        name = f"v-{time.time_ns():020d}-{os.getpid()}.npz"
        tmp = self.folder / f".tmp-{name}"
        with open(tmp, "wb") as f:
            np.savez(f, doc_ids=doc_ids, vectors=vectors)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self.folder / name)
        return name

    def merge(self, alive: np.ndarray, *, force: bool = False) -> bool:
        """Rewrite the files as one holding only ``alive`` doc ids, when there are many files, when most of
        their vectors belong to passages no longer indexed, or (``force``) whenever there is more than one."""
        with self._lock:
            readable, _ = self._file_table(self._names())
        if not readable:
            return False
        files = [n for n, _ in readable]
        per_file = [ids for _, ids in readable]
        every = np.concatenate(per_file)
        stored = np.unique(every)
        mostly_dead = int(np.isin(stored, alive).sum()) < stored.shape[0] // 2  # a rebuilt or much-changed index
        if len(files) <= (1 if force else MERGE_FILES) and not mostly_dead:
            return False
        # Into one float16 array, file by file (the doc ids are known without the vectors): through
        # load()'s float32 matrix the merge held four copies of every vector at once (issue 25).
        kept = np.flatnonzero(np.isin(every, alive))
        ids, first = np.unique(every[kept], return_index=True)  # a doc embedded twice: the first file's vector
        source = kept[first]  # row of each merged vector in the files' concatenation
        rows = np.empty((ids.shape[0], DIM), dtype=np.float16)
        offset = 0
        for name, file_ids in zip(files, per_file, strict=True):
            end = offset + file_ids.shape[0]
            wanted = np.flatnonzero((source >= offset) & (source < end))
            if wanted.shape[0]:
                try:
                    with np.load(self.folder / name) as data:
                        vecs = np.asarray(data["vectors"], dtype=np.float16)
                except UNREADABLE:  # damaged since it was read
                    return False
                rows[wanted] = vecs[source[wanted] - offset]
                del vecs
            offset = end
        self._write(ids, rows)
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
