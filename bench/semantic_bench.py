"""Hybrid recall's costs on a real archive: embedding throughput, peak RSS, vector bytes, query latency.

    python -m bench.semantic_bench --home HOME [--queries ../shared/eval/dev-queries.json]

HOME is an eval home (``python -m bench.eval.make_home``). The cache is built first
(BM25), then every passage is embedded while CPU time and peak RSS are measured, then
each query runs in ``lexical``, ``auto`` and ``hybrid`` mode (warm, in-process) for p50/p99.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import time
from pathlib import Path

from bench.eval.evaluate import eval_env


def _cpu() -> float:
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _rss_now_kb() -> int:
    """The process's resident set now (Linux; 0 elsewhere): what the embedding left behind, beside its peak."""
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            return next((int(line.split()[1]) for line in f if line.startswith("VmRSS:")), 0)
    except OSError:
        return 0


def _pct(values: list[float], p: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(round(p / 100 * (len(values) - 1))))]


def _query_texts(path: Path) -> list[str]:
    """The dev set's ``q``s, the eval sets' or the generator's ``query``s."""
    data = json.loads(path.read_text(encoding="utf-8"))
    entries = data["queries"] if isinstance(data, dict) else data
    return [e.get("q") or e.get("query") for e in entries if e.get("q") or e.get("query")]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--queries", type=Path, default=Path("../shared/eval/dev-queries.json"))
    ap.add_argument("--fresh", action="store_true", help="delete the cache first")
    ap.add_argument("--cache", type=Path, help="XDG_CACHE_HOME to use instead of HOME/.cache (a copy of a built cache)")
    ap.add_argument("--no-queries", action="store_true", help="stop after embedding (the memory and throughput part)")
    args = ap.parse_args(argv)
    from core.api import Archive
    from core.config import Config

    env = eval_env(args.home)
    if args.cache:
        env["XDG_CACHE_HOME"] = str(args.cache)
    config = Config.from_env(env)
    if args.fresh:
        shutil.rmtree(config.cache_path, ignore_errors=True)
    t0, c0 = time.perf_counter(), _cpu()
    archive = Archive.open(config)
    t1, c1 = time.perf_counter(), _cpu()
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    archive.wait_semantic()
    t2, c2 = time.perf_counter(), _cpu()
    rss_after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    stats = archive.stats()
    sem = stats.semantic
    rss_now = _rss_now_kb()
    queries = _query_texts(args.queries) if args.queries.exists() and not args.no_queries else []
    latency: dict[str, list[float]] = {"lexical": [], "auto": [], "hybrid": []}
    for q in queries[:5]:  # warm both paths (the model's first run)
        archive.search(q, mode="auto")
    for mode in latency:
        for q in queries:
            t = time.perf_counter()
            archive.search(q, limit=10, mode=mode)
            latency[mode].append((time.perf_counter() - t) * 1000)
    archive.close()
    gb = stats.transcript_bytes / 1e9
    out = {
        "transcript_bytes": stats.transcript_bytes, "passages": sem.get("passages"), "embedded": sem.get("embedded"),
        "bm25_open_s": round(t1 - t0, 2), "bm25_cpu_s": round(c1 - c0, 2),
        "embed_wall_s": round(t2 - t1, 2), "embed_cpu_s": round(c2 - c1, 2),
        "embed_cpu_s_per_gb": round((c2 - c1) / gb, 1) if gb else None,
        "passages_per_s": round((sem.get("embedded") or 0) / max(t2 - t1, 1e-9), 1),
        "peak_rss_mb_before_embedding": round(rss_before / 1024, 1),
        "peak_rss_mb_after_embedding": round(rss_after / 1024, 1),
        "rss_mb_after_embedding": round(rss_now / 1024, 1),
        "vector_bytes": sem.get("vector_bytes"), "index_bytes": stats.index_bytes,
        "vectors_pct_of_transcripts": round(100 * (sem.get("vector_bytes") or 0) / max(stats.transcript_bytes, 1), 2),
        **{f"{m}_p50_ms": round(_pct(v, 50), 1) for m, v in latency.items() if v},
        **{f"{m}_p99_ms": round(_pct(v, 99), 1) for m, v in latency.items() if v},
    }  # fmt: skip
    print(json.dumps(out, indent=1))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
