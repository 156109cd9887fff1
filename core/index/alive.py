"""The alive passages of a snapshot as columns sorted by doc id: what hybrid recall's filters
(:mod:`core.query.hybrid`) and the embedding job (:mod:`core.archive.semantic_job`) both read."""

from __future__ import annotations

import msgspec
import numpy as np

from .bm25 import Snapshot


class AlivePassages(msgspec.Struct, frozen=True):
    """Per alive passage (sorted by doc id): its file and time (epoch seconds)."""

    doc_ids: np.ndarray
    file_ids: np.ndarray
    ts: np.ndarray


EMPTY = AlivePassages(np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64))
_last: list[tuple[Snapshot, AlivePassages]] = []  # one snapshot at a time is plenty


def alive_passages(snapshot: Snapshot | None) -> AlivePassages:
    """The snapshot's alive passages (remembered for the last snapshot asked about)."""
    if snapshot is None or not snapshot.segments:
        return EMPTY
    last = _last[0] if _last else None  # (one read: another thread may replace it)
    if last is not None and last[0] is snapshot:
        return last[1]
    pairs = list(zip(snapshot.segments, snapshot.alive, strict=True))
    ids = np.concatenate([np.asarray(s.doc_ids, dtype=np.int64)[a] for s, a in pairs])
    files = np.concatenate([np.asarray(s.file_ids, dtype=np.int64)[a] for s, a in pairs])
    ts = np.concatenate([np.asarray(s.ts, dtype=np.float64)[a] for s, a in pairs])
    order = np.argsort(ids, kind="stable")
    table = AlivePassages(ids[order], files[order], ts[order])
    _last[:] = [(snapshot, table)]
    return table
