"""``relay-search resume``: the command that reopens a session in its own agent.

Run through the installed console script. ``--exec`` runs a fake ``claude`` (a
script on PATH that records its argv and working directory), so the real front
end starts a real process.
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from datetime import datetime, timezone
from pathlib import Path

import pytest

from core.fixtures.ash import AshSession
from core.fixtures.codex import CodexRollout, codex_id
from core.fixtures.gemini import GeminiChat

from .support import config_for, project_dir, transcript

SCRIPT = Path(sys.executable).with_name("relay-search")
CLAUDE_ID = "aaaaaaaa-1111-4222-8333-444444444444"
CHAIN = ("bbbbbbbb-1111-4222-8333-000000000001", "bbbbbbbb-1111-4222-8333-000000000002")


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("resume-home")
    work = home / "work" / "app"
    work.mkdir(parents=True)
    t = transcript(CLAUDE_ID, cwd=str(work))
    t.user("fix the parser")
    t.assistant("done")
    t.write(project_dir(home, str(work)))
    gone = "/nonexistent/old-checkout"
    for n, sid in enumerate(CHAIN):
        c = transcript(sid, cwd=gone, slug="brave-green-otter", start=datetime(2026, 11, 2 + n, 9, 0, tzinfo=timezone.utc))
        c.user(f"chain step {n}")
        c.assistant("ok")
        c.user("and then?")
        c.assistant("done")  # the slug is on records from the first reply on
        c.write(project_dir(home, gone))
    config = config_for(home)
    CodexRollout(config.codex_home, codex_id(1), cwd=str(work)).turn("codex prompt", "codex answer")
    g = GeminiChat(config.gemini_home, session_id="cccccccc-1111-4222-8333-444444444444", project_root=str(work))
    g.user("gemini prompt")
    g.gemini("gemini answer")
    a = AshSession(config.ash_home, "telegram_1_2")
    a.user("ash prompt")
    a.assistant("ash answer")
    return home


def run(home: Path, *args: str, path: str | None = None) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": path or os.environ.get("PATH", "/usr/bin:/bin")}
    proc = subprocess.run([str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def _id(home: Path, agent: str) -> str:
    proc = run(home, "list", "--agent", agent, "--json")
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["sessions"][0]["session_id"]


def test_claude_session_prints_cd_and_claude_resume_with_the_full_id(home: Path) -> None:
    proc = run(home, "resume", CLAUDE_ID[:8])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"cd {home / 'work' / 'app'} && claude --resume {CLAUDE_ID}"
    assert proc.stderr == ""


@pytest.mark.parametrize(("agent", "command"), [("codex", "codex resume --"), ("gemini", "gemini --resume")])
def test_codex_and_gemini_sessions_use_their_own_resume_syntax(home: Path, agent: str, command: str) -> None:
    sid = _id(home, agent)
    proc = run(home, "resume", sid)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"cd {home / 'work' / 'app'} && {command} {sid}"


def test_ash_session_says_in_one_line_that_it_cannot_be_resumed(home: Path) -> None:
    proc = run(home, "resume", _id(home, "ash"))
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "cannot be resumed" in proc.stderr


def test_chain_reference_resumes_its_latest_session_and_a_missing_cwd_is_named(home: Path) -> None:
    proc = run(home, "resume", "brave-green-otter")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"cd /nonexistent/old-checkout && claude --resume {CHAIN[1]}"
    assert "/nonexistent/old-checkout no longer exists" in proc.stderr
    assert run(home, "resume", "brave-green-otter#1").stdout.strip().endswith(CHAIN[0])


def test_a_range_is_refused_with_one_clear_line(home: Path) -> None:
    proc = run(home, "resume", "brave-green-otter#1-2")
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.strip() == (
        "relay-search: brave-green-otter#1-2 names 2 sessions; resume one of them, e.g. brave-green-otter#2"
    )


def test_exec_runs_the_agent_in_the_session_directory(home: Path, tmp_path: Path) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    record = tmp_path / "argv.json"
    fake = bin_dir / "claude"
    fake.write_text(
        f"#!{sys.executable}\nimport json, os, sys\n"
        f"open({str(record)!r}, 'w').write(json.dumps({{'argv': sys.argv[1:], 'cwd': os.getcwd()}}))\nsys.exit(7)\n"
    )
    fake.chmod(fake.stat().st_mode | stat.S_IXUSR)
    proc = run(home, "resume", CLAUDE_ID, "--exec", path=f"{bin_dir}:{os.environ.get('PATH', '/usr/bin:/bin')}")
    assert proc.returncode == 7, proc.stderr  # the agent's own exit status
    got = json.loads(record.read_text())
    assert got == {"argv": ["--resume", CLAUDE_ID], "cwd": str(home / "work" / "app")}


def test_exec_does_not_run_without_the_directory(home: Path, tmp_path: Path) -> None:
    proc = run(home, "resume", "brave-green-otter", "--exec")
    assert proc.returncode == 1
    assert "claude --resume" in proc.stdout and "not running it" in proc.stderr


def test_resume_json_carries_the_command(home: Path) -> None:
    proc = run(home, "resume", CLAUDE_ID, "--json")
    data = json.loads(proc.stdout)
    assert data["argv"] == ["claude", "--resume", CLAUDE_ID] and data["cwd_exists"] is True
