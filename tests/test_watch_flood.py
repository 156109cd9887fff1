"""A flooded watcher loses no session for good (issue 37, item 3).

inotify queues a process's events up to ``fs.inotify.max_queued_events`` (16,384 by
default) and drops the rest, saying only "overflow". Under ``serve`` 50,000 new
session files did that, and the sessions whose events were dropped were never
indexed. Here the real overflow is forced without root: the server is stopped
(SIGSTOP) while more events than the queue holds happen in a watched dir, then the
sessions that must be found are written (their events are the ones dropped), and
the server goes on (SIGCONT). They must be indexed, in ``serve`` and ``mcp`` alike
(the app keeps its archive live through the same watcher, core/archive/upkeep.py).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from .hostile_support import SCRIPT, cli_env, exchange, run_cli, write_jsonl
from .support import project_dir

QUEUE = Path("/proc/sys/fs/inotify/max_queued_events")
pytestmark = pytest.mark.skipif(not QUEUE.exists() or int(QUEUE.read_text()) > 1_000_000,
                                reason="needs Linux inotify with a queue small enough to fill")  # fmt: skip

NEW = 12  # sessions written while the queue is full


def _sid(n: int) -> str:
    return f"f100d000-0000-4000-8000-{n:012d}"


def _write(project: Path, n: int, word: str) -> None:
    write_jsonl(project / f"{_sid(n)}.jsonl", exchange(_sid(n), f"a prompt about the {word} number {n}", "done", "2026-11-01T09:00:00Z"))


def _found(home: Path, word: str) -> set[str]:
    proc = run_cli(home, "search", word, "--json", "--limit", "100")  # (a reader: it sees what the server indexed)
    return {h["session_id"] for h in json.loads(proc.stdout)["results"]} if proc.returncode == 0 else set()


def _eventually(check, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.3)
    return True


def _flood(directory: Path, events: int) -> None:
    """``events`` inotify events in ``directory`` (writes to two files, alternating, so
    the kernel cannot merge them): more than the queue holds."""
    a, b = (os.open(directory / name, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644) for name in ("flood-a.txt", "flood-b.txt"))
    try:
        for _ in range(events // 2 + 1):
            os.write(a, b"x")
            os.write(b, b"y")
    finally:
        os.close(a)
        os.close(b)


@pytest.mark.parametrize("command", ["serve", "mcp"])
def test_sessions_written_while_the_watch_queue_overflowed_are_indexed(tmp_path, command):
    project = project_dir(tmp_path)
    _write(project, 0, "zebu")
    args = ["serve", "--port", "0"] if command == "serve" else ["mcp"]
    proc = subprocess.Popen([str(SCRIPT), *args], env=cli_env(tmp_path), stdin=subprocess.PIPE,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)  # fmt: skip
    lock = tmp_path / ".cache" / "relay-search" / "writer.lock"
    try:
        # the server writes the cache (a CLI call before it would, and leave it a reader)
        assert _eventually(lambda: lock.exists() and lock.read_text().startswith(f"{proc.pid} "), 60), "the server never took the lock"
        assert _eventually(lambda: _sid(0) in _found(tmp_path, "zebu"), 60), "the server never indexed"
        _write(project, 1, "zebu")  # the watcher is live: a new session shows up
        assert _eventually(lambda: _sid(1) in _found(tmp_path, "zebu"), 30), "the watcher never saw a new session"
        os.kill(proc.pid, signal.SIGSTOP)
        try:
            _flood(project, int(QUEUE.read_text()) + 2_000)
            for n in range(2, 2 + NEW):
                _write(project, n, "yak")  # their events are dropped: the queue is full
        finally:
            os.kill(proc.pid, signal.SIGCONT)
        wanted = {_sid(n) for n in range(2, 2 + NEW)}
        assert _eventually(lambda: _found(tmp_path, "yak") >= wanted, 60), _found(tmp_path, "yak")
    finally:
        os.kill(proc.pid, signal.SIGCONT)
        proc.terminate()
        try:
            _, err = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            _, err = proc.communicate()
    text = err.decode("utf-8", "replace")
    assert "Traceback" not in text, text
    assert "file events were lost" in text, text  # said once, in one line


# --- the app: a watch that stops is watched again, and what it missed is synced -----------


async def test_the_app_syncs_what_a_stopped_watch_missed(demo_home):
    """A watcher error ends watchdog's emitter thread (here it is stopped, through
    watchdog's own API, as an exception in its thread would end it): the root is synced
    whole and watched again within a second or two, and the app shows the new session."""
    from tests.support import transcript
    from tui.app import make_app
    from tui.testing import settle, wait_for

    home, _ = demo_home
    app = make_app(home)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.archive is not None and app.archive._upkeep._watcher is not None, what="the watcher")
        observer = app.archive._upkeep._watcher._observer
        for emitter in list(observer.emitters):
            emitter.stop()
            emitter.join(5)
        sid = "99999999-9999-4999-8999-999999999998"
        t = transcript(sid, cwd="/home/demo/work/okapi")
        t.user("Where does the okapi ledger live?")
        t.assistant("In the okapi module.")
        t.write(project_dir(home, "/home/demo/work/okapi"))
        await wait_for(pilot, lambda: any(s.session_id == sid for s in app.main.sessions_pane.sessions), timeout=20, what="the new session")
        assert any(e.is_alive() for e in observer.emitters)  # watched again
