"""Per-phase profile of a cold index (issue 25): where a parse worker's time goes.

    python -m bench.profile_cold --root ARCHIVE [--runs 2]

The whole cold sync runs inline in this one process (no pool), so a CPU-time timer
around each step adds up (CPU time: the machine is shared, and wall time under
load varies by a third from run to run): parse (the adapters' ``read``), turn documents
(``DocBuilder.feed``), tokenise (``count_terms``), record keys (uuid hashes),
segment build and save, the catalog write and the relinking. Prints JSON (and a
table on stderr). On a shared machine compare runs taken together, not across days.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

PHASES = ("parse", "turn docs", "tokenise", "record keys", "segment build", "segment save", "catalog write", "relink")


def _timed(totals: dict[str, float], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        started = time.process_time()
        try:
            return fn(*args, **kwargs)
        finally:
            totals[name] += time.process_time() - started

    return wrapper


def _forget_memos() -> None:
    """Start from what a fresh parse worker knows: nothing.

    The tokenizer, the vocabulary's chunk words and the time parser remember what
    they saw for the life of the process, so a second run in this one read every
    chunk from its memo: "best of 2" reported tokenising at 0.57 CPU-s where a
    cold index pays 0.97 (446 MB bench).
    """
    import core.index.tokenize as tokenize
    import core.index.vocab as vocab
    import core.timeutil as timeutil

    tokenize._default = None
    vocab._chunk_words.clear()
    timeutil._epoch.cache_clear()


def profile(root: Path) -> dict[str, Any]:
    """One inline cold sync of ``root`` (a HOME) with timers around each phase."""
    import core.archive.indexer as indexer
    import core.archive.ingest as ingest
    import core.archive.turns as turns
    import core.archive.writing as writing
    from bench.relay_adapter import relay_env
    from core.api import Archive
    from core.config import Config
    from core.sources import ash, claude, codex, gemini

    totals: dict[str, float] = defaultdict(float)
    patches: list[tuple[Any, str, Any]] = [
        (ingest, "count_terms", "tokenise"), (ingest, "uuid_hashes", "record keys"),
        (ingest, "chunk_segment", "segment build"), (ingest, "save_segment", "segment save"),
        (turns.DocBuilder, "feed", "turn docs"), (writing.Writer, "commit", "catalog write"),
        (indexer.Indexer, "_relink", "relink"),
        (claude.ClaudeSource, "read", "parse"), (codex.CodexSource, "read", "parse"),
        (gemini.GeminiSource, "read", "parse"), (ash.AshSource, "read", "parse"),
    ]
    saved = [(owner, attr, getattr(owner, attr)) for owner, attr, _ in patches]
    min_bytes = indexer.PARALLEL_MIN_BYTES
    _forget_memos()
    cache = Path(tempfile.mkdtemp(prefix="relay-profile-"))
    try:
        for owner, attr, name in patches:
            setattr(owner, attr, _timed(totals, name, getattr(owner, attr)))
        indexer.PARALLEL_MIN_BYTES = 1 << 62  # inline: every phase in this process
        archive = Archive.open(Config.from_env(relay_env(root, cache)), sync=False)
        started, cpu_started = time.perf_counter(), time.process_time()
        result = archive.sync()
        wall, cpu = time.perf_counter() - started, time.process_time() - cpu_started
        archive.close()
    finally:
        for owner, attr, original in saved:
            setattr(owner, attr, original)
        indexer.PARALLEL_MIN_BYTES = min_bytes
        shutil.rmtree(cache, ignore_errors=True)
    phases = {name: round(totals.get(name, 0.0), 3) for name in PHASES}
    phases["other"] = round(cpu - sum(totals.values()), 3)
    return {"wall_s": round(wall, 3), "cpu_s": round(cpu, 3), "files": result.files_read,
            "bytes": result.bytes_read, "phases_s": phases}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", type=Path, required=True, help="the archive (a HOME)")
    ap.add_argument("--runs", type=int, default=1)
    args = ap.parse_args(argv)
    runs = [profile(args.root) for _ in range(args.runs)]
    best = min(runs, key=lambda r: r["cpu_s"])
    print(f"cold index inline, best of {len(runs)}: {best['cpu_s']:.2f} s CPU ({best['wall_s']:.2f} s wall)",
          file=sys.stderr)
    for name, secs in best["phases_s"].items():
        print(f"  {name:14s} {secs:6.2f} s {100 * secs / max(best['cpu_s'], 1e-9):5.1f}%", file=sys.stderr)
    sys.stdout.write(orjson.dumps({"runs": runs}).decode() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
