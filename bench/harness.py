"""Reusable measurement helpers: child processes with peak RSS, percentiles, live
appends with append→searchable latency, directory sizes, markdown tables.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

import orjson

Progress = Callable[[int, int], None]  # (done, total) in whatever unit the system counts

# ---------------------------------------------------------------------------------------
# Processes and memory


@dataclass(frozen=True, slots=True)
class ChildResult:
    returncode: int
    stdout: str
    stderr: str
    wall_s: float
    peak_rss_bytes: int  # the child's own ru_maxrss (from wait4), not its parent's


def run_child(cmd: Sequence[str], *, env: dict[str, str] | None = None, cwd: Path | None = None,
              timeout: float | None = None, echo_stderr: bool = True) -> ChildResult:
    """Run ``cmd`` to completion; report its wall time and its peak RSS.

    The peak is the child's own ``ru_maxrss`` (with its reaped descendants), taken by the
    small launcher ``bench.peak``: spawned from this process directly, a child would report
    at least this process's own peak (Linux carries the high-water mark across ``exec``).
    stderr is streamed through when ``echo_stderr`` so progress stays visible.
    """
    import tempfile

    with tempfile.NamedTemporaryFile(prefix="bench-peak-", delete=False) as f:
        peak_file = Path(f.name)
    wrapped = [sys.executable, "-m", "bench.peak", str(peak_file), *cmd]
    t0 = time.perf_counter()
    proc = subprocess.Popen(wrapped, env=_with_bench_path(env), cwd=cwd, stdout=subprocess.PIPE,
                            stderr=None if echo_stderr else subprocess.PIPE, text=True)
    assert proc.stdout is not None
    try:
        stdout = _read_with_timeout(proc, timeout)
        stderr = proc.stderr.read() if proc.stderr else ""
        proc.wait()
    except BaseException:
        proc.kill()
        raise
    wall = time.perf_counter() - t0
    try:
        peak = int(peak_file.read_text() or 0)
    finally:
        peak_file.unlink(missing_ok=True)
    return ChildResult(proc.returncode, stdout, stderr, wall, peak)


def _with_bench_path(env: dict[str, str] | None) -> dict[str, str] | None:
    """The launcher is ``bench.peak``: the repository must be importable wherever the child runs."""
    repo = str(Path(__file__).resolve().parent.parent)
    base = dict(os.environ if env is None else env)
    base["PYTHONPATH"] = os.pathsep.join(p for p in (repo, base.get("PYTHONPATH", "")) if p)
    return base


def _read_with_timeout(proc: subprocess.Popen[str], timeout: float | None) -> str:
    if timeout is None:
        return proc.stdout.read()  # type: ignore[union-attr]
    import threading

    chunks: list[str] = []
    reader = threading.Thread(target=lambda: chunks.append(proc.stdout.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    reader.join(timeout)
    if reader.is_alive():
        proc.kill()
        reader.join()
        raise TimeoutError(f"{cmd_str(proc.args)} took longer than {timeout:.0f} s")
    return "".join(chunks)


def cmd_str(args: object) -> str:
    return " ".join(map(str, args)) if isinstance(args, (list, tuple)) else str(args)


def self_peak_rss_bytes() -> int:
    """This process's peak RSS (VmHWM) so far."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def last_json_line(stdout: str) -> dict:
    """Workers print progress freely and their result as the last JSON line."""
    for line in reversed(stdout.strip().splitlines()):
        if line.startswith("{"):
            return orjson.loads(line)
    raise ValueError(f"no JSON result in child output:\n{stdout[-2000:]}")


# ---------------------------------------------------------------------------------------
# Statistics and sizes


