"""Several processes on one cache: readers during merges, a second indexer, a killed indexer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from core.index.workers import available_cpus

from .pool_support import A_THREAD, pooled
from .support import open_archive, project_dir, transcript

SID = "55555555-5555-4555-8555-555555555555"

READER = textwrap.dedent(
    """
    import sys, time
    from core.api import Archive
    from core.config import Config
    config = Config.from_env({"HOME": sys.argv[1], "USER": "tester"})
    failures, calls = [], 0
    for i in range(int(sys.argv[2])):
        try:
            # a fresh process's open (as each CLI call does), then a query
            archive = Archive.open(config, read_only=True, sync=False)
            try:
                if not archive.search("pelican"):
                    failures.append("no hit")
            finally:
                archive.close()
        except Exception as exc:
            failures.append(f"{type(exc).__name__}: {exc}")
        calls += 1
    print(calls, len(failures))
    for f in failures[:5]:
        print(f)
    """
)


def _line(sid: str, text: str, n: int) -> bytes:
    record = {
        "parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/t/work/proj",
        "sessionId": sid, "version": "2.1.39", "gitBranch": "main", "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": f"bbbbbbbb-0000-4000-8000-{n:012d}", "timestamp": "2026-11-01T10:00:00.000Z",
    }
    return (json.dumps(record) + "\n").encode()


def test_readers_never_fail_while_a_writer_merges(tmp_path):
    t = transcript(SID)
    t.user("the pelican migration plan")
    t.assistant("Done.")
    path = t.write(project_dir(tmp_path))
    with open_archive(tmp_path) as writer:
        assert writer.writer
        readers = [
            subprocess.Popen([sys.executable, "-c", READER, str(tmp_path), "300"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        n = 0
        merges = 0
        while any(r.poll() is None for r in readers):
            for _ in range(2):
                n += 1
                with open(path, "ab") as handle:
                    handle.write(_line(SID, f"pelican step{n}", n))
                writer.sync([path])
            writer.compact()  # every segment retired for a merged one
            merges += 1
        outs = [r.communicate() for r in readers]
    assert merges > 10
    total = 0
    for out, err in outs:
        calls, failed, *lines = out.split("\n")[0].split() + out.split("\n")[1:]
        total += int(calls)
        assert int(failed) == 0, out + err
    assert total >= 500


def _big_corpus(home: Path, megabytes: int) -> None:
    """Enough plain Claude transcripts (distinct words) to start the worker pool."""
    words = " ".join(f"word{i} ident_{i * 7}" for i in range(60))
    project = project_dir(home)
    n = 0
    for s in range(megabytes):
        sid = f"{s:08x}-0000-4000-8000-000000000000"
        lines = []
        for i in range(900):  # ~1 MB per session
            n += 1
            lines.append(json.dumps({
                "parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/t/work/proj",
                "sessionId": sid, "version": "2.1.39", "type": "user" if i % 2 == 0 else "assistant",
                "message": {"role": "user", "content": f"turn {i} of {s}: {words} extra{n}"} if i % 2 == 0 else
                {"role": "assistant", "content": [{"type": "text", "text": f"answer {n} {words}"}]},
                "uuid": f"{s:08x}-{i:04x}-4000-8000-{n:012x}", "timestamp": "2026-11-01T10:00:00.000Z",
            }))
        (project / f"{sid}.jsonl").write_text("\n".join(lines) + "\n")


def _children(pid: int) -> set[int]:
    """Every descendant of ``pid`` (from /proc: no psutil here)."""
    parents: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            ppid = int(stat.rsplit(")", 1)[1].split()[1])
            parents.setdefault(ppid, []).append(int(entry))
    found, todo = set(), [pid]
    while todo:
        for child in parents.get(todo.pop(), ()):
            if child not in found:
                found.add(child)
                todo.append(child)
    return found


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"  # a zombie has exited (its reaper may be slow to notice)


def _env(home: Path) -> dict[str, str]:
    env = {**os.environ, "HOME": str(home)}
    env.pop("XDG_CACHE_HOME", None)
    return env


def _cli() -> list[str]:
    return [str(Path(sys.executable).with_name("relay-search"))]


def _two_cpus() -> None:
    """(in the child, before exec) Two allowed CPUs: a pool of exactly two workers."""
    os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:2])


@pytest.mark.skipif(available_cpus() < 2, reason="one CPU: the indexer starts no worker pool, so nothing could be left")
@pytest.mark.parametrize("start", ["forked", "forkserver"])
def test_kill_9_of_the_indexer_leaves_no_process(tmp_path, start):
    _big_corpus(tmp_path, 120)
    env = _env(tmp_path)
    # the indexer pinned to two CPUs: two workers it forks itself, or (a CLI given a
    # second thread, as the app and the servers have) the forkserver, the resource
    # tracker and two workers, whatever this machine has
    expected = 2
    if start == "forkserver":
        expected = 4
        env.update(pooled(tmp_path, then=A_THREAD))
    proc = subprocess.Popen([*_cli(), "index"], env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            preexec_fn=_two_cpus)  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        kids: set[int] = set()
        while time.monotonic() < deadline and len(kids) < expected and proc.poll() is None:
            kids |= _children(proc.pid)
            time.sleep(0.02)
        assert len(kids) >= expected, f"the worker pool never started: {len(kids)} child process(es)"
    finally:
        proc.kill()
        proc.wait()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and any(map(_alive, kids)):
        time.sleep(0.1)
    left = [pid for pid in kids if _alive(pid)]
    for pid in left:  # don't leave them to the next test either
        os.kill(pid, 9)
    assert not left, f"{len(left)} process(es) outlived the killed indexer"


def test_worker_count_follows_the_cpus_the_process_may_use():
    """``taskset -c 0`` on a many-core machine used to start 8 workers on one core."""
    import shutil

    import pytest

    if not shutil.which("taskset") or not hasattr(os, "sched_getaffinity"):
        pytest.skip("needs Linux taskset")
    code = "from core.index.workers import worker_count; print(worker_count(100))"
    one = subprocess.run(["taskset", "-c", "0", sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert one.returncode == 0, one.stderr
    assert one.stdout.strip() == "1"
    allowed = sorted(os.sched_getaffinity(0))
    if len(allowed) >= 2:
        two = subprocess.run(["taskset", "-c", f"{allowed[0]},{allowed[1]}", sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
        assert two.stdout.strip() == "2", two.stderr


def test_a_second_indexer_says_who_writes_and_waits_or_fails(tmp_path):
    _big_corpus(tmp_path, 60)
    env = _env(tmp_path)
    lock = tmp_path / ".cache" / "relay-search" / "writer.lock"
    first = subprocess.Popen([*_cli(), "index"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and not (lock.exists() and lock.read_text().startswith(f"{first.pid} ")):
            time.sleep(0.02)
        assert lock.read_text().startswith(f"{first.pid} relay-search index")
        busy = subprocess.run([*_cli(), "index", "--wait", "0"], env=env, capture_output=True, text=True, timeout=60)
        waited = subprocess.run([*_cli(), "index"], env=env, capture_output=True, text=True, timeout=180)
        out, err = first.communicate(timeout=180)
    finally:
        first.kill()
    assert first.returncode == 0, err
    assert "indexed 60 files" in out
    assert busy.returncode == 75, busy.stderr
    assert f"pid {first.pid}: relay-search index" in busy.stderr and "holds the writer lock" in busy.stderr
    assert "nothing was indexed" in busy.stderr and busy.stdout == ""
    assert waited.returncode == 0, waited.stderr
    assert "holds the writer lock" in waited.stderr and "waiting" in waited.stderr
    assert "indexed 0 files" in waited.stdout  # the first one had indexed everything
