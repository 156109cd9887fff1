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
            doc_ids, rows, damaged, kept = [], [], [], []
            for name in names:
                try:
                    with np.load(self.folder / name) as data:
                        ids, vecs = np.asarray(data["doc_ids"], dtype=np.int64), np.asarray(data["vectors"])
                    if vecs.ndim != 2 or vecs.shape != (ids.shape[0], DIM):
                        raise ValueError(f"shape {vecs.shape}")
                except FileNotFoundError:  # merged away by the writer meanwhile: its successor is listed next time
                    continue
                except (OSError, ValueError, KeyError, EOFError, zipfile.BadZipFile):
                    damaged.append(name)
                    continue
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
        damaged = list(self.load().damaged)
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
        loaded = self.load()
        keep = np.isin(loaded.doc_ids, alive)
        mostly_dead = loaded.count and int(keep.sum()) < loaded.count // 2  # a rebuilt or much-changed index
        if not loaded.files or (len(loaded.files) <= (1 if force else MERGE_FILES) and not mostly_dead):
            return False
        self._write(loaded.doc_ids[keep], loaded.matrix.astype(np.float16)[keep])  # (the smaller copies first)
        for name in loaded.files:  # a reader that listed one of these skips it and lists again next query
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
