"""Cold-index workers collect garbage less often than the default (core/index/workers.py)."""

from __future__ import annotations

import gc

from core.index.workers import WORKER_GC_THRESHOLD, make_pool


def test_a_pool_worker_runs_with_the_raised_collection_threshold() -> None:
    assert gc.get_threshold() != WORKER_GC_THRESHOLD  # the parent is left as it was
    with make_pool(1) as pool:
        assert pool.submit(gc.get_threshold).result(timeout=120) == WORKER_GC_THRESHOLD
