"""`relay-search serve` and `relay-search mcp` with the model on, while a backlog embeds (issue 35.5).

    python -m bench.server_memory --home bench/data/archive-1800mb-2400s [--queries 60] [--keep-cache DIR]

Each server is a subprocess of the console script, as a user runs it, on a cache holding the
words but no vectors (built words only first, once, and copied for each server), so it embeds
the backlog in the background while it answers: prose queries from the archive's
``queries.json`` (each a hybrid search: a query vector, the cosines), and after every tenth a
the messages of the largest session, one query a second (so the job embeds between them,
as it does between a user's); the same words only (``RELAY_SEARCH_MODEL=off``) as rows of their own. Its resident set is sampled every 0.1 s from
``/proc``, and its peak (``VmHWM``) read before it is stopped; how many passages had vectors
by then is read from the cache. Prints a table and JSON.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

SCRIPT = Path(sys.executable).with_name("relay-search")
OFF = {"RELAY_SEARCH_MODEL": "off"}


PACE = 1.0  # seconds between queries: the background job embeds between them, as it does between a user's


def _env(home: Path, cache: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "RELAY_SEARCH_MODEL"}
    return {**env, "HOME": str(home), "XDG_CACHE_HOME": str(cache), **extra}


def _status_kb(pid: int, key: str) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


class Sampler(threading.Thread):
    """The largest resident set of ``pid`` seen every 0.1 s."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.max_kb, self.done = pid, 0, threading.Event()

    def run(self) -> None:
        while not self.done.wait(0.1):
            self.max_kb = max(self.max_kb, _status_kb(self.pid, "VmRSS"))


def _queries(home: Path, n: int) -> list[str]:
    data = json.loads((home / "queries.json").read_text())
    texts = [q["query"] if isinstance(q, dict) else str(q) for q in (data["queries"] if isinstance(data, dict) else data)]
    prose = [t for t in texts if len(t.split()) >= 3] or texts
    return [prose[i % len(prose)] for i in range(n)]


def _largest_session(home: Path) -> str:
    mains = [p for p in (home / ".claude" / "projects").rglob("*.jsonl") if not p.name.startswith("agent-")]
    biggest = max(mains, key=lambda p: p.stat().st_size)
    return biggest.stem


def _embedded(home: Path, cache: Path) -> tuple[int, int]:
    from core.api import Archive
    from core.config import Config

    with Archive.open(Config.from_env(_env(home, cache)), sync=False) as archive:
        return archive.semantic.counts()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def measure_serve(home: Path, cache: Path, queries: list[str], session: str, **extra: str) -> dict:
    port = _free_port()
    proc = subprocess.Popen([str(SCRIPT), "serve", "--port", str(port)], env=_env(home, cache, **extra),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    sampler = Sampler(proc.pid)
    sampler.start()
    base = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                urllib.request.urlopen(base + "/stats", timeout=5).read()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise RuntimeError(f"serve did not start: {proc.stderr.read() if proc.stderr else ''}") from None
                time.sleep(0.2)
        start = time.perf_counter()
        times = []
        for i, q in enumerate(queries):
            time.sleep(max(0.0, start + i * PACE - time.perf_counter()))
            t0 = time.perf_counter()
            urllib.request.urlopen(base + "/search?" + urllib.parse.urlencode({"q": q}), timeout=60).read()
            times.append(time.perf_counter() - t0)
            if i % 10 == 9:
                urllib.request.urlopen(f"{base}/sessions/{session}/messages", timeout=60).read()
        wall = time.perf_counter() - start
        peak = _status_kb(proc.pid, "VmHWM")
    finally:
        sampler.done.set()
        proc.terminate()
        proc.wait(timeout=60)
    return _result("serve", peak, sampler.max_kb, times, wall)


def measure_mcp(home: Path, cache: Path, queries: list[str], session: str, **extra: str) -> dict:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    async def run() -> dict:
        params = StdioServerParameters(command=str(SCRIPT), args=["mcp"], env=_env(home, cache, **extra))
        async with stdio_client(params) as (read, write), ClientSession(read, write) as client:
            await client.initialize()
            pid = _server_pid()
            sampler = Sampler(pid)
            sampler.start()
            start = time.perf_counter()
            times = []
            for i, q in enumerate(queries):
                await asyncio.sleep(max(0.0, start + i * PACE - time.perf_counter()))
                t0 = time.perf_counter()
                await client.call_tool("search_history", {"query": q})
                times.append(time.perf_counter() - t0)
                if i % 10 == 9:
                    await client.call_tool("get_session_messages", {"session_id": session})
            wall = time.perf_counter() - start
            peak = _status_kb(pid, "VmHWM")
            sampler.done.set()
            return _result("mcp", peak, sampler.max_kb, times, wall)

    return asyncio.run(run())


def _server_pid() -> int:
    """The `relay-search mcp` child of this process (the SDK does not hand out its pid)."""
    me = str(os.getpid())
    for status in Path("/proc").glob("[0-9]*/status"):
        try:
            fields = dict(line.split(":\t", 1) for line in status.read_text().splitlines() if ":\t" in line)
            cmdline = (status.parent / "cmdline").read_bytes().split(b"\0")
        except (OSError, ValueError):
            continue
        if fields.get("PPid", "").strip() == me and any(part.endswith(b"mcp") for part in cmdline):
            return int(status.parent.name)
    raise RuntimeError("no mcp server process found")


def _result(name: str, peak_kb: int, sampled_kb: int, times: list[float], wall: float) -> dict:
    ordered = sorted(times)
    return {
        "server": name, "peak_rss_mb": round(peak_kb / 1024, 1), "max_sampled_rss_mb": round(sampled_kb / 1024, 1),
        "queries": len(times), "p50_ms": round(ordered[len(ordered) // 2] * 1000, 1),
        "p95_ms": round(ordered[int(len(ordered) * 0.95)] * 1000, 1), "wall_s": round(wall, 1),
    }  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--queries", type=int, default=60)
    ap.add_argument("--keep-cache", type=Path, help="the words-only cache to reuse (built here when missing)")
    args = ap.parse_args(argv)
    home = args.home.resolve()
    work = Path(tempfile.mkdtemp(prefix="relay-server-mem-"))
    words = args.keep_cache or work / "words"
    if not (words / "relay-search" / "catalog.sqlite").exists():
        subprocess.run([str(SCRIPT), "index"], env=_env(home, words, RELAY_SEARCH_MODEL="off"), check=True,
                       stdout=subprocess.DEVNULL)
    queries, session = _queries(home, args.queries), _largest_session(home)
    results = []
    try:
        for measure, extra in ((measure_serve, {}), (measure_mcp, {}), (measure_serve, OFF), (measure_mcp, OFF)):
            cache = work / measure.__name__
            shutil.rmtree(cache, ignore_errors=True)
            shutil.copytree(words, cache)
            result = measure(home, cache, queries, session, **extra)
            result["server"] += " (words only)" if extra else " (model on)"
            result["embedded"], result["passages"] = _embedded(home, cache)
            results.append(result)
            print(f"{result['server']:>20}: peak {result['peak_rss_mb']} MB (sampled max {result['max_sampled_rss_mb']} MB); "
                  f"{result['queries']} prose queries p50 {result['p50_ms']} ms, p95 {result['p95_ms']} ms in {result['wall_s']} s; "
                  f"{result['embedded']:,} of {result['passages']:,} passages embedded by then", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(json.dumps(results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
