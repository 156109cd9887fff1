"""One command: relay-search vs the original design, same run, same data (issue 3).

    python -m bench.run                  # ~1.8 GB / 2,400 sessions (generated if needed)
    python -m bench.run --size-mb 50     # quick pass
    python -m bench.run --systems baseline

Per system, each phase runs in its own process (peak RSS = max over its phases):
cold (empty cache: build + index size), warm (restart on the cache: first answer +
query latency over the query set), live (watch, append turns to live session files,
time append→searchable). The appended files are restored byte-for-byte afterwards.
Prints a table with ratios and writes ``bench/RESULTS.md``.
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
from datetime import datetime, timezone
from pathlib import Path

import orjson

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.generate import MANIFEST_VERSION, default_out, generate
from bench.harness import (
    ChildResult, dir_size, fmt_bytes, fmt_s, last_json_line, log, markdown_table, p50, p95, p99,
    restored, run_child,
)

BENCH = Path(__file__).resolve().parent
REPO = BENCH.parent
DATA = BENCH / "data"


# ---------------------------------------------------------------------------------------
# Corpus


def ensure_archive(size_mb: float, sessions: int, seed: int, out: Path | None) -> tuple[Path, dict]:
    """The generated archive for these parameters (generating it if missing/different)."""
    out = out or default_out(size_mb, sessions, seed)
    manifest_path = out / "manifest.json"
    if manifest_path.exists():
        m = orjson.loads(manifest_path.read_bytes())
        if (m.get("version"), m.get("size_mb"), m.get("sessions"), m.get("seed")) == (
            MANIFEST_VERSION, size_mb, sessions, seed) and (out / "queries.json").exists():
            log(f"using {out} ({m['total_bytes'] / 1e6:,.0f} MB, {m['files']:,} files)")
            return out, m
    log(f"generating {size_mb:g} MB / {sessions} sessions into {out}")
    return out, generate(out, size_mb=size_mb, sessions=sessions, seed=seed)


def live_files(root: Path, manifest: dict, count: int = 3) -> list[Path]:
    """Recent, mid-sized sessions from different projects: where an agent would append."""
    entries = []
    for s in manifest["session_files"]:
        path = root / s["path"]
        st = path.stat()
        if 50_000 <= st.st_size <= 5_000_000:
            entries.append((st.st_mtime, s["path"], path))
    entries.sort(reverse=True)
    chosen, projects = [], set()
    for _, rel, path in entries:
        project = rel.split("/")[2]
        if project not in projects:
            chosen.append(path)
            projects.add(project)
        if len(chosen) == count:
            break
    return chosen


def warm_page_cache(root: Path) -> None:
    """Read every transcript once so both systems start with them in the OS page cache."""
    for dirpath, _, files in os.walk(root / ".claude"):
        for name in files:
            with open(os.path.join(dirpath, name), "rb") as fh:
                while fh.read(1 << 24):
                    pass


# ---------------------------------------------------------------------------------------
# Measuring one system


def _phase(system: str, phase: str, root: Path, cache: Path, *extra: str) -> tuple[dict, ChildResult]:
    cmd = [sys.executable, "-m", "bench.worker", "--system", system, "--phase", phase,
           "--root", str(root), "--cache", str(cache), *extra]
    log(f"[{system}] {phase} …")
    child = run_child(cmd, cwd=REPO, timeout=3600)
    result = last_json_line(child.stdout)
    if child.returncode not in (0, 3) or result.get("status") not in ("ok", "pending"):
        raise RuntimeError(f"{system} {phase} failed (exit {child.returncode}): {result}")
    result["wall_s"] = child.wall_s
    result["peak_rss_bytes"] = max(result.get("peak_rss_bytes", 0), child.peak_rss_bytes)
    return result, child


def measure_system(system: str, root: Path, queries: Path, manifest: dict, *, appends: int,
                   interval: float) -> dict:
    """All metrics for one system; ``{"status": "pending", ...}`` if it cannot run yet."""
    cache = DATA / "cache" / system
    q = ["--queries", str(queries)]
    cold, _ = _phase(system, "cold", root, cache, *([] if _persistent(system) else q))
    if cold["status"] == "pending":
        log(f"[{system}] pending: {cold.get('error')}")
        return cold
    out: dict = {"status": "ok", "phases": {"cold": cold}}
    notes: list[str] = []
    if _persistent(system):
        warm, _ = _phase(system, "warm", root, cache, *q)
        out["phases"]["warm"] = warm
        out["warm_first_answer_s"] = warm["first_answer_s"]
        out["warm_process_first_answer_s"] = warm["process_first_answer_s"]
        out["warm_cli_wall_s"] = _cli_wall(root, cache, queries)
        timed = warm
    else:
        notes.append("no persistence: a warm start is a full cold build, so warm = cold")
        out["warm_first_answer_s"] = cold["cold_s"]
        out["warm_process_first_answer_s"] = None
        out["warm_cli_wall_s"] = None
        timed = cold
    files = live_files(root, manifest)
    extra = [f"--live-file={p}" for p in files] + ["--appends", str(appends), "--interval", str(interval)]
    with restored(files):
        live, _ = _phase(system, "live", root, cache, *extra)
    out["phases"]["live"] = live
    lat = timed["query_latencies_s"]
    app = live["append_latencies_s"]
    out.update(
        cold_index_s=cold["cold_s"],
        cold_mb_per_s=manifest["total_bytes"] / 1e6 / cold["cold_s"],
        query_p50_s=p50(lat), query_p99_s=p99(lat), queries=len(lat),
        queries_with_hits=timed["queries_with_hits"],
        append_p50_s=p50(app) if app else None, append_p95_s=p95(app) if app else None,
        appends=len(app), append_timeouts=live["append_timeouts"],
        peak_rss_bytes=max(p["peak_rss_bytes"] for p in out["phases"].values()),
        index_bytes=cold["index_bytes"],
        index_pct=100 * cold["index_bytes"] / manifest["total_bytes"],
        stats=cold.get("stats", {}), notes=notes,
    )
    return out


def _persistent(system: str) -> bool:
    return system != "baseline"


def _cli_wall(root: Path, cache: Path, queries: Path, runs: int = 3) -> float | None:
    """Median wall time of a warm `relay-search search` process."""
    from bench.relay_adapter import cli_command, relay_env

    qs = orjson.loads(queries.read_bytes())["queries"]
    walls = []
    for item in qs[1 : runs + 1]:
        child = run_child(cli_command(item["query"]), env=relay_env(root, cache), cwd=REPO, echo_stderr=False)
        if child.returncode not in (0, 1):
            log(f"[relay] CLI failed ({child.returncode}): {child.stderr.strip()[-300:]}")
            return None
        walls.append(child.wall_s)
    return p50(walls)


def measure_baseline(root: Path, queries: Path, manifest: dict, *, appends: int = 12, interval: float = 1.0) -> dict:
    """The original design (bench/baseline.py): fully working."""
    return measure_system("baseline", root, queries, manifest, appends=appends, interval=interval)


def measure_relay(root: Path, queries: Path, manifest: dict, *, appends: int = 12, interval: float = 1.0) -> dict:
    """relay-search through bench/relay_adapter.py.

    TODO(relay): works once ``core.api`` provides what relay_adapter.py documents
    (open_core / index / search / start_watching / close); until then it returns
    ``{"status": "pending"}`` and the table shows "pending".
    """
    return measure_system("relay", root, queries, manifest, appends=appends, interval=interval)


# ---------------------------------------------------------------------------------------
# Report

METRICS: list[tuple[str, str, str, str]] = [
    # (label, key, format, target for relay-search)
    ("cold index", "cold_index_s", "s", "≥ 3× faster than baseline"),
    ("cold index throughput", "cold_mb_per_s", "mbps", "≥ 500 MB/s"),
    ("warm start → first answer (in process)", "warm_first_answer_s", "s", "≤ 0.5 s"),
    ("warm `relay-search search` process, wall", "warm_cli_wall_s", "s", "≤ 1.0 s"),
    ("query p50", "query_p50_s", "s", "≤ 10 ms"),
    ("query p99", "query_p99_s", "s", "≤ 50 ms"),
    ("append → searchable p50", "append_p50_s", "s", ""),
    ("append → searchable p95", "append_p95_s", "s", "≤ 500 ms"),
    ("peak RSS", "peak_rss_bytes", "bytes", "≤ 400 MB"),
    ("index on disk", "index_bytes", "bytes", "≤ 10% of transcripts"),
    ("index on disk / transcripts", "index_pct", "pct", "≤ 10%"),
]
HIGHER_IS_BETTER = {"cold_mb_per_s"}


def _fmt(value: object, kind: str) -> str:
    if value is None:
        return "—"
    if kind == "s":
        return fmt_s(float(value))  # type: ignore[arg-type]
    if kind == "bytes":
        return fmt_bytes(float(value))  # type: ignore[arg-type]
    if kind == "mbps":
        return f"{value:,.0f} MB/s"
    if kind == "pct":
        return f"{value:.2f}%"
    return str(value)


def _ratio(key: str, base: dict, relay: dict) -> str:
    b, r = base.get(key), relay.get(key)
    if not isinstance(b, (int, float)) or not isinstance(r, (int, float)) or not b or not r:
        return "—"
    ratio = r / b if key in HIGHER_IS_BETTER else b / r
    return f"{ratio:,.1f}×"


def report(results: dict[str, dict], manifest: dict, args: argparse.Namespace, root: Path) -> str:
    base = results.get("baseline", {"status": "skipped"})
    relay = results.get("relay", {"status": "skipped"})
    col = lambda r: r if r.get("status") == "ok" else {}  # noqa: E731
    rows = []
    for label, key, kind, target in METRICS:
        rows.append([
            label,
            _fmt(col(base).get(key), kind) if base.get("status") == "ok" else base.get("status", "—"),
            _fmt(col(relay).get(key), kind) if relay.get("status") == "ok" else relay.get("status", "—"),
            _ratio(key, col(base), col(relay)),
            target,
        ])
    table = markdown_table(["metric", "original design (baseline)", "relay-search", "ratio (better ×)", "target"], rows)
    stats = col(base).get("stats", {})
    lines = [
        "# Benchmark results",
        "",
        f"Generated by `{' '.join(['python -m bench.run', *args.argv])}` on {datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC.",
        "",
        f"- corpus: {manifest['total_bytes']:,} bytes ({manifest['total_bytes'] / 1e6:,.0f} MB) in "
        f"{manifest['files']:,} files: {manifest['sessions']:,} sessions + {manifest['subagent_files']:,} "
        f"subagent files, {manifest['projects']} project dirs, {manifest['chains']:,} slug chains "
        f"(seed {manifest['seed']}, `{root.relative_to(REPO) if root.is_relative_to(REPO) else root}`)"
        + (f"; the baseline indexes {int(stats['turns']):,} turns" if stats.get("turns") else ""),
        f"- machine: {os.cpu_count()} cores, {platform.python_implementation()} {platform.python_version()}, "
        f"{platform.system()} {platform.release()}",
        f"- queries: {col(base).get('queries') or col(relay).get('queries') or '—'} "
        f"(`queries.json`: phrases, common and rare words, identifiers, mixes); "
        f"with hits: baseline {col(base).get('queries_with_hits', '—')}, relay-search {col(relay).get('queries_with_hits', '—')}",
        f"- appends: {args.appends} turns (user + assistant record) round-robin into 3 live session files, "
        f"{args.interval:g} s apart, polled every 10 ms until the new token is found; files restored afterwards",
        "- transcripts are in the OS page cache for both systems; each phase runs in its own process "
        "(peak RSS is the max over a system's phases)",
        "",
        table,
        "",
    ]
    for name, r in (("baseline", base), ("relay-search", relay)):
        for note in r.get("notes", []):
            lines.append(f"- {name}: {note}")
        if r.get("status") == "pending":
            lines.append(f"- {name}: pending ({r.get('error', '')}); plug it in via `bench/relay_adapter.py`")
        if r.get("status") == "ok" and r.get("append_timeouts"):
            lines.append(f"- {name}: {r['append_timeouts']} appends never became searchable (timeout)")
    if stats:
        lines.append(
            f"- baseline cold build split: parse (stdlib json) {stats['parse_s']:.2f} s, "
            f"tokenize + index {stats['total_s'] - stats['parse_s']:.2f} s"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=1800)
    ap.add_argument("--sessions", type=int, help="default: 2400 scaled by size (min 20)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, help="archive dir (default bench/data/archive-…)")
    ap.add_argument("--systems", default="baseline,relay", help="comma list of baseline,relay")
    ap.add_argument("--appends", type=int, default=12)
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between appends")
    ap.add_argument("--results", type=Path, default=BENCH / "RESULTS.md")
    args = ap.parse_args(argv)
    args.argv = argv
    sessions = args.sessions or max(20, round(2400 * args.size_mb / 1800))
    root, manifest = ensure_archive(args.size_mb, sessions, args.seed, args.out)
    root = root.resolve()
    queries = root / "queries.json"
    warm_page_cache(root)

    results: dict[str, dict] = {}
    for system in [s.strip() for s in args.systems.split(",") if s.strip()]:
        measure = {"baseline": measure_baseline, "relay": measure_relay}[system]
        results[system] = measure(root, queries, manifest, appends=args.appends, interval=args.interval)

    text = report(results, manifest, args, root)
    print(text)
    args.results.write_text(text, encoding="utf-8")
    raw = DATA / f"results-{args.size_mb:g}mb.json"
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_bytes(orjson.dumps({"manifest": {k: v for k, v in manifest.items() if k != "session_files"},
                                  "results": results}, option=orjson.OPT_INDENT_2))
    log(f"wrote {args.results} and {raw} (transcripts {dir_size(root / '.claude') / 1e6:,.0f} MB)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