def percentile(values: Sequence[float], p: float) -> float:
    """Linear-interpolated percentile (numpy's default method), ``p`` in 0..100."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    rank = (len(ordered) - 1) * p / 100
    lo = int(rank)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (rank - lo)


def p50(values: Sequence[float]) -> float:
    return percentile(values, 50)


def p95(values: Sequence[float]) -> float:
    return percentile(values, 95)


def p99(values: Sequence[float]) -> float:
    return percentile(values, 99)


def dir_size(path: Path) -> int:
    """Bytes of all regular files under ``path`` (0 if it does not exist)."""
    if path.is_file():
        return path.stat().st_size
    total = 0
    for dirpath, _, files in os.walk(path):
        for name in files:
            try:
                total += os.lstat(os.path.join(dirpath, name)).st_size
            except OSError:
                pass
    return total


@contextmanager
def stopwatch() -> Iterator[Callable[[], float]]:
    """``with stopwatch() as elapsed: ...; elapsed()`` → seconds (frozen at block exit)."""
    t0 = time.perf_counter()
    end: list[float] = []
    yield lambda: (end[0] if end else time.perf_counter()) - t0
    end.append(time.perf_counter())


def time_queries(search: Callable[[str], object], queries: Sequence[str], warmup: int = 5) -> tuple[list[float], int]:
    """Latency (s) of each query after ``warmup`` untimed ones; and how many had hits."""
    for q in queries[:warmup]:
        search(q)
    latencies, with_hits = [], 0
    for q in queries:
        t0 = time.perf_counter()
        hits = search(q)
        latencies.append(time.perf_counter() - t0)
        with_hits += bool(hits)
    return latencies, with_hits


# ---------------------------------------------------------------------------------------
# Live appends


@dataclass(frozen=True, slots=True)
class FileState:
    path: Path
    size: int
    mtime_ns: int
    atime_ns: int


@contextmanager
def restored(paths: Sequence[Path]) -> Iterator[list[FileState]]:
    """Put appended-to files back exactly (size and times) afterwards, so the archive
    stays byte-identical between runs and systems."""
    states = []
    for p in paths:
        st = p.stat()
        states.append(FileState(p, st.st_size, st.st_mtime_ns, st.st_atime_ns))
    try:
        yield states
    finally:
        restore(states)


def restore(states: Sequence[FileState]) -> None:
    for s in states:
        if s.path.exists() and s.path.stat().st_size != s.size:
            os.truncate(s.path, s.size)
        if s.path.exists():
            os.utime(s.path, ns=(s.atime_ns, s.mtime_ns))


def _last_record(path: Path) -> dict:
    with path.open("rb") as fh:
        fh.seek(max(0, path.stat().st_size - 262_144))
        tail = fh.read().splitlines()
    for line in reversed(tail):
        try:
            record = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(record, dict) and record.get("sessionId"):
            return record
    return {"sessionId": path.stem}


def turn_records(path: Path, token: str) -> bytes:
    """A typed prompt and its assistant answer in Claude Code 2.1.x format, carrying
    ``token`` in both texts, chained to the file's last record."""
    last = _last_record(path)
    now = datetime.now(timezone.utc)
    stamp = now.isoformat(timespec="milliseconds").replace("+00:00", "Z")
    base = {
        "isSidechain": False, "userType": "external",
        "cwd": last.get("cwd", "/tmp"), "sessionId": last.get("sessionId", path.stem),
        "version": last.get("version", "2.1.39"), "gitBranch": last.get("gitBranch", "main"),
    }
    if last.get("slug"):
        base["slug"] = last["slug"]
    user_uuid, asst_uuid = str(uuid.uuid4()), str(uuid.uuid4())
    user = {
        "parentUuid": last.get("uuid"), **base, "type": "user",
        "message": {"role": "user", "content": f"please check why {token} fails in the live watcher test"},
        "uuid": user_uuid, "timestamp": stamp, "permissionMode": "default",
    }
    assistant = {
        "parentUuid": user_uuid, **base,
        "message": {
            "model": "claude-opus-4-6", "id": f"msg_01{uuid.uuid4().hex[:22]}", "type": "message",
            "role": "assistant",
            "content": [{"type": "text", "text": f"I looked at {token}: the watcher now picks it up."}],
            "stop_reason": "end_turn", "stop_sequence": None,
            "usage": {"input_tokens": 3, "cache_creation_input_tokens": 512, "cache_read_input_tokens": 20480,
                      "output_tokens": 42, "service_tier": "standard"},
        },
        "requestId": f"req_011C{uuid.uuid4().hex[:20]}", "type": "assistant", "uuid": asst_uuid, "timestamp": stamp,
    }
    return orjson.dumps(user) + b"\n" + orjson.dumps(assistant) + b"\n"


def append_turn(path: Path, token: str) -> None:
    """Append one turn with a single ``write`` (like the agent appending a line batch)."""
    data = turn_records(path, token)
    with path.open("ab") as fh:
        fh.write(data)


@dataclass(frozen=True, slots=True)
class AppendResult:
    latencies_s: list[float]  # append → first search that finds the token
    timeouts: int


def measure_append_latency(
    files: Sequence[Path],
    found: Callable[[str], bool],
    *,
    n: int = 12,
    interval_s: float = 1.0,
    poll_s: float = 0.01,
    timeout_s: float = 120.0,
    log: Callable[[str], None] | None = None,
) -> AppendResult:
    """Append ``n`` turns round-robin to ``files``; after each, poll ``found(token)``
    until the new unique token is searchable. Waits ``interval_s`` between appends.

    The caller restores the files (see :func:`restored`).
    """
    nonce = uuid.uuid4().hex[:8]
    latencies: list[float] = []
    timeouts = 0
    for i in range(n):
        token = f"zqprobe{nonce}n{i:03d}"
        path = files[i % len(files)]
        t0 = time.perf_counter()
        append_turn(path, token)
        while not found(token):
            if time.perf_counter() - t0 > timeout_s:
                timeouts += 1
                break
            time.sleep(poll_s)
        else:
            latencies.append(time.perf_counter() - t0)
        if log:
            log(f"append {i + 1}/{n}: {latencies[-1] if latencies else float('nan'):.3f} s")
        time.sleep(interval_s)
    return AppendResult(latencies, timeouts)


# ---------------------------------------------------------------------------------------
# Output


def markdown_table(headers: Sequence[str], rows: Sequence[Sequence[object]]) -> str:
    cells = [[str(c) for c in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    line = lambda r: "| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |"  # noqa: E731
    sep = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
    return "\n".join([line(cells[0]), sep, *map(line, cells[1:])])


def fmt_bytes(n: float | None) -> str:
    if n is None:
        return "—"
    for unit in ("B", "KB", "MB", "GB"):
        if abs(n) < 1000 or unit == "GB":
            return f"{n:,.0f} {unit}" if unit == "B" else f"{n:,.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"


def fmt_s(s: float | None) -> str:
    if s is None or s != s:
        return "—"
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def log(msg: str) -> None:
    print(msg, file=sys.stderr, flush=True)
