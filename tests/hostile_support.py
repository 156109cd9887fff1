"""Hand-written Claude records and a CLI runner for the hostile-input tests.

The records are the smallest ones the Claude adapter reads as real messages; tests
that need odd values (a garbage timestamp, a reused uuid) write them field by field.
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import time
from pathlib import Path

SCRIPT = Path(sys.executable).with_name("relay-search")


def record(kind: str, uuid: str, parent: str | None, session: str, text: str, ts: object, *, cwd: str = "/home/t/proj", **extra) -> dict:
    """One Claude ``user``/``assistant`` record with ``text`` as its content."""
    content = text if kind == "user" else [{"type": "text", "text": text}]
    rec = {
        "parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session,
        "version": "2.1.39", "type": kind, "message": {"role": kind, "content": content}, "uuid": uuid, "timestamp": ts,
    }  # fmt: skip
    rec.update(extra)
    return rec


def exchange(session: str, prompt: str, answer: str, ts: object, *, ids: tuple[str, str] = ("u1", "a1"), **extra) -> list[dict]:
    """A prompt and its answer (uuids ``ids``), both stamped ``ts``."""
    return [
        record("user", ids[0], None, session, prompt, ts, **extra),
        record("assistant", ids[1], ids[0], session, answer, ts, **extra),
    ]


def write_jsonl(path: Path, records: list[dict], mode: str = "w") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, mode, encoding="utf-8") as handle:
        for rec in records:
            handle.write(json.dumps(rec) + "\n")
    return path


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """The environment of a user's shell with HOME at ``home`` (PYTHONPATH kept, so a
    checkout's code is what runs; RELAY_SEARCH_MODEL kept, so a test not marked
    ``semantic`` runs words only, as tests/conftest.py sets: each ``index`` otherwise
    embedded every passage, ~36 s of a test's run)."""
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    for name in ("PYTHONPATH", "RELAY_SEARCH_MODEL"):
        if os.environ.get(name):
            env[name] = os.environ[name]
    return {**env, **extra}


def run_cli(home: Path, *args: str, env: dict[str, str] | None = None, **kw) -> subprocess.CompletedProcess:
    """``relay-search ARGS`` as a user runs it (HOME pointed at ``home``); never a traceback."""
    environ = cli_env(home, **(env or {}))
    proc = subprocess.run([str(SCRIPT), *args], env=environ, capture_output=True, timeout=120, **kw)
    stderr = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr and "unexpected error" not in stderr, stderr
    return proc


def cli_json(home: Path, *args: str, env: dict[str, str] | None = None):
    proc = run_cli(home, *args, "--json", env=env)
    assert proc.returncode == 0, proc.stderr.decode("utf-8", "replace")
    return json.loads(proc.stdout)


def drain_terminal(leader: int, proc: subprocess.Popen, seconds: float = 120) -> bytes:
    """What ``proc`` wrote to the pseudo-terminal whose leader side is ``leader``, until it
    closed it or exited (at most ``seconds``)."""
    out, deadline = b"", time.monotonic() + seconds
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # (the child closed the terminal)
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    return out
