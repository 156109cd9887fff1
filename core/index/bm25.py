"""BM25 over segments, scored at query time from raw term frequencies.

bm25s computes scores eagerly at build time, baking the corpus statistics (IDF,
average length) into the stored matrix; an archive that changes every few seconds
would need a full rebuild per change. Here each segment stores plain term
frequencies and a query computes the same Lucene BM25 that bm25s uses from the
*current* live statistics of all segments together. So an index grown by a
thousand incremental updates ranks exactly like one built from scratch, and an
update touches only the documents that changed (tests pin both, and pin equality
with bm25s's own scores).

Two fields: ``main`` (prompt, answer, tool names) and ``tools`` (bounded tool
inputs and outputs), summed with the tools field down-weighted.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .segment import TOOL_FIELD, Segment

K1 = 1.2
B = 0.75
TOOLS_WEIGHT = 0.6
MAX_TIED = 10  # candidates kept at most per wanted one when scores tie at the cut


@dataclass(frozen=True, slots=True)
class Hit:
    doc_id: int
    file_id: int
    score: float
    ts: float


@dataclass(frozen=True, slots=True)
class Snapshot:
    """An immutable view: segments plus which of their documents are alive."""

    segments: tuple[Segment, ...]
    alive: tuple[np.ndarray, ...]
    n_docs: int
    avg_main: float
    avg_tool: float
    generation: int = 0

    @classmethod
    def create(
        cls, segments: Sequence[Segment], dead_doc_ids: np.ndarray, generation: int = 0
    ) -> Snapshot:
        alive = []
        n = 0
        sum_main = 0.0
        sum_tool = 0.0
        for seg in segments:
            if dead_doc_ids.shape[0]:
                keep = ~np.isin(seg.doc_ids, dead_doc_ids)
            else:
                keep = np.ones(seg.n_docs, dtype=bool)
            alive.append(keep)
            n += int(keep.sum())
            sum_main += float(np.asarray(seg.len_main, dtype=np.float64)[keep].sum())
            sum_tool += float(np.asarray(seg.len_tool, dtype=np.float64)[keep].sum())
        return cls(
            segments=tuple(segments),
            alive=tuple(alive),
            n_docs=n,
            avg_main=(sum_main / n) if n else 1.0,
            avg_tool=(sum_tool / n) if n else 1.0,
            generation=generation,
        )

    def dead_count(self) -> int:
        return sum(int((~a).sum()) for a in self.alive)

    def search(
        self,
        term_ids: Sequence[int],
        limit: int,
        *,
        allowed_files: np.ndarray | None = None,
        ts_from: float | None = None,
        ts_to: float | None = None,
    ) -> list[Hit]:
        """Top ``limit`` documents by BM25; documents matching no term never appear."""
        if not term_ids or not self.segments or limit <= 0:
            return []
        scores = [None] * len(self.segments)
        for field_offset, weight, avg, lengths in (
            (0, 1.0, self.avg_main, "len_main"),
            (TOOL_FIELD, TOOLS_WEIGHT, self.avg_tool, "len_tool"),
        ):
            for term in term_ids:
                tid = int(term) + int(field_offset)
                found = []
                df = 0
                for i, seg in enumerate(self.segments):
                    got = seg.postings_for(tid)
                    if got is None:
                        continue
                    local, tf = got
                    keep = self.alive[i][local]
                    if not keep.all():
                        local, tf = local[keep], tf[keep]
                    if local.shape[0]:
                        found.append((i, local, tf))
                        df += local.shape[0]
                if not df:
                    continue
                idf = np.log1p((self.n_docs - df + 0.5) / (df + 0.5))
                for i, local, tf in found:
                    seg = self.segments[i]
                    dl = np.asarray(getattr(seg, lengths))[local]
                    contrib = (weight * idf) * tf / (K1 * ((1.0 - B) + B * dl / max(avg, 1e-9)) + tf)
                    if scores[i] is None:
                        scores[i] = np.zeros(seg.n_docs, dtype=np.float32)
                    scores[i][local] += contrib
        candidates = []
        for i, seg_scores in enumerate(scores):
            if seg_scores is None:
                continue
            seg = self.segments[i]
            mask = seg_scores > 0
            if allowed_files is not None:
                mask &= np.isin(seg.file_ids, allowed_files)
            if ts_from is not None:
                mask &= np.asarray(seg.ts) >= ts_from
            if ts_to is not None:
                mask &= np.asarray(seg.ts) <= ts_to
            local = np.flatnonzero(mask)
            if local.shape[0] == 0:
                continue
            candidates.append((i, local, seg_scores[local]))
        if not candidates:
            return []
        seg_idx = np.concatenate([np.full(c[1].shape[0], c[0], dtype=np.int32) for c in candidates])
        local = np.concatenate([c[1] for c in candidates])
        score = np.concatenate([c[2] for c in candidates])
        k = min(limit, score.shape[0])
        if k < score.shape[0]:
            # Every document tied with the k-th is kept: which of equal scores made
            # the cut would otherwise depend on the segments' layout, and the final
            # order (core.ranking) could not be the same after an incremental update.
            # (Bounded: thousands of identical documents keep an arbitrary k.)
            best = np.argpartition(-score, k - 1)[:k]
            tied = np.flatnonzero(score >= score[best].min())
            top = tied if tied.shape[0] <= MAX_TIED * k else best
        else:
            top = np.arange(score.shape[0])
        # Ties broken by recency (newer first) then doc id, so results are stable.
        ts_vals = np.array(
            [float(self.segments[seg_idx[j]].ts[local[j]]) for j in top], dtype=np.float64
        )
        order = np.lexsort((-ts_vals, -score[top]))
        hits = []
        for j in top[order]:
            seg = self.segments[seg_idx[j]]
            pos = local[j]
            hits.append(
                Hit(
                    doc_id=int(seg.doc_ids[pos]),
                    file_id=int(seg.file_ids[pos]),
                    score=float(score[j]),
                    ts=float(seg.ts[pos]),
                )
            )
        return hits
