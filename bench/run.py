"""One command: relay-search vs the original design, same run, same data (issue 3).

    python -m bench.run                  # ~1.8 GB / 2,400 sessions (generated if needed)
    python -m bench.run --size-mb 50     # quick pass
    python -m bench.run --systems baseline
    python -m bench.run --only app       # just the terminal app (issue 5)
    python -m bench.run --only team      # just team mode on PostgreSQL (issue 7)

Per system, each phase runs in its own process (peak RSS = max over its phases):
cold (empty cache: build + index size), warm (restart on the cache: first answer +
query latency over the query set), live (watch, append turns to live session files,
time append→searchable). The appended files are restored byte-for-byte afterwards.
Then the terminal app on the warm relay cache (``bench/app_bench.py``: launch,
keystroke → hit list, opening a 2,000-turn session) and team mode
(``bench/team_bench.py``: sync as N users, team search), each in its own process.
Prints a table with ratios and writes ``bench/RESULTS.md``; parts not measured in this
run are carried over from the previous raw results (and say so).
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import time
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
        merge, _ = _phase(system, "merge", root, cache)  # a long-lived process's first merges
        out["phases"]["merge"] = merge
        out["merge_s"] = merge.get("merge_s")
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
        **{f"peak_rss_{name}_bytes": p["peak_rss_bytes"] for name, p in out["phases"].items()},
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
# The terminal app (issue 5) and team mode (issue 7)


def _child_json(name: str, cmd: list[str], timeout: float = 3600) -> dict:
    child = run_child(cmd, cwd=REPO, timeout=timeout)
    result = last_json_line(child.stdout)
    if child.returncode != 0 or result.get("status") not in ("ok", "skipped"):
        raise RuntimeError(f"{name} failed (exit {child.returncode}): {str(result)[:500]}")
    result["wall_s"] = child.wall_s
    result["peak_rss_bytes"] = max(result.get("peak_rss_bytes", 0), child.peak_rss_bytes)
    return result


def measure_app(root: Path, queries: Path) -> dict:
    """The app on the warm relay cache (built by the relay phases; built here if missing).

    A 2,000-turn session is written into a project dir of its own in the archive, the
    cache catches up (own process), the app is measured (own process); then the dir is
    removed, the projects dir's times restored and the cache caught up again.
    """
    from bench.app_bench import long_session_project, write_long_session
    from bench.real_long import write_real_long_sessions

    cache = DATA / "cache" / "relay"
    base = [sys.executable, "-m", "bench.app_bench", "--root", str(root), "--cache", str(cache)]
    project = long_session_project(root)
    shutil.rmtree(project, ignore_errors=True)  # left over from an interrupted run
    projects = project.parent
    st = projects.stat()
    t0 = time.perf_counter()
    path = write_long_session(root)
    log(f"[app] wrote a 2,000-turn session ({path.stat().st_size / 1e6:,.1f} MB) in {time.perf_counter() - t0:.1f} s")
    real_ids = write_real_long_sessions(project)  # clones of the real spotter sessions, removed with the dir
    log(f"[app] cloned {len(real_ids)} real long sessions into it")
    try:
        log("[app] catching the relay cache up …" if (cache / "relay-search").exists()
            else "[app] no relay cache yet: building it …")
        prep = _child_json("app cache sync", [*base, "--sync-only"])
        log("[app] measuring …")
        result = _child_json("app", [*base, "--queries", str(queries), "--real-ids", ",".join(real_ids)])
        result["cache_sync_s"] = prep["sync_s"]
        result["long_session_bytes"] = path.stat().st_size
    finally:
        shutil.rmtree(project, ignore_errors=True)
        os.utime(projects, ns=(st.st_atime_ns, st.st_mtime_ns))
        _child_json("app cache sync", [*base, "--sync-only"])  # the session leaves the cache too
    return result


def measure_team(root: Path, users: int) -> dict:
    log(f"[team] {users} users …")
    result = _child_json("team", [sys.executable, "-m", "bench.team_bench", "--root", str(root), "--users", str(users)])
    if result["status"] == "skipped":
        log(f"[team] skipped: {result['note']}")
    return result


def _guarded(name: str, measure) -> dict:
    """A failing app/team phase is reported in the table, not fatal to the run."""
    try:
        return measure()
    except Exception as exc:  # noqa: BLE001 - reported
        log(f"[{name}] failed: {exc}")
        return {"status": "failed", "error": f"{type(exc).__name__}: {exc}"[:500]}


# ---------------------------------------------------------------------------------------
# Report

METRICS: list[tuple[str, str, str, str]] = [
    # (label, key, format, target for relay-search)
    ("cold index", "cold_index_s", "s", "≥ 1.3× faster than baseline"),
    ("cold index throughput", "cold_mb_per_s", "mbps", "≥ 500 MB/s"),
    ("warm start → first answer (in process)", "warm_first_answer_s", "s", "≤ 0.5 s"),
    ("warm `relay-search search` process, wall", "warm_cli_wall_s", "s", "≤ 1.0 s"),
    ("query p50", "query_p50_s", "s", "≤ 10 ms"),
    ("query p99", "query_p99_s", "s", "≤ 50 ms"),
    ("append → searchable p50", "append_p50_s", "s", ""),
    ("append → searchable p95", "append_p95_s", "s", "≤ 500 ms"),
    ("peak RSS", "peak_rss_bytes", "bytes", "≤ 250 MB"),
    ("peak RSS: cold index", "peak_rss_cold_bytes", "bytes", "≤ 250 MB"),
    ("peak RSS: long-lived process, first merges", "peak_rss_merge_bytes", "bytes", "≤ 250 MB"),
    ("peak RSS: live appends", "peak_rss_live_bytes", "bytes", "≤ 250 MB"),
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


APP_METRICS: list[tuple[str, tuple[str, ...], str, str]] = [
    # (label, path into results["app"], format, target)
    ("app: launch → interactive (warm cache)", ("launch", "interactive_s"), "s", "≤ 1 s"),
    ("app: keystroke → hit list p50", ("keystrokes", "p50_s"), "s", ""),
    ("app: keystroke → hit list p95", ("keystrokes", "p95_s"), "s", "≤ 50 ms"),
    ("app: open 2,000-turn session → first paint (worst of 5)", ("open", "top_max_s"), "s", "≤ 300 ms"),
    ("app: same, at a hit (turn 1,500) → first paint (worst of 5)", ("open", "hit_max_s"), "s", "≤ 300 ms"),
    ("app: open real-shaped long sessions (spotter clones), top and at a hit → first paint (worst of 5)",
     ("open_real", "worst_s"), "s", "≤ 300 ms"),
]


def _team_metrics(users: int, mb: float | None) -> list[tuple[str, tuple[object, ...], str, str]]:
    size = f" ({mb:,.0f} MB)" if mb else ""
    return [
        (f"team: sync, first user{size}", ("sync", 0, "seconds"), "s", ""),
        ("team: sync throughput, first user", ("sync", 0, "mb_per_s"), "mbps", ""),
        ("team: re-sync, nothing new", ("resync_nothing_new_s",), "s", ""),
        (f"team: search p50, all {users} users", ("search_all_users", "p50_ms"), "ms", ""),
        (f"team: search p99, all {users} users", ("search_all_users", "p99_ms"), "ms", ""),
        ("team: search p50, one user (`user=`)", ("search_one_user", "p50_ms"), "ms", ""),
        ("team: search p99, one user (`user=`)", ("search_one_user", "p99_ms"), "ms", ""),
    ]


def _get(data: dict, path: tuple[object, ...]) -> object:
    for key in path:
        try:
            data = data[key]  # type: ignore[index]
        except (KeyError, IndexError, TypeError):
            return None
    return data


def _extra_rows(name: str, r: dict, metrics) -> list[list[str]]:
    """Rows measured for relay-search only: the baseline and ratio columns stay empty."""
    rows = []
    for label, path, kind, target in metrics:
        if r.get("status") == "ok":
            value = _get(r, path)
            cell = _fmt(value / 1000 if kind == "ms" and value is not None else value, "s" if kind == "ms" else kind)
        else:
            cell = r.get("status", "skipped")
        rows.append([label, "—", cell, "—", target])
    return rows


def _ms(s: float | None) -> str:
    return "—" if s is None else f"{s * 1000:.0f} ms"


def report(results: dict[str, dict], manifest: dict, args: argparse.Namespace, root: Path,
           carried: dict[str, str] | None = None) -> str:
    base = results.get("baseline", {"status": "skipped"})
    relay = results.get("relay", {"status": "skipped"})
    app = results.get("app", {"status": "skipped"})
    team = results.get("team", {"status": "skipped"})
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
    users = team.get("users") or getattr(args, "team_users", 3)
    rows += _extra_rows("app", app, APP_METRICS)
    rows += _extra_rows("team", team, _team_metrics(users, team.get("transcript_mb")))
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
    ]
    if app.get("status") == "ok":
        k, o, la = app["keystrokes"], app["open"], app["launch"]
        lines.append(
            f"- app (`bench/app_bench.py`): the real Textual app, headless via Pilot ({app.get('size', '160×48')}), on the "
            f"relay cache above, caught up first. Launch: `make_app` + `run_test` until the sessions pane has "
            f"{la['session_rows']} rows and a typed key shows in the search input, both painted (imports before "
            f"that: {_ms(la['imports_s'])}). Keystrokes: {k['count']} keys typing {len(k['queries'])} queries from "
            f"`queries.json`, each from the key event to the first screen refresh after the hit list holds the hits "
            f"for the query ending in that key (the search call itself: p50 {_ms(k['search_p50_s'])}, "
            f"p95 {_ms(k['search_p95_s'])}). Open: a generated {o['turns']:,}-turn session "
            f"({app['long_session_bytes'] / 1e6:,.1f} MB, written into the archive for this phase and removed "
            f"afterwards), `open_ref` as `enter` calls it until the first refresh after the reader mounted its "
            f"page; worst of {o['repeats']} opens (median: top {_ms(o['top_p50_s'])}, at the hit {_ms(o['hit_p50_s'])}); "
            f"app process peak RSS {fmt_bytes(app.get('peak_rss_bytes'))}"
        )
    if team.get("status") == "ok":
        others = ", ".join(f"{p['user']} {fmt_s(p['seconds'])}" for p in team["sync"][1:])
        lines.append(
            f"- team (`bench/team_bench.py` → `core.team.bench.run`): the archive indexed locally into a temp dir "
            f"({team['local_index_s']:.1f} s, not in the table), then pushed as {users} users to a {team['server']}; "
            f"the other users' syncs: {others or '—'}; one appended turn disk → store "
            f"{fmt_s(team.get('append_to_store_s'))}; store {team['db_mb']:,.0f} MB for {team['docs_rows']:,} passages; "
            f"search: the {team['search_all_users']['queries']} queries of `queries.json`, top 10 "
            f"(no hits: all users {team['search_all_users']['no_hits']}, one user {team['search_one_user']['no_hits']})"
        )
    lines += ["", table, ""]
    for name, r in (("baseline", base), ("relay-search", relay)):
        for note in r.get("notes", []):
            lines.append(f"- {name}: {note}")
        if r.get("status") == "pending":
            lines.append(f"- {name}: pending ({r.get('error', '')}); plug it in via `bench/relay_adapter.py`")
        if r.get("status") == "ok" and r.get("append_timeouts"):
            lines.append(f"- {name}: {r['append_timeouts']} appends never became searchable (timeout)")
    for name, r in (("app", app), ("team", team)):
        if r.get("status") == "skipped" and r.get("note"):
            lines.append(f"- {name}: skipped: {r['note']}")
        elif r.get("status") == "failed":
            lines.append(f"- {name}: failed: {r.get('error', '')}")
    if stats:
        lines.append(
            f"- baseline cold build split: parse (stdlib json) {stats['parse_s']:.2f} s, "
            f"tokenize + index {stats['total_s'] - stats['parse_s']:.2f} s"
        )
    for part, when in (carried or {}).items():
        lines.append(f"- {part}: not measured by this command; carried over from the run of {when}")
    return "\n".join(lines) + "\n"


def _previous(raw: Path, manifest: dict) -> tuple[dict, str]:
    """Results of the last run on the same corpus (for parts this run skips)."""
    if not raw.exists():
        return {}, ""
    try:
        data = orjson.loads(raw.read_bytes())
    except orjson.JSONDecodeError:
        return {}, ""
    keys = ("version", "size_mb", "sessions", "seed", "total_bytes")
    if any(data.get("manifest", {}).get(k) != manifest.get(k) for k in keys):
        return {}, ""
    when = data.get("written_at") or f"{datetime.fromtimestamp(raw.stat().st_mtime, timezone.utc):%Y-%m-%d %H:%M} UTC"
    return data.get("results", {}), when


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size-mb", type=float, default=1800)
    ap.add_argument("--sessions", type=int, help="default: 2400 scaled by size (min 20)")
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--out", type=Path, help="archive dir (default bench/data/archive-…)")
    ap.add_argument("--systems", default="baseline,relay", help="comma list of baseline,relay (empty: neither)")
    ap.add_argument("--appends", type=int, default=12)
    ap.add_argument("--interval", type=float, default=1.0, help="seconds between appends")
    ap.add_argument("--no-app", action="store_true", help="skip the terminal app phase")
    ap.add_argument("--no-team", action="store_true", help="skip the team mode phase")
    ap.add_argument("--team-users", type=int, default=3, help="users the archive is synced as (team phase)")
    ap.add_argument("--only", choices=["app", "team"], help="just this phase (other rows: carried over)")
    ap.add_argument("--results", type=Path, default=BENCH / "RESULTS.md")
    args = ap.parse_args(argv)
    args.argv = argv
    if args.only:
        args.systems = ""
        args.no_app, args.no_team = args.only != "app", args.only != "team"
    started = time.perf_counter()
    sessions = args.sessions or max(20, round(2400 * args.size_mb / 1800))
    root, manifest = ensure_archive(args.size_mb, sessions, args.seed, args.out)
    root = root.resolve()
    queries = root / "queries.json"
    warm_page_cache(root)

    measured_at = f"{datetime.now(timezone.utc):%Y-%m-%d %H:%M} UTC"
    results: dict[str, dict] = {}
    for system in [s.strip() for s in args.systems.split(",") if s.strip()]:
        measure = {"baseline": measure_baseline, "relay": measure_relay}[system]
        results[system] = measure(root, queries, manifest, appends=args.appends, interval=args.interval)
    if not args.no_app:
        results["app"] = _guarded("app", lambda: measure_app(root, queries))
    if not args.no_team:
        results["team"] = _guarded("team", lambda: measure_team(root, args.team_users))
    for r in results.values():
        r.setdefault("measured_at", measured_at)

    raw = DATA / f"results-{args.size_mb:g}mb.json"
    previous, when = _previous(raw, manifest)
    carried: dict[str, str] = {}
    names = {"baseline": "baseline", "relay": "relay-search", "app": "app rows", "team": "team rows"}
    for part in ("baseline", "relay", "app", "team"):
        if part not in results and part in previous:
            results[part] = previous[part]
            results[part].setdefault("measured_at", when)  # keeps its date when carried again
            carried[names[part]] = results[part]["measured_at"]

    text = report(results, manifest, args, root, carried)
    print(text)
    args.results.write_text(text, encoding="utf-8")
    raw.parent.mkdir(parents=True, exist_ok=True)
    raw.write_bytes(orjson.dumps({"manifest": {k: v for k, v in manifest.items() if k != "session_files"},
                                  "written_at": measured_at, "results": results}, option=orjson.OPT_INDENT_2))
    log(f"wrote {args.results} and {raw} (transcripts {dir_size(root / '.claude') / 1e6:,.0f} MB) "
        f"in {time.perf_counter() - started:,.0f} s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
