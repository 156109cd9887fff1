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

import msgspec
import numpy as np

from .segment import TOOL_FIELD, Segment

K1 = 1.2
B = 0.75
TOOLS_WEIGHT = 0.6
# Coordination: a turn holding k of a query's n terms scores BM25 * (k/n)**COORD_POWER.
# For a query of up to STRICT_TERMS terms (keywords: "flaky invoice test") every turn
# holding all n also ranks above every turn that holds fewer (two tiers), so more
# words narrow the list. A longer query is a description, whose words are rarely all
# in one turn: there the factor is the share of the query's *IDF* the turn holds,
# (Σ idf held / Σ idf)**DESCRIPTION_COORD_POWER, so a turn holding four common words
# does not outrank one holding fewer, rarer ones (dev set MRR@10 0.812 → 0.833).
COORD_POWER = 0.5
STRICT_TERMS = 4
DESCRIPTION_COORD_POWER = 0.5
# Recency prior: a turn gains up to RECENCY_WEIGHT of its score for being new, halving
# every RECENCY_HALF_LIFE days before the newest turn of the archive (a mild tie-breaker
# between similar turns, never a reason to list an unrelated one).
RECENCY_WEIGHT = 0.05
RECENCY_HALF_LIFE_DAYS = 30.0
# When the query asks for the most recent ("last time", "most recent session"), the
# newest of the matching turns gains up to this much, by its rank in time among them.
RECENCY_INTENT_WEIGHT = 0.5
RECENCY_INTENT_POOL = 10  # … among this many best-scoring turns
MAX_TIED = 10  # candidates kept at most per wanted one when scores tie at the cut
_TIER = 1e7  # above any BM25 sum: the all-terms tier sorts first


def _intent_prior(score: np.ndarray, ts: np.ndarray, files: np.ndarray) -> np.ndarray:
    """Per document: 1 + weight × (its file's rank in time among the best-scoring files) / (pool − 1).

    Files stand in for conversations: a long session's many passages must not fill
    the pool. A file's time is that of its best document; files outside the pool keep 1.
    """
    order = np.argsort(-score, kind="stable")
    _, first = np.unique(files[order], return_index=True)
    best_docs = order[np.sort(first)][:RECENCY_INTENT_POOL]  # best document of each top file
    prior = np.ones(score.shape[0], dtype=np.float64)
    pool = best_docs.shape[0]
    if pool > 1:
        when = np.where(ts[best_docs] > 0, ts[best_docs], -np.inf)
        rank = np.argsort(np.argsort(when, kind="stable"), kind="stable")
        boost = dict(zip(files[best_docs].tolist(), (RECENCY_INTENT_WEIGHT * rank / (pool - 1)).tolist(), strict=True))
        prior += np.array([boost.get(f, 0.0) for f in files.tolist()])
    return prior


def _not_in(values: np.ndarray, sorted_set: np.ndarray) -> np.ndarray:
    """``~np.isin(values, sorted_set)`` for a sorted ``sorted_set``, without np.isin's
    sort of both (and its import of numpy.ma: ~15 ms of a one-shot search)."""
    at = np.minimum(np.searchsorted(sorted_set, values), sorted_set.shape[0] - 1)
    return sorted_set[at] != values


class Hit(msgspec.Struct, frozen=True):
    """One ranked document of a snapshot search."""

    doc_id: int
    file_id: int
    score: float  # what the list is ordered by: BM25 × coordination × recency prior
    ts: float
    bm25: float = 0.0  # the plain BM25 sum (tests pin it to bm25s)
    matched: int = 0  # how many of the query's clauses the turn holds
    complete: bool = True  # it holds all of them
    phrase_shown: bool | None = None  # a query with a phrase: its stored text shows it (core.query.execute)


