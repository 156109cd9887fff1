"""Which segments to merge: a tiered policy, after Lucene's TieredMergePolicy.

A merge's memory grows with the bytes it merges, so no merge may take more than
:attr:`TieredPolicy.max_merge_bytes` of segments, and segments already half that
size are left alone (unless a quarter of their documents are dead). Among the
merges that fit, the one of the most similar sizes wins (a small segment is not
rewritten again and again into a big one), and merging goes on only while there
are more segments than the tiers allow: :attr:`segments_per_tier` of each size,
each tier :attr:`merge_factor` times the one below, up to the cap. So the count of
segments grows with the logarithm of the archive up to the cap, and linearly
after it, in segments the size of the cap (the long-lived process's first merges
after a cold index of 38 segments used to merge 37 of them at once, ~300 MB).

Pure functions of segment sizes, so the choice is tested without an index.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TieredPolicy:
    segments_per_tier: int = 8
    merge_factor: int = 8  # segments merged at once at most, and the ratio between tiers
    max_merge_bytes: int = 40 << 20  # bytes of the segments one merge reads (their alive share)
    floor_bytes: int = 2 << 20  # smaller segments count as this big (no tiers of tiny ones)
    dead_share: float = 0.25  # a segment with more dead documents is rewritten alone if need be


DEFAULT_POLICY = TieredPolicy()


def allowed_segments(live_bytes: Sequence[float], policy: TieredPolicy = DEFAULT_POLICY) -> int:
    """How many segments an index of these sizes may keep (Lucene's allowed count)."""
    if not live_bytes:
        return 0
    left = float(sum(live_bytes))
    level = max(float(min(live_bytes)), float(policy.floor_bytes))
    allowed = 0
    while True:
        at_level = left / level
        if at_level < policy.segments_per_tier or level >= policy.max_merge_bytes:
            # (never fewer than a tier: a small index is not merged after every update)
            return max(allowed + math.ceil(at_level), policy.segments_per_tier)
        allowed += policy.segments_per_tier
        left -= policy.segments_per_tier * level
        level = min(float(policy.max_merge_bytes), level * policy.merge_factor)


def pick_merge(
    sizes: Sequence[int], dead_shares: Sequence[float], policy: TieredPolicy = DEFAULT_POLICY, *, force: bool = False
) -> list[int]:
    """Indexes of the segments to merge next (empty: nothing worth merging).

    ``sizes`` are the segments' bytes, ``dead_shares`` the share of their documents
    that are dead. ``force`` (``relay-search index``): merge whatever still fits
    under the cap, down to one segment if the whole index does.
    """
    live = [max(0.0, s * (1.0 - d)) for s, d in zip(sizes, dead_shares, strict=True)]
    cap = policy.max_merge_bytes
    # A segment half the cap is done growing; a merge of it would mostly copy it.
    eligible = [
        i for i in range(len(sizes)) if live[i] <= cap / 2 or (dead_shares[i] > policy.dead_share and live[i] <= cap)
    ]
    eligible.sort(key=lambda i: live[i], reverse=True)
    too_many = len(sizes) > allowed_segments(live, policy)
    best: list[int] = []
    best_score = math.inf
    if too_many or force:
        for start in range(len(eligible)):
            group: list[int] = []
            total = 0.0
            hit_cap = False
            for i in eligible[start:]:
                if len(group) == policy.merge_factor:
                    break
                if total + live[i] > cap:
                    hit_cap = True
                    continue  # a smaller one may still fit
                group.append(i)
                total += live[i]
            if len(group) < 2:
                continue
            score = _score(group, live, policy, hit_cap)
            if score < best_score:
                best, best_score = group, score
    if best:
        return sorted(best)
    # Nothing to merge together: rewrite the segment with the most dead documents alone.
    dead = [i for i in eligible if dead_shares[i] > (0.0 if force else policy.dead_share)]
    if dead:
        return [max(dead, key=lambda i: dead_shares[i])]
    return []


def _score(group: list[int], live: Sequence[float], policy: TieredPolicy, hit_cap: bool) -> float:
    """Lower is better: similar sizes (skew: the biggest one's share), then smaller
    merges (Lucene's score). A merge that reached the cap counts as balanced, so
    full-size merges are preferred to many small ones."""
    sized = [max(live[i], float(policy.floor_bytes)) for i in group]
    skew = 1.0 / policy.merge_factor if hit_cap else max(sized) / sum(sized)
    return skew * (sum(live[i] for i in group) ** 0.05)
