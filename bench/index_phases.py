"""The default ``relay-search index`` in its two phases (issue 35), and what a search pays per call.

    python -m bench.index_phases --home bench/data/archive-446mb-600s [--runs 5] [--skip-index]

From an empty cache, as a user runs it (a subprocess of the console script, model on):
the wall time until the words are searchable (its ``indexed …`` line), the whole run, its
CPU seconds and peak RSS, and the embedding's cost per 1,000 passages and slots; words
only (``RELAY_SEARCH_MODEL=off``) as a row of its own. Then, in process on a second empty
cache, how long until the newest 7 days' passages have vectors (they are embedded first).
Then warm one-shot searches: a prose query by words (``--mode lexical``) and with meaning
(the default), best of ``--runs`` interleaved, the prose query new each time (its vector
not yet remembered) and asked again; and a two-word query against ``python -c "import numpy"``.
Prints a table and JSON.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SCRIPT = Path(sys.executable).with_name("relay-search")
PROSE = "why did the export keep timing out after the first batches"
WORDS = "pyright version"
DAY = 86_400.0


def _env(home: Path, cache: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RELAY_SEARCH_MODEL"}
    return {**env, "HOME": str(home), "XDG_CACHE_HOME": str(cache), **extra}


def timed_index(home: Path, cache: Path, **extra: str) -> dict[str, float]:
    shutil.rmtree(cache, ignore_errors=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen([str(SCRIPT), "index"], env=_env(home, cache, **extra), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    first = proc.stdout.readline()
    words = time.perf_counter() - start
    _, err = proc.communicate()
    total = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert proc.returncode == 0 and first.startswith("indexed"), err
    return {
        "words_s": round(words, 2), "total_s": round(total, 2),
        "cpu_s": round(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime, 2),
        "peak_rss_mb": round(after.ru_maxrss / 1024, 1),
    }  # fmt: skip


def vector_facts(home: Path, cache: Path) -> dict[str, float]:
    from core.api import Archive
    from core.config import Config

    with Archive.open(Config.from_env(_env(home, cache)), sync=False) as archive:
        vectors = archive.semantic.store.load()
        embedded, passages = archive.semantic.counts()
        keys = {int(k) for name in vectors.files for k in _keys(archive.semantic.store.folder / name)}
        return {
            "passages": passages, "embedded": embedded, "slots": vectors.rows, "distinct_texts": len(keys),
            "vector_bytes_on_disk": archive.semantic.store.nbytes(),
            "search_matrix_mb": round(vectors.nbytes / 1e6, 1),
        }  # fmt: skip


def _keys(path: Path):
    from core.semantic.vectors import read_file

    return read_file(path, ("keys",))["keys"].tolist()


SHARES = (0.02, 0.10)  # of all passages, newest first: a week and about five weeks of a year-long archive


def newest_week(home: Path, cache: Path) -> dict[str, float]:
    """Seconds until the passages of the newest 7 days have vectors (words indexed first, not
    counted); and until the newest 2% and 10% of all passages have: the generated archives
    spread their sessions over months, so their newest 7 days hold only a handful."""
    import numpy as np

    from core.api import Archive
    from core.archive.semantic_job import alive_passages
    from core.config import Config

    shutil.rmtree(cache, ignore_errors=True)
    with Archive.open(Config.from_env({**_env(home, cache), "RELAY_SEARCH_MODEL": "off"})) as archive:
        pass  # the words
    with Archive.open(Config.from_env(_env(home, cache)), sync=False) as archive:
        ids, ts = alive_passages(archive._snapshot)
        week = int((ts >= np.nanmax(ts) - 7 * DAY).sum())
        wanted = {"newest_7_days": week, **{f"newest_{round(share * 100)}pct": max(1, round(share * ids.shape[0])) for share in SHARES}}
        reached: dict[str, float] = {}
        start = time.perf_counter()

        class Reached(Exception):
            pass

        def progress(done: int, total: int) -> None:
            for name, count in wanted.items():
                if done >= count and name not in reached:
                    reached[name] = round(time.perf_counter() - start, 2)
            if len(reached) == len(wanted):
                raise Reached  # (the rest is the same work, older)

        try:
            archive.semantic.run_foreground(progress)
        except Reached:
            pass
        out: dict[str, float] = {"of_passages": int(ids.shape[0])}
        for name, count in wanted.items():
            out[f"{name}_passages"] = count
            out[f"{name}_s"] = reached.get(name, -1.0)
        return out


def _wall(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return time.perf_counter() - start


def per_call(home: Path, cache: Path, runs: int) -> dict[str, float]:
    env = _env(home, cache)
    best: dict[str, float] = {}

    def note(name: str, seconds: float) -> None:
        best[name] = round(min(best.get(name, 1e9), seconds), 3)

    for i in range(runs):
        fresh = f"{PROSE} (take {i} {time.time_ns()})"  # a query never asked: its vector is made
        note("prose_lexical_s", _wall([str(SCRIPT), "search", fresh, "--mode", "lexical"], env))
        note("prose_new_s", _wall([str(SCRIPT), "search", fresh + " again"], env))
        note("prose_asked_again_s", _wall([str(SCRIPT), "search", PROSE], env))
        note("words_s", _wall([str(SCRIPT), "search", WORDS], env))
        note("import_numpy_s", _wall([sys.executable, "-c", "import numpy"], env))
    best["prose_new_ratio"] = round(best["prose_new_s"] / best["prose_lexical_s"], 2)
    best["prose_again_ratio"] = round(best["prose_asked_again_s"] / best["prose_lexical_s"], 2)
    best["words_vs_numpy"] = round(best["words_s"] / best["import_numpy_s"], 2)
    return best


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--skip-index", action="store_true", help="only the per-call part, on --cache")
    ap.add_argument("--cache", type=Path, help="XDG_CACHE_HOME of a built cache, for --skip-index")
    ap.add_argument("--newest-only", action="store_true", help="only how soon the newest passages have vectors")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="relay-phases-"))
    out: dict[str, dict] = {}
    try:
        if args.newest_only:
            out["newest_week"] = newest_week(args.home, work / "week")
            args.runs = 0
        elif not args.skip_index:
            out["words_only"] = timed_index(args.home, work / "off", RELAY_SEARCH_MODEL="off")
            out["model_on"] = timed_index(args.home, work / "on")
            out["vectors"] = vector_facts(args.home, work / "on")
            embed_cpu = out["model_on"]["cpu_s"] - out["words_only"]["cpu_s"]
            out["embedding"] = {
                "cpu_s": round(embed_cpu, 1),
                "cpu_s_per_1000_passages": round(embed_cpu / max(1, out["vectors"]["passages"]) * 1000, 2),
                "cpu_s_per_1000_slots": round(embed_cpu / max(1, out["vectors"]["slots"]) * 1000, 2),
            }
            out["newest_week"] = newest_week(args.home, work / "week")
        if args.runs:
            out["per_call"] = per_call(args.home, args.cache if args.skip_index and args.cache else work / "on", args.runs)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for name, row in out.items():
        print(f"{name:>12}: " + ", ".join(f"{k} {v}" for k, v in row.items()))
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
