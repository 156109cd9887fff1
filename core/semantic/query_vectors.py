"""The vectors of recent queries, kept in the cache so a query asked again skips the model.

A one-shot ``relay-search search`` pays for loading the runtime and the model (~0.2 s)
to embed a query of a few words; the same query comes back often (paging on with
``--offset``, a command from the shell's history, an agent asking twice). The last
:data:`KEEP` query vectors live in ``<cache>/vectors/<model id>/queries.npy`` beside the
passage vectors (another model: another folder, never mixed), keyed by a hash of the
query's text. Any process may write it (it is not the index: losing an entry to a
concurrent writer only costs one embedding), by an atomic rename; a damaged or foreign
file is ignored and replaced.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from .embedder import DIM
from .passages import text_key

FILE = "queries.npy"
KEEP = 256
_ROW = np.dtype([("key", "<i8"), ("vector", "<f4", (DIM,))])


class QueryVectors:
    def __init__(self, folder: Path) -> None:
        self.path = folder / FILE

    def _rows(self) -> np.ndarray:
        try:
            rows = np.load(self.path, allow_pickle=False)
        except (OSError, ValueError, EOFError):
            return np.zeros(0, dtype=_ROW)
        if rows.dtype != _ROW or rows.ndim != 1 or rows.shape[0] > KEEP:
            return np.zeros(0, dtype=_ROW)
        return rows

    def get(self, query: str) -> np.ndarray | None:
        rows = self._rows()
        hit = np.flatnonzero(rows["key"] == text_key(query))
        if not hit.shape[0]:
            return None
        vector = np.array(rows["vector"][hit[-1]], dtype=np.float32)
        return vector if np.isfinite(vector).all() else None

    def put(self, query: str, vector: np.ndarray) -> None:
        """Remember ``query``'s vector (best effort: a read-only or full cache keeps nothing)."""
        key = text_key(query)
        rows = self._rows()
        rows = rows[rows["key"] != key][-(KEEP - 1) :]
        new = np.zeros(1, dtype=_ROW)
        new["key"], new["vector"] = key, vector
        tmp = self.path.with_name(f".tmp-{FILE}-{os.getpid()}")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with open(tmp, "wb") as f:
                np.save(f, np.concatenate([rows, new]), allow_pickle=False)
            os.replace(tmp, self.path)
        except OSError:
            tmp.unlink(missing_ok=True)
