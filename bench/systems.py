"""The interface every measured system implements, and the baseline's implementation.

A worker process (``bench/worker.py``) drives one system through one phase, so the
measurement code is the same for relay-search and the original design.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Protocol

from bench import baseline
from bench.harness import Progress, dir_size



class SearchSystem(Protocol):
    """What the benchmark needs from a system under test.

    ``root`` is a HOME-like dir holding ``.claude/projects``; ``cache_dir`` is where the
    system may keep its index (it is deleted before a cold build).
    """

    name: str
    persistent: bool  # False: no on-disk cache, so a warm start is another cold build

    def build(self, progress: Progress | None = None) -> None:
        """Cold: index everything from scratch; return when all of it is searchable."""

    def open(self) -> None:
        """Warm: start from the existing cache; return as soon as queries can be answered."""

    def search(self, query: str, k: int = 10) -> list[object]:
        """Top-``k`` hits (any objects; an empty list means nothing matched)."""

    def start_watching(self) -> None:
        """Begin live updates in the background; return immediately."""

    def close(self) -> None:
        """Stop watchers/threads and release the index."""

    def index_bytes(self) -> int:
        """Bytes the index takes (or would take) on disk."""


class BaselineSystem:
    """The original design behind :class:`SearchSystem` (see ``bench/baseline.py``)."""

    name = "baseline"
    persistent = False

    def __init__(self, root: Path, cache_dir: Path):
        self.root = root
        self.cache_dir = cache_dir
        self._index: baseline.BaselineIndex | None = None
        self._watcher: baseline.Watcher | None = None

    def build(self, progress: Progress | None = None) -> None:
        self._index = baseline.build(self.root)

    def open(self) -> None:  # nothing persisted: a restart is a rebuild
        self.build()

    def search(self, query: str, k: int = 10) -> list[object]:
        index = self._index  # one read: the watcher may swap it at any moment
        return list(index.search(query, k)) if index else []

    def start_watching(self) -> None:
        self._watcher = baseline.watch(self.root, self._swap)

    def _swap(self, index: baseline.BaselineIndex) -> None:
        self._index = index

    def close(self) -> None:
        if self._watcher:
            self._watcher.stop()
            self._watcher = None

    def index_bytes(self) -> int:
        """Size of bm25s's ``save`` of the index (written here only to measure it)."""
        target = self.cache_dir / "baseline-bm25s"
        shutil.rmtree(target, ignore_errors=True)
        if self._index:
            self._index.save(target)
        return dir_size(target)

    def stats(self) -> dict[str, float]:
        return dict(self._index.stats) if self._index else {}


def make_system(name: str, root: Path, cache_dir: Path) -> SearchSystem:
    if name == "baseline":
        return BaselineSystem(root, cache_dir)
    if name == "relay":
        from bench.relay_adapter import RelaySystem  # imports core.api (see the TODO there)

        return RelaySystem(root, cache_dir)
    raise ValueError(f"unknown system {name!r}")
