"""A corpus big enough for the cold index's worker pool, and the process-group look-ups
of the tests that interrupt or kill that pool from outside."""

from __future__ import annotations

import os
import signal
import subprocess
import time
import uuid
from datetime import datetime, timezone
from pathlib import Path

import pytest

from core.fixtures.claude import ClaudeTranscript


def corpus(home: Path, files: int = 60) -> None:
    root = home / ".claude" / "projects"
    for i in range(files):
        t = ClaudeTranscript(str(uuid.UUID(int=i + 1, version=4)), cwd=f"/home/t/p{i % 5}",
                             start=datetime(2026, 1, 1, tzinfo=timezone.utc))  # fmt: skip
        for n in range(60):
            t.user(f"question {n} about widget{i} and the alpha beta gamma delta parts " * 3)
            t.assistant(f"answer {n}: widget{i} is fine, epsilon zeta eta theta " * 5)
        t.write_under(root)


def pooled(tmp_path: Path, then: str = "") -> dict[str, str]:
    """The environment of a CLI whose cold index uses the worker pool at a small size
    (its thresholds lowered by a ``sitecustomize``, which runs ``then`` after)."""
    inject = tmp_path / "inject"
    inject.mkdir(exist_ok=True)
    (inject / "sitecustomize.py").write_text(
        "import core.archive.indexer as indexer\n"
        "indexer.PARALLEL_MIN_BYTES = 1\n"
        "indexer.CHUNK_BYTES = indexer.FIRST_CHUNK_BYTES = 256 << 10\n" + then
    )
    return {"PYTHONPATH": os.pathsep.join([str(inject), *filter(None, [os.environ.get("PYTHONPATH")])])}


# What a ``sitecustomize`` runs to give the CLI a second thread, as the app and the
# servers have: its cold index then takes its workers from the forkserver (a process
# with one thread forks them itself).
A_THREAD = "import threading, time\nthreading.Thread(target=time.sleep, args=(3600,), daemon=True).start()\n"


def group(pgid: int) -> list[int]:
    """Live processes of process group ``pgid`` (zombies of it are gone for good)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                fields = Path(f"/proc/{entry}/stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[2]) == pgid and fields[0] != "Z":
                found.append(int(entry))
    return found


def wait_for(predicate, what: str, seconds: float = 60.0) -> None:
    deadline = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.01)


def finish(proc: subprocess.Popen, seconds: float, hung: str) -> tuple[bytes, bytes]:
    """``proc``'s stdout and stderr once it exits; a failed test, its group killed, if it
    has not within ``seconds`` (it was started with ``start_new_session``)."""
    try:
        return proc.communicate(timeout=seconds)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.communicate()
        pytest.fail(hung)