class Snapshot(msgspec.Struct, frozen=True):
    """An immutable view: segments plus which of their documents are alive."""

    segments: tuple[Segment, ...]
    alive: tuple[np.ndarray, ...]
    n_docs: int
    avg_main: float
    avg_tool: float
    generation: int = 0
    newest: float = 0.0  # timestamp of the newest alive document (the recency prior's "now")

    @classmethod
    def create(
        cls, segments: Sequence[Segment], dead_doc_ids: np.ndarray, generation: int = 0
    ) -> Snapshot:
        alive = []
        n = 0
        sum_main = 0.0
        sum_tool = 0.0
        newest = 0.0
        for seg in segments:
            if dead_doc_ids.shape[0]:
                keep = _not_in(seg.doc_ids, dead_doc_ids)
            else:
                keep = np.ones(seg.n_docs, dtype=bool)
            alive.append(keep)
            n += int(keep.sum())
            sum_main += float(np.asarray(seg.len_main, dtype=np.float64)[keep].sum())
            sum_tool += float(np.asarray(seg.len_tool, dtype=np.float64)[keep].sum())
            if keep.any():
                newest = max(newest, float(np.asarray(seg.ts)[keep].max()))
        return cls(
            segments=tuple(segments),
            alive=tuple(alive),
            n_docs=n,
            avg_main=(sum_main / n) if n else 1.0,
            avg_tool=(sum_tool / n) if n else 1.0,
            generation=generation,
            newest=newest,
        )

    def dead_count(self) -> int:
        return sum(int((~a).sum()) for a in self.alive)

    # --- scoring -----------------------------------------------------------------------

    def _postings(self, tid: int) -> tuple[list[tuple[int, np.ndarray, np.ndarray]], int]:
        """Alive (segment, local positions, tf) of one field-term, and its document frequency."""
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
        return found, df

    def _term_scores(self, term: int, out: list[np.ndarray | None], dfs: dict[int, int] | None = None) -> bool:
        """Add one term's BM25 (both fields) into the per-segment arrays ``out``; note its df in ``dfs``."""
        hit = False
        for field_offset, weight, avg, lengths in (
            (0, 1.0, self.avg_main, "len_main"),
            (TOOL_FIELD, TOOLS_WEIGHT, self.avg_tool, "len_tool"),
        ):
            found, df = self._postings(int(term) + int(field_offset))
            if dfs is not None:
                dfs[int(term)] = dfs.get(int(term), 0) + df
            if not df:
                continue
            hit = True
            idf = np.log1p((self.n_docs - df + 0.5) / (df + 0.5))
            for i, local, tf in found:
                seg = self.segments[i]
                dl = np.asarray(getattr(seg, lengths))[local]
                contrib = (weight * idf) * tf / (K1 * ((1.0 - B) + B * dl / max(avg, 1e-9)) + tf)
                into = out[i]
                if into is None:
                    into = out[i] = np.zeros(seg.n_docs, dtype=np.float32)
                into[local] += contrib
        return hit

    def _present(self, term: int) -> list[np.ndarray | None]:
        """Per segment, a mask of the alive documents holding ``term`` in either field."""
        masks: list[np.ndarray | None] = [None] * len(self.segments)
        for field_offset in (0, TOOL_FIELD):
            found, _ = self._postings(int(term) + int(field_offset))
            for i, local, _tf in found:
                mask = masks[i]
                if mask is None:
                    mask = masks[i] = np.zeros(self.segments[i].n_docs, dtype=bool)
                mask[local] = True
        return masks

    def search(
        self,
        term_ids: Sequence[int] = (),
        limit: int = 10,
        *,
        clauses: Sequence[Sequence[int]] | None = None,
        required: Sequence[bool] | None = None,
        excluded: Sequence[int] = (),
        allowed_files: np.ndarray | None = None,
        ts_from: float | None = None,
        ts_to: float | None = None,
        recency: float = RECENCY_WEIGHT,
        recency_intent: bool = False,
        sort: str = "relevance",
        dfs: dict[int, int] | None = None,
    ) -> list[Hit]:
        """Top ``limit`` documents; documents matching no term never appear.

        ``clauses``: per query term, the term ids that satisfy it (one, or a prefix's
        words; the best of them counts); plain ``term_ids`` are one clause each.
        Turns holding every clause come first (then BM25 × coordination × recency
        prior, then newer, then doc id); ``required`` clauses must be held,
        ``excluded`` terms must not. ``sort="recent"``: the same tiers, newest first.
        ``dfs``, if given, receives each scored term's document frequency (both fields).
        """
        if clauses is None:
            clauses = [(int(t),) for t in term_ids]
        if not clauses or not self.segments or limit <= 0:
            return []
        scored = self._score_clauses(clauses, required, dfs)
        found = self._candidates(scored, self._banned(excluded), allowed_files, ts_from, ts_to)
        if found is None:
            return []
        n_clauses = len(clauses)
        complete = found.held >= n_clauses
        # sort="recent" always lists the turns holding every term first (newest first), then the rest
        tiered = complete if (n_clauses <= STRICT_TERMS or sort == "recent") else np.zeros_like(complete)
        score = self._ranking_score(found, n_clauses, recency, recency_intent)
        primary = (found.ts if sort == "recent" else score) + tiered * (_TIER if sort != "recent" else 1e11)
        top = _top(primary, limit)
        doc_ids = np.array([int(self.segments[found.seg_idx[j]].doc_ids[found.local[j]]) for j in top], dtype=np.int64)
        # Total order: tier, then score (or time), then newer, then doc id.
        if sort == "recent":
            order = np.lexsort((doc_ids, -score[top], -found.ts[top], ~tiered[top]))
        else:
            order = np.lexsort((doc_ids, -found.ts[top], -score[top], ~tiered[top]))
        hits = []
        for o in order:
            j = top[o]
            seg = self.segments[found.seg_idx[j]]
            hits.append(
                Hit(
                    doc_id=int(doc_ids[o]),
                    file_id=int(seg.file_ids[found.local[j]]),
                    score=float(score[j]),
                    ts=float(found.ts[j]),
                    bm25=float(found.bm[j]),
                    matched=int(found.held[j]),
                    complete=bool(complete[j]),
                )
            )
        return hits

    # --- the steps of a search ---------------------------------------------------------

    def _score_clauses(
        self, clauses: Sequence[Sequence[int]], required: Sequence[bool] | None, dfs: dict[int, int] | None
    ) -> _ClauseScores:
        """Per segment: the BM25 sum over the clauses, how many each document holds, how
        much of the query's weight (IDF) it holds, and which miss a required clause."""
        n_seg = len(self.segments)
        out = _ClauseScores([None] * n_seg, [None] * n_seg, [None] * n_seg, [None] * n_seg, 0.0)
        for c, alternatives in enumerate(clauses):
            best: list[np.ndarray | None] = [None] * n_seg
            clause_dfs: dict[int, int] = {}
            for term in alternatives:
                scores: list[np.ndarray | None] = [None] * n_seg
                if not self._term_scores(term, scores, clause_dfs):
                    continue
                for i, arr in enumerate(scores):
                    if arr is not None:
                        prior = best[i]
                        best[i] = arr if prior is None else np.maximum(prior, arr)
            if dfs is not None:
                for term, df in clause_dfs.items():
                    dfs[term] = dfs.get(term, 0) + df
            weight = self._clause_weight(clause_dfs)
            out.weight_total += weight
            self._add_clause(out, best, weight, bool(required and required[c]))
        return out

    def _clause_weight(self, clause_dfs: dict[int, int]) -> float:
        """How much a clause says about a document: the IDF of its rarest held term (both fields' df)."""
        held = [df for df in clause_dfs.values() if df]
        if not held:
            return 0.0
        df = min(min(held), self.n_docs)
        return float(np.log1p((self.n_docs - df + 0.5) / (df + 0.5)))

    def _add_clause(self, out: _ClauseScores, best: list[np.ndarray | None], weight: float, must: bool) -> None:
        for i, arr in enumerate(best):
            n_docs = self.segments[i].n_docs
            if must and arr is None:
                if out.missing_required[i] is None:
                    out.missing_required[i] = np.ones(n_docs, dtype=bool)
                continue
            if arr is None:
                continue
            if out.totals[i] is None:
                out.totals[i] = np.zeros(n_docs, dtype=np.float32)
                out.matched[i] = np.zeros(n_docs, dtype=np.int16)
                out.coverage[i] = np.zeros(n_docs, dtype=np.float64)
            held = arr > 0
            out.totals[i] += arr
            out.matched[i] += held  # type: ignore[operator]
            out.coverage[i] += weight * held  # type: ignore[operator]
            if must:
                if out.missing_required[i] is None:
                    out.missing_required[i] = np.zeros(n_docs, dtype=bool)
                out.missing_required[i] |= ~held  # type: ignore[operator]

    def _banned(self, excluded: Sequence[int]) -> list[np.ndarray | None]:
        """Per segment, a mask of the documents holding an excluded term."""
        banned: list[np.ndarray | None] = [None] * len(self.segments)
        for term in excluded:
            for i, mask in enumerate(self._present(term)):
                if mask is not None:
                    banned[i] = mask if banned[i] is None else banned[i] | mask
        return banned

    def _candidates(
        self,
        scored: _ClauseScores,
        banned: list[np.ndarray | None],
        allowed_files: np.ndarray | None,
        ts_from: float | None,
        ts_to: float | None,
    ) -> _Candidates | None:
        """The documents that match and pass every filter, as flat arrays over all segments."""
        allowed = np.sort(np.asarray(allowed_files, dtype=np.int64)) if allowed_files is not None else None
        parts = []
        for i, seg_scores in enumerate(scored.totals):
            if seg_scores is None:
                continue
            seg = self.segments[i]
            mask = seg_scores > 0
            missing, ban = scored.missing_required[i], banned[i]
            if missing is not None:
                mask &= ~missing
            if ban is not None:
                mask &= ~ban
            if allowed is not None:
                mask &= ~_not_in(seg.file_ids, allowed) if allowed.shape[0] else False
            ts = np.asarray(seg.ts)
            if ts_from is not None:
                mask &= ts >= ts_from
            if ts_to is not None:
                mask &= ts <= ts_to
            local = np.flatnonzero(mask)
            if local.shape[0]:
                held, coverage = scored.matched[i], scored.coverage[i]
                assert held is not None and coverage is not None  # set with the totals
                parts.append((i, local, seg_scores[local], held[local], coverage[local], ts[local]))
        if not parts:
            return None
        total = scored.weight_total
        coverage = np.concatenate([p[4] for p in parts])
        return _Candidates(
            seg_idx=np.concatenate([np.full(p[1].shape[0], p[0], dtype=np.int32) for p in parts]),
            local=np.concatenate([p[1] for p in parts]),
            bm=np.concatenate([p[2] for p in parts]).astype(np.float64),
            held=np.concatenate([p[3] for p in parts]).astype(np.int64),
            coverage=coverage / total if total > 0 else np.ones_like(coverage),
            ts=np.concatenate([p[5] for p in parts]).astype(np.float64),
        )

    def _ranking_score(self, found: _Candidates, n_clauses: int, recency: float, recency_intent: bool) -> np.ndarray:
        """BM25 × coordination × the recency priors, per candidate."""
        if n_clauses > STRICT_TERMS:
            # a description: how much of its *weight* a turn holds, so four common words
            # do not outweigh fewer, rarer ones
            score = found.bm * found.coverage**DESCRIPTION_COORD_POWER
        else:
            score = found.bm * (found.held / n_clauses) ** COORD_POWER
        if recency and self.newest > 0:
            age_days = np.maximum(self.newest - found.ts, 0.0) / 86400.0
            prior = np.where(found.ts > 0, np.exp2(-age_days / RECENCY_HALF_LIFE_DAYS), 0.0)
            score *= 1.0 + recency * prior
        if recency_intent and found.ts.shape[0] > 1:
            score *= _intent_prior(score, found.ts, self._file_ids(found))
        return score


    def _file_ids(self, found: _Candidates) -> np.ndarray:
        files = np.empty(found.local.shape[0], dtype=np.int64)
        for i in np.unique(found.seg_idx).tolist():
            at = found.seg_idx == i
            files[at] = np.asarray(self.segments[i].file_ids)[found.local[at]]
        return files


