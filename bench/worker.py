"""One measured phase of one system, in its own process (so peak RSS is its own).

    python -m bench.worker --system baseline --phase cold --root R --cache C [--queries Q]

Prints progress on stderr and one JSON result line on stdout. Exit code 3 with
``{"status": "pending"}`` when the system cannot be imported yet (relay's ``core.api``).
"""

from __future__ import annotations

import time

T_PROCESS = time.perf_counter()  # before the heavy imports: warm start counts them

import argparse  # noqa: E402
import shutil  # noqa: E402
import sys  # noqa: E402
from pathlib import Path  # noqa: E402

import orjson  # noqa: E402

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import log, measure_append_latency, self_peak_rss_bytes, time_queries  # noqa: E402
from bench.queries import load_queries  # noqa: E402


def _emit(result: dict, code: int = 0) -> int:
    result["peak_rss_bytes"] = self_peak_rss_bytes()
    sys.stdout.write(orjson.dumps(result).decode() + "\n")
    sys.stdout.flush()
    return code


def _progress_logger(name: str):
    last = [0.0]

    def progress(done: int, total: int) -> None:
        now = time.perf_counter()
        if now - last[0] > 1.0 or done >= total:
            last[0] = now
            log(f"  [{name}] {done:,}/{total:,}")

    return progress


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--system", required=True, choices=["baseline", "relay"])
    ap.add_argument("--phase", required=True, choices=["cold", "warm", "merge", "live"])
    ap.add_argument("--root", type=Path, required=True)
    ap.add_argument("--cache", type=Path, required=True)
    ap.add_argument("--queries", type=Path, help="time these queries after the phase")
    ap.add_argument("--live-file", type=Path, action="append", default=[])
    ap.add_argument("--appends", type=int, default=12)
    ap.add_argument("--interval", type=float, default=1.0)
    ap.add_argument("--settle", type=float, default=1.0, help="seconds between watch start and first append")
    args = ap.parse_args(argv)

    t_imports = time.perf_counter()
    try:
        from bench.systems import make_system

        if args.phase == "cold":
            shutil.rmtree(args.cache, ignore_errors=True)
        args.cache.mkdir(parents=True, exist_ok=True)
        system = make_system(args.system, args.root, args.cache)
    except ImportError as exc:  # relay's core.api not written yet
        return _emit({"status": "pending", "error": f"{type(exc).__name__}: {exc}"}, 3)
    result: dict = {"status": "ok", "system": args.system, "phase": args.phase}
    queries = load_queries(args.queries) if args.queries else []

    if args.phase == "cold":
        t0 = time.perf_counter()
        system.build(progress=_progress_logger(args.system))
        result["cold_s"] = time.perf_counter() - t0
    elif args.phase == "warm":
        t0 = time.perf_counter()
        system.open()
        result["open_s"] = time.perf_counter() - t0
        first = queries[0] if queries else "error"
        system.search(first)
        t1 = time.perf_counter()
        result["first_answer_s"] = t1 - t0  # open + first query
        result["process_first_answer_s"] = t1 - T_PROCESS  # + imports
        result["imports_s"] = t_imports - T_PROCESS
        catch_up = getattr(system, "catch_up", None)
        if catch_up:
            catch_up()
            result["catch_up_s"] = time.perf_counter() - t1
    elif args.phase == "merge":  # a long-lived process's first background merges after a cold index
        system.open()
        before = system.segment_count()
        t0 = time.perf_counter()
        system.settle_merges()
        result["merge_s"] = time.perf_counter() - t0
        result["segments_before"], result["segments_after"] = before, system.segment_count()
    else:  # live
        t0 = time.perf_counter()
        system.open()
        result["open_s"] = time.perf_counter() - t0
        system.start_watching()
        time.sleep(args.settle)
        appended = measure_append_latency(
            args.live_file, lambda token: bool(system.search(token, 1)),
            n=args.appends, interval_s=args.interval, log=lambda m: log(f"  [{args.system}] {m}"),
        )
        result["append_latencies_s"] = appended.latencies_s
        result["append_timeouts"] = appended.timeouts

    if queries and args.phase not in ("live", "merge"):
        latencies, with_hits = time_queries(system.search, queries)
        result["query_latencies_s"] = latencies
        result["queries_with_hits"] = with_hits
    if args.phase == "cold":
        result["index_bytes"] = system.index_bytes()
    stats = getattr(system, "stats", None)
    if stats:
        result["stats"] = stats()
    system.close()
    return _emit(result)


if __name__ == "__main__":
    raise SystemExit(main())
