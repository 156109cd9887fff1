"""Many small session files: a warm `relay-search search` must not grow with them (issue 12 #11).

    python -m bench.many_files                  # 100,000 files → bench/data/many-100000/, prints JSON
    python -m bench.many_files --files 20000 --runs 5

Generates N small Claude Code sessions (two turns each, spread over 100 project dirs,
file times spread over the past year as an archive that grew over months would have
them), builds the cache once with `relay-search index`, then times warm
`relay-search search` processes (wall and peak RSS, median of ``--runs``) with nothing
changed, and once more after one session was appended to and one new session was
written (so the warm path's re-read of what changed is measured too).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
import uuid
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import run_child  # noqa: E402
from bench.relay_adapter import cli_command, relay_env  # noqa: E402

REPO = Path(__file__).resolve().parent.parent
PROJECTS = 100
YEAR = 365 * 86400

_USER = ('{"parentUuid":%(parent)s,"isSidechain":false,"userType":"external","cwd":"%(cwd)s","sessionId":"%(sid)s",'
         '"version":"2.1.39","gitBranch":"main","type":"user","message":{"role":"user","content":"%(text)s"},'
         '"uuid":"%(uuid)s","timestamp":"%(ts)s"}\n')
_ASSISTANT = ('{"parentUuid":"%(parent)s","isSidechain":false,"userType":"external","cwd":"%(cwd)s","sessionId":"%(sid)s",'
              '"version":"2.1.39","gitBranch":"main","type":"assistant","message":{"id":"msg_%(uuid8)s","type":"message",'
              '"role":"assistant","model":"claude-opus-4-5","content":[{"type":"text","text":"%(text)s"}],'
              '"stop_reason":"end_turn"},"uuid":"%(uuid)s","timestamp":"%(ts)s"}\n')
_WORDS = ("ledger invoice parser flaky retry cache index migration websocket schema tokenizer deploy rollback "
          "pyright refactor worker queue timeout session archive billing render").split()


def _session(n: int, cwd: str, when: float) -> tuple[str, str]:
    sid = str(uuid.UUID(int=(0x5E55 << 112) + n))
    ts = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(when))
    lines, parent = [], "null"
    for turn in range(2):
        a, b, c = (_WORDS[(n * 7 + turn * 3 + k) % len(_WORDS)] for k in range(3))
        u1, u2 = str(uuid.UUID(int=(n << 8) + turn * 2 + 1)), str(uuid.UUID(int=(n << 8) + turn * 2 + 2))
        lines.append(_USER % dict(parent=parent, cwd=cwd, sid=sid, text=f"fix the {a} {b} in module{n % 997}", uuid=u1, ts=ts))
        lines.append(_ASSISTANT % dict(parent=u1, cwd=cwd, sid=sid, text=f"Fixed the {b} {c}: token{n}x{turn}.", uuid=u2, uuid8=u2[:8], ts=ts))
        parent = f'"{u2}"'
    return sid, "".join(lines)


def generate(home: Path, files: int) -> float:
    """N sessions under ``home/.claude/projects`` (skipped when already there)."""
    projects = home / ".claude" / "projects"
    marker = home / "generated.json"
    if marker.exists() and json.loads(marker.read_text())["files"] == files:
        return 0.0
    t0 = time.perf_counter()
    now = time.time()
    for p in range(PROJECTS):
        (projects / f"-home-me-work-proj{p:03d}").mkdir(parents=True, exist_ok=True)
    for n in range(files):
        p = n % PROJECTS
        when = now - YEAR + YEAR * n / files - 3600  # oldest first; the newest an hour old
        sid, text = _session(n, f"/home/me/work/proj{p:03d}", when)
        path = projects / f"-home-me-work-proj{p:03d}" / f"{sid}.jsonl"
        path.write_text(text, encoding="utf-8")
        os.utime(path, (when, when))
    for p in range(PROJECTS):  # dirs as old as their newest file
        d = projects / f"-home-me-work-proj{p:03d}"
        os.utime(d, (now - 3600, now - 3600))
    marker.write_text(json.dumps({"files": files}))
    return time.perf_counter() - t0


def _cli(home: Path, cache: Path, query: str) -> tuple[float, int]:
    child = run_child(cli_command(query), env=relay_env(home, cache), cwd=REPO, echo_stderr=False)
    if child.returncode != 0:
        raise SystemExit(f"relay-search search failed: {child.stderr.strip()}")
    return child.wall_s, child.peak_rss_bytes


def measure(files: int, runs: int, out: Path | None) -> dict:
    home = out or REPO / "bench" / "data" / f"many-{files}"
    cache = home / "cache"
    result: dict = {"files": files, "generate_s": generate(home, files)}
    index = [*cli_command("x")[:-5], "index"]  # the same entry point, `index` instead of `search …`
    if not (cache / "relay-search" / "catalog.sqlite").exists():
        child = run_child(index, env=relay_env(home, cache), cwd=REPO, echo_stderr=False)
        result["cold_index_s"] = child.wall_s
        result["cold_index_peak_rss_bytes"] = child.peak_rss_bytes
    _cli(home, cache, "ledger invoice")  # settle: anything pending is read now
    walls, rss = zip(*(_cli(home, cache, q) for q in ("ledger invoice", "flaky retry", "pyright refactor")[: max(1, runs)]))
    result["warm_search_s"] = statistics.median(walls)
    result["warm_search_peak_rss_bytes"] = max(rss)
    # One append to a recent session and one new session, then a warm search sees both.
    projects = home / ".claude" / "projects"
    newest = projects / f"-home-me-work-proj{(files - 1) % PROJECTS:03d}" / f"{_session(files - 1, '', 0)[0]}.jsonl"
    size = newest.stat().st_size
    stamp = newest.stat().st_mtime
    sid, text = _session(files + 1, "/home/me/work/proj000", time.time())
    newest_text = newest.read_text().replace("token", "appendedtoken")
    with newest.open("a", encoding="utf-8") as fh:
        fh.write(newest_text.splitlines(keepends=True)[-1])
    fresh = projects / "-home-me-work-proj000" / f"{sid}.jsonl"
    fresh.write_text(text.replace("token", "newtoken"), encoding="utf-8")
    try:
        wall, peak = _cli(home, cache, f"appendedtoken{files - 1}x1")
        result["changed_search_s"], result["changed_search_peak_rss_bytes"] = wall, peak
        found = run_child(cli_command(f"newtoken{files + 1}x0"), env=relay_env(home, cache), cwd=REPO, echo_stderr=False)
        appended = run_child(cli_command(f"appendedtoken{files - 1}x1"), env=relay_env(home, cache), cwd=REPO, echo_stderr=False)
        result["changed_found"] = bool(json.loads(found.stdout)["results"]) and bool(json.loads(appended.stdout)["results"])
    finally:
        fresh.unlink()
        with newest.open("r+b") as fh:
            fh.truncate(size)
        os.utime(newest, (stamp, stamp))
        _cli(home, cache, "ledger invoice")  # the cache catches up with the restored archive
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=100_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", type=Path, help="archive dir (default bench/data/many-N)")
    args = ap.parse_args(argv)
    result = measure(args.files, args.runs, args.out)
    sys.stdout.write(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
