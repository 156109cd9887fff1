"""relay-search behind the benchmark's :class:`~bench.systems.SearchSystem` interface.

Every call into relay-search's query API (``core.api.Archive``) is in this file:

    archive = Archive.open(config, sync=False)   # opens the cache; never blocks on indexing
    archive.sync(progress=...)                   # cold: from an empty cache; warm: catch-up
    archive.search(query, limit=k)               # ranked hits; empty when nothing matches
    archive.start_watching()                     # watchdog live updates, returns at once
    archive.close()

CLI (warm wall time): `relay-search search QUERY --json --limit 10` with HOME=<root>
and XDG_CACHE_HOME=<cache root> (SPEC §1, §8), i.e. config.cache_path is
<cache root>/relay-search.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from bench.harness import Progress, dir_size


def relay_env(root: Path, cache_root: Path) -> dict[str, str]:
    """Environment for a relay-search process that sees only the generated archive."""
    env = dict(os.environ)
    env.update(HOME=str(root), XDG_CACHE_HOME=str(cache_root), XDG_DATA_HOME=str(cache_root / "data"))
    env.pop("CLAUDE_CONFIG_DIR", None)
    return env


def cli_command(query: str) -> list[str]:
    """argv of a warm `relay-search search` process (entry point if installed)."""
    exe = Path(sys.executable).with_name("relay-search")
    if exe.exists():
        return [str(exe), "search", query, "--json", "--limit", "10"]
    return [sys.executable, "-c", "import sys; from core.front.cli import main; sys.exit(main())",
            "search", query, "--json", "--limit", "10"]


class RelaySystem:
    name = "relay"
    persistent = True

    def __init__(self, root: Path, cache_dir: Path):
        # cache_dir is the XDG_CACHE_HOME the benchmark owns; relay keeps cache_dir/relay-search.
        from core.api import Archive
        from core.config import Config

        self._archive_cls = Archive
        self.root = root
        self.cache_root = cache_dir
        self.config = Config.from_env(relay_env(root, cache_dir))
        self._core = None

    def build(self, progress: Progress | None = None) -> None:
        shutil.rmtree(self.config.cache_path, ignore_errors=True)
        self._core = self._archive_cls.open(self.config, sync=False)
        self._core.sync(progress=_adapt(progress))

    def open(self) -> None:
        self._core = self._archive_cls.open(self.config, sync=False)

    def catch_up(self) -> None:
        """Warm reconcile (measured separately from the first answer)."""
        self._core.sync()

    def settle_merges(self) -> None:
        """Watch (as the app, ``serve`` and ``mcp`` do) until the background merges are done."""
        self._core.start_watching()
        while self._core.indexer.merging():
            self._core.indexer.wait_for_merge(1.0)

    def segment_count(self) -> int:
        return len(self._core.catalog.segment_names())

    def search(self, query: str, k: int = 10) -> list[object]:
        return list(self._core.search(query, limit=k))

    def start_watching(self) -> None:
        self._core.start_watching()

    def close(self) -> None:
        if self._core is not None:
            self._core.close()
            self._core = None

    def index_bytes(self) -> int:
        return dir_size(self.config.cache_path)


def _adapt(progress: Progress | None):
    """The bench's ``(done, total)`` callback from relay-search's Progress objects."""
    if progress is None:
        return None
    return lambda p: progress(p.done_bytes, p.total_bytes)
