"""Ctrl-C during the first cold index (issue 24, item 6): exit 130 with nothing on
stderr — no KeyboardInterrupt traceback from the forkserver or a worker — no process
left behind, and the next ``index`` completes.

A terminal's Ctrl-C signals the whole foreground process group; the test does the same
(``killpg``) to a CLI started in a group of its own. The subprocess indexes through the
worker pool at a small size (its thresholds lowered by a ``sitecustomize``), and the
signal is sent at two moments: while the workers start, and while they parse. Both
ways of starting workers are tried: forked by the CLI itself (one thread), and from
the forkserver (a CLI given a second thread, as the app and the servers have).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from .hostile_support import SCRIPT, cli_env, cli_json
from .pool_support import A_THREAD, corpus, finish, group, pooled, wait_for

pytestmark = pytest.mark.skipif(
    not Path("/proc").is_dir() or len(os.sched_getaffinity(0)) < 2,
    reason="needs Linux /proc and 2 CPUs (a worker pool)",
)


def _ignores_ctrl_c(pid: int) -> bool:
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    return bool(int(status.split("SigIgn:")[1].split()[0], 16) & (1 << (signal.SIGINT - 1)))


# Each chunk takes 0.2 s longer in the workers (as a bigger one would): words only, the
# small corpus is indexed 0.25 s after its first segment, and the rest of it could
# finish between that segment and the Ctrl-C.
SLOW_CHUNKS = (
    "import time\n"
    "import core.archive.ingest as ingest\n"
    "_run_chunk = ingest.run_chunk\n"
    "def slow_chunk(*args):\n"
    "    time.sleep(0.2)\n"
    "    return _run_chunk(*args)\n"
    "indexer.run_chunk = slow_chunk\n"
)


def _as_from_a_terminal(argv: list[str]) -> list[str]:
    """``argv`` started with Ctrl-C at its default, as a shell in a terminal starts a command.

    A command started in the background by a script (``... &``) ignores SIGINT, and so does
    every process it starts: pytest run that way started the CLI deaf to the Ctrl-C, which
    then finished the index and exited 0 (seen in a CI run started in the background).
    """
    reset = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
    return [sys.executable, "-c", reset, *argv]


@pytest.mark.parametrize("start", ["forked", "forkserver"])
@pytest.mark.parametrize("moment", ["workers starting", "workers parsing"])
def test_ctrl_c_during_the_cold_index_is_quiet_and_leaves_nothing(tmp_path, moment, start):
    home = tmp_path / "home"
    corpus(home)
    env = {**pooled(tmp_path, then=(A_THREAD if start == "forkserver" else "") + SLOW_CHUNKS), "PYTHONFAULTHANDLER": "1"}
    proc = subprocess.Popen(_as_from_a_terminal([str(SCRIPT), "index"]), env=cli_env(home, **env), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
    segments = home / ".cache" / "relay-search" / "segments"
    if moment == "workers starting":  # (a worker or the forkserver is there, and the CLI takes Ctrl-C)
        wait_for(lambda: (len(group(proc.pid)) > 1 and not _ignores_ctrl_c(proc.pid)) or proc.poll() is not None,
                  "the workers")  # fmt: skip
    else:
        wait_for(lambda: (segments.is_dir() and any(segments.iterdir())) or proc.poll() is not None, "a segment")
    assert proc.poll() is None, "the index finished before it could be interrupted"
    os.killpg(proc.pid, signal.SIGINT)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:  # say who is still there and where the CLI waits (faulthandler)
        left = {pid: Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ").decode() for pid in group(proc.pid)}
        os.killpg(proc.pid, signal.SIGABRT)
        out, err = proc.communicate(timeout=30)
        pytest.fail(f"no exit 60 s after Ctrl-C; rc {proc.returncode}; still running: {left}\n{err.decode()[-8000:]}")
    assert proc.returncode == 130, err.decode()
    assert err.decode() == "", err.decode()  # no traceback from any process of the group
    wait_for(lambda: not group(proc.pid), "the group's processes to exit", 10.0)
    again = subprocess.run([str(SCRIPT), "index"], env=cli_env(home, **env), capture_output=True, timeout=300)
    assert again.returncode == 0, again.stderr.decode()
    hits = cli_json(home, "search", "widget59", env=env)["results"]
    assert {h["session_id"] for h in hits} == {str(uuid.UUID(int=60, version=4))}


HALF_SENT = '''
import os, struct, sys, time

def half_a_result_then_wait():
    """(In the worker) write the start of a result message to the pool's result pipe —
    a length and four of its bytes — as a worker terminated mid-send leaves it."""
    queue = sys._getframe(1).f_locals["result_queue"]  # (the pool's worker loop called us)
    os.write(queue._writer.fileno(), struct.pack("!i", 1 << 20) + b"half")
    time.sleep(600)
'''

INTERRUPT_AFTER_HALF_SENT = '''
import threading, time
import halfsent
from core.index.workers import make_pool

try:
    with make_pool(1) as pool:
        pool.submit(halfsent.half_a_result_then_wait)
        time.sleep(1)  # (the worker has written its half message by now, or writes it while it dies)
        raise KeyboardInterrupt
except KeyboardInterrupt:
    print("interrupted", sorted(t.name for t in threading.enumerate()))
'''


def test_a_worker_ended_amid_sending_its_result_does_not_hang_the_exit(tmp_path):
    """The CI hang behind the test above: Ctrl-C terminated a worker amid sending its
    result, and the pool's manager thread read on for the rest of the message forever,
    so the CLI never exited. Here a worker writes half a message and the pool is left
    by Ctrl-C: the process must exit, its manager thread gone."""
    (tmp_path / "halfsent.py").write_text(HALF_SENT)
    path = os.pathsep.join([str(tmp_path), str(Path(__file__).resolve().parents[1])])
    proc = subprocess.Popen([sys.executable, "-c", INTERRUPT_AFTER_HALF_SENT], cwd=tmp_path,
                            env={**os.environ, "PYTHONPATH": path}, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, start_new_session=True)  # fmt: skip
    out, err = finish(proc, 60, "the process did not exit after leaving the pool on Ctrl-C (a half-sent result)")
    assert proc.returncode == 0, err.decode()
    assert out.decode().split() == ["interrupted", "['MainThread']"], out.decode() + err.decode()
