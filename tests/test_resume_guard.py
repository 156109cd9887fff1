"""``relay-search resume`` at the trust boundary: a session id or directory taken from a
transcript cannot steer the agent or the shell (issue 23 item 9, issue 26).

Through the CLI subprocess, with fake agents on PATH that record how they were run.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from core.fixtures.codex import CodexRollout

from .support import config_for, project_dir, transcript

EVIL = "--settings=/tmp/evil-settings.json"
ODD_DIR = "a b;$(touch PWNED);`touch PWNED2`;'q'\"d\""
ODD_ID = "dddddddd-2222-4222-8333-444444444444"


def run(home: Path, *args: str, path: str) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": path, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.run([sys.executable, "-m", "core", *args], env=env, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def fake_agents(bin_dir: Path, record: Path) -> str:
    """``claude``, ``codex`` and ``gemini`` that write their argv and cwd to ``record``."""
    bin_dir.mkdir(parents=True)
    for name in ("claude", "codex", "gemini"):
        fake = bin_dir / name
        fake.write_text(f"#!{sys.executable}\nimport json, os, sys\n"
                        f"open({str(record)!r}, 'w').write(json.dumps({{'argv': sys.argv, 'cwd': os.getcwd()}}))\n")
        fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    return f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}"


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    work = home / "work" / "app"
    work.mkdir(parents=True)
    # a Claude file whose records name a session id that is an option
    project = project_dir(home, str(work))
    records = [
        {"type": "user", "uuid": "u1", "parentUuid": None, "sessionId": EVIL, "slug": "calm-happy-river",
         "cwd": str(work), "timestamp": "2026-11-01T09:00:00Z",
         "message": {"role": "user", "content": "innocent prompt"}},
        {"type": "assistant", "uuid": "u2", "parentUuid": "u1", "sessionId": EVIL, "slug": "calm-happy-river",
         "cwd": str(work), "timestamp": "2026-11-01T09:00:05Z",
         "message": {"role": "assistant", "content": [{"type": "text", "text": "innocent answer"}]}},
    ]  # fmt: skip
    (project / "not-a-uuid.jsonl").write_text("\n".join(json.dumps(r) for r in records) + "\n")
    CodexRollout(config_for(home).codex_home, "-c-hostile-id", cwd=str(work)).turn("codex hostile prompt", "ok")
    # an honest session in a directory whose name is shell syntax
    odd = home / "work" / ODD_DIR
    odd.mkdir(parents=True)
    t = transcript(ODD_ID, cwd=str(odd))
    t.user("odd directory prompt")
    t.assistant("done")
    t.write(project_dir(home, str(odd)))
    return home


def _session(home: Path, agent: str, path: str) -> str:
    proc = run(home, "list", "--agent", agent, "--json", path=path)
    assert proc.returncode == 0, proc.stderr
    return next(s["session_id"] for s in json.loads(proc.stdout)["sessions"] if s["session_id"].startswith("-"))


@pytest.mark.parametrize("agent", ["claude", "codex"])
def test_a_dash_leading_session_id_never_reaches_the_agent(home: Path, tmp_path: Path, agent: str) -> None:
    record = tmp_path / "ran.json"
    path = fake_agents(tmp_path / "bin", record)
    sid = _session(home, agent, path)
    ref = "calm-happy-river" if agent == "claude" else sid
    for args in (("resume", "--", ref), ("resume", "--exec", "--", ref)):
        proc = run(home, *args, path=path)
        assert proc.returncode == 1 and proc.stdout == "", proc.stdout
        assert proc.stderr.count("\n") == 1 and "not a" in proc.stderr and "session id" in proc.stderr
    data = json.loads(run(home, "resume", "--json", "--", ref, path=path).stdout)
    assert data["command"] is None and data["argv"] is None
    assert not record.exists(), "the agent ran with a hostile id"


def test_a_directory_holding_shell_syntax_is_quoted(home: Path, tmp_path: Path) -> None:
    record = tmp_path / "ran.json"
    path = fake_agents(tmp_path / "bin", record)
    proc = run(home, "resume", ODD_ID, path=path)
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip()
    shell = tmp_path / "shell"
    shell.mkdir()
    done = subprocess.run(["bash", "-c", line], cwd=shell, env={"PATH": path}, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stderr
    assert list(shell.iterdir()) == [], "the directory's name ran as shell code"
    got = json.loads(record.read_text())
    assert got["cwd"] == str(home / "work" / ODD_DIR) and got["argv"][1:] == ["--resume", ODD_ID]