class _ClauseScores(msgspec.Struct):
    """Per segment (None: no document of it matched): what :meth:`Snapshot._score_clauses` adds up."""

    totals: list[np.ndarray | None]  # BM25 sum
    matched: list[np.ndarray | None]  # clauses held
    coverage: list[np.ndarray | None]  # IDF of the clauses held
    missing_required: list[np.ndarray | None]
    weight_total: float  # IDF of every clause


class _Candidates(msgspec.Struct, frozen=True):
    """The matching documents of all segments, flat: segment, position in it, and their numbers."""

    seg_idx: np.ndarray
    local: np.ndarray
    bm: np.ndarray
    held: np.ndarray
    coverage: np.ndarray  # share of the query's IDF held, 0–1
    ts: np.ndarray


def _top(primary: np.ndarray, limit: int) -> np.ndarray:
    """Positions of the ``limit`` best, plus every document tied with the last of them.

    Which of equal scores made the cut would otherwise depend on the segments' layout,
    and the final order (core.query.ranking) could not be the same after an incremental
    update. (Bounded: thousands of identical documents keep an arbitrary k.)
    """
    k = min(limit, primary.shape[0])
    if k >= primary.shape[0]:
        return np.arange(primary.shape[0])
    best = np.argpartition(-primary, k - 1)[:k]
    tied = np.flatnonzero(primary >= primary[best].min())
    return tied if tied.shape[0] <= MAX_TIED * k else best
