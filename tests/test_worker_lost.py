"""A worker of the cold index killed from outside (the kernel's out-of-memory killer, a
``kill -9``): the CLI says so in one line and exits 1 rather than hang or print a
traceback, leaves no process behind, and the next ``index`` reads the rest.

The fault is injected into the workers only: ``indexer.run_chunk`` is replaced by a
function of an injected module, which the parent pickles by name and only workers run.
The first chunk a worker takes ends it — while it parses, or after writing half of its
result to the pool's result pipe (the case the pool itself never notices: its manager
thread waited for the rest of the message forever).
"""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import threading
import time
import uuid
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path

import pytest

from core.errors import SyncStopped, WorkerLost
from core.index.workers import make_pool, next_result

from .hostile_support import SCRIPT, cli_env, cli_json
from .pool_support import A_THREAD, corpus, finish, group, pooled, wait_for

pytestmark = pytest.mark.skipif(
    not Path("/proc").is_dir() or len(os.sched_getaffinity(0)) < 2,
    reason="needs Linux /proc and 2 CPUs (a worker pool)",
)

FAULTS = '''
import os, signal, struct, sys
from core.archive import ingest

def run_chunk_or_die(*args):
    """(In a worker) the first call of all the workers' dies as ``HOW`` says; the rest index."""
    try:
        os.close(os.open(os.environ["FAULT_ONCE"], os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        return ingest.run_chunk(*args)
    if os.environ["HOW"] == "half-sent":
        queue = sys._getframe(1).f_locals["result_queue"]  # (the pool's worker loop called us)
        os.write(queue._writer.fileno(), struct.pack("!i", 1 << 20) + b"half")
    os.kill(os.getpid(), signal.SIGKILL)
'''


def _archive_with_a_doomed_worker(tmp_path: Path, how: str) -> tuple[Path, dict[str, str]]:
    """A HOME to index and the environment in which its first chunk's worker dies ``how``."""
    home = tmp_path / "home"
    corpus(home)
    env = pooled(tmp_path, then="import faults\nindexer.run_chunk = faults.run_chunk_or_die\n")
    (tmp_path / "inject" / "faults.py").write_text(FAULTS)
    return home, {**env, "FAULT_ONCE": str(tmp_path / "fault-once"), "HOW": how}


@pytest.mark.parametrize("how", ["killed parsing", "half-sent"])
def test_a_worker_killed_mid_index_ends_the_run_with_one_line_and_the_next_run_completes(tmp_path, how):
    home, env = _archive_with_a_doomed_worker(tmp_path, how)
    proc = subprocess.Popen([str(SCRIPT), "index"], env=cli_env(home, **env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
    _, err = finish(proc, 120, "the index hung after a worker was killed")
    assert (tmp_path / "fault-once").exists(), "no worker ran the fault"
    assert proc.returncode == 1, err.decode()
    lines = err.decode().splitlines()
    assert len(lines) == 1 and "Traceback" not in err.decode(), err.decode()
    assert "worker of the index was killed by SIGKILL (out of memory?)" in lines[0]
    assert "the next run reads the rest" in lines[0]
    wait_for(lambda: not group(proc.pid), "the group's processes to exit", 10.0)
    again = subprocess.run([str(SCRIPT), "index"], env=cli_env(home, **env), capture_output=True, timeout=300)
    assert again.returncode == 0, again.stderr.decode()
    for i in (1, 30, 60):  # the first chunk's, a middle and the last file are all found
        hits = cli_json(home, "search", f"widget{i - 1}", env=env)["results"]
        assert {h["session_id"] for h in hits} == {str(uuid.UUID(int=i, version=4))}


def test_on_a_terminal_the_line_starts_below_the_progress_bar(tmp_path):
    """On a terminal the progress bar is redrawn in place (``\\r``); the line saying a
    worker was lost once followed the bar on the same line."""
    home, env = _archive_with_a_doomed_worker(tmp_path, "killed parsing")
    main, side = pty.openpty()
    proc = subprocess.Popen([str(SCRIPT), "index"], env=cli_env(home, **env), stdin=subprocess.DEVNULL,
                            stdout=side, stderr=side, start_new_session=True)  # fmt: skip
    os.close(side)
    screen = b""
    while True:  # (until the terminal's last holder has gone: EIO)
        try:
            chunk = os.read(main, 65536)
        except OSError:
            break
        if not chunk:
            break
        screen += chunk
    os.close(main)
    assert proc.wait(timeout=120) == 1
    shown = [line.split("\r")[-1] for line in screen.decode().replace("\r\n", "\n").split("\n")]
    assert any(line.startswith("indexing ") for line in shown), shown  # (a bar was drawn)
    lost = [line for line in shown if "worker of the index" in line]
    assert lost and lost[0].startswith("relay-search: a worker of the index was killed by SIGKILL"), shown


def test_waiting_on_or_submitting_to_a_pool_whose_worker_died_says_how_it_died():
    """In process: ``next_result`` turns the pool's own notice of a dead worker into
    :class:`WorkerLost` with the signal, and so does a submit after it (by hand in
    tmux, ``kill -9`` of a worker was reported by the indexer's next submit as
    "unexpected error: BrokenProcessPool")."""
    with pytest.raises(WorkerLost, match=r"^a worker of the index was killed by SIGABRT: what was indexed is kept"):
        with make_pool(1) as pool:
            next_result(pool, {pool.submit(os.abort)})
    with pytest.raises(WorkerLost, match=r"^a worker of the index was killed by SIGABRT: what was indexed is kept"):
        with make_pool(1) as pool:
            with pytest.raises(BrokenProcessPool):
                pool.submit(os.abort).result()
            pool.submit(os.getpid)


def test_waiting_on_a_worker_ends_when_the_archive_closes():
    """The app quitting mid-index sets ``stop`` while the index waits on a worker: it
    stops waiting (and the pool ends the worker) instead of waiting for the chunk."""
    stop = threading.Event()
    with pytest.raises(SyncStopped, match="the archive is closing"):
        with make_pool(1) as pool:
            future = pool.submit(time.sleep, 60)  # (a chunk that takes long)
            threading.Timer(0.2, stop.set).start()
            try:
                next_result(pool, {future}, stop)
            finally:
                assert not future.done()


def test_the_result_that_finishes_first_is_taken_first():
    """The indexer commits chunks as they finish: waiting on the oldest one while a
    later one had finished left the pool with nothing queued and a worker idle."""
    with make_pool(2) as pool:
        slow, fast = pool.submit(time.sleep, 3), pool.submit(os.getpid)
        pending = {slow, fast}
        started = time.monotonic()
        assert isinstance(next_result(pool, pending), int)  # the fast one's pid
        assert time.monotonic() - started < 2.5
        assert pending == {slow}
        assert next_result(pool, pending) is None and not pending


@pytest.mark.parametrize(("thread", "method"), [(False, "fork"), (True, "forkserver")])
def test_workers_are_forked_only_by_a_process_with_one_thread(thread, method):
    """Forked by the indexing process itself (a worker ready at once, where the
    forkserver first imports the parsers: 0.12-0.2 s of a 2 s cold index), but never
    by a process running other threads (the app, the servers): a lock another thread
    held would stay held forever in the child."""
    code = (A_THREAD if thread else "") + "from core.index.workers import start_method; print(start_method())"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert out.stdout.strip() == method, out.stderr
