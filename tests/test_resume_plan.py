"""``core.outputs.resume`` in-process: the exact command, note and refusal for each agent.

tests/test_resume.py and tests/test_resume_guard.py check the same through the CLI
(and run the command through a shell); these run in the test process, so a mutation
tool sees them (bench/MUTATION.md: it cannot see a subprocess).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from core.errors import BadInput
from core.model import SessionInfo
from core.outputs.resume import ResumePlan, pick_session, plan

UUID = "0f4e5a6b-1c2d-4e3f-8a9b-0c1d2e3f4a5b"


def info(agent: str = "claude", session_id: str = UUID, cwd: str | None = None, number: int | None = None,
         slug: str | None = None) -> SessionInfo:  # fmt: skip
    return SessionInfo(
        session_id=session_id, agent=agent, project="proj", cwd=cwd, git_branch=None, slug=slug, summary="s",
        title=None, first_timestamp=None, last_timestamp=None, turn_count=1, message_count=2, files=(),
        session_number=number,
    )  # fmt: skip


@pytest.mark.parametrize(
    ("agent", "argv"),
    [
        ("claude", ("claude", "--resume", UUID)),
        ("codex", ("codex", "resume", "--", UUID)),
        ("gemini", ("gemini", "--resume", UUID)),
    ],
)
def test_each_agent_gets_its_own_command_run_from_the_session_directory(tmp_path: Path, agent, argv):
    where = tmp_path / "a dir; $(touch PWNED)"
    where.mkdir()
    p = plan(info(agent, cwd=str(where)))
    assert (p.argv, p.cwd, p.cwd_exists, p.reason) == (argv, str(where), True, None)
    assert p.command == f"cd '{where}' && {' '.join(argv)}"
    assert p.to_dict() == {
        "session_id": UUID, "agent": agent, "cwd": str(where), "cwd_exists": True,
        "command": p.command, "argv": list(argv), "note": None,
    }  # fmt: skip


def test_a_directory_gone_or_unrecorded_keeps_the_command_and_says_why(tmp_path: Path):
    gone = str(tmp_path / "gone")
    p = plan(info(cwd=gone))
    assert (p.argv, p.cwd_exists) == (("claude", "--resume", UUID), False)
    assert p.reason == f"the session's directory {gone} no longer exists"
    assert p.command == f"cd {gone} && claude --resume {UUID}"
    for cwd in (None, ""):
        p = plan(info(cwd=cwd))
        assert (p.argv, p.cwd_exists, p.command) == (("claude", "--resume", UUID), False, f"claude --resume {UUID}")
        assert p.reason == "the session did not record its directory: run the command from the project's directory"
    a_file = tmp_path / "file"
    a_file.write_text("")
    assert plan(info(cwd=str(a_file))).cwd_exists is False  # a directory, not any path


@pytest.mark.parametrize("bad", ["--settings=/tmp/evil.json", "-r", UUID + "x", "x" + UUID, UUID[:-1], "m001", ""])
def test_an_id_not_shaped_as_the_agents_is_refused_with_one_line(bad):
    for agent in ("claude", "codex", "gemini"):
        p = plan(info(agent, session_id=bad, cwd="/"))
        assert p.to_dict() == {
            "session_id": bad, "agent": agent, "cwd": "/", "cwd_exists": True, "command": None, "argv": None,
            "note": f"not resuming: the session id {bad!r} is not a {agent} session id (a UUID)",
        }  # fmt: skip


def test_a_long_bad_id_is_shortened_in_the_refusal():
    long_id = "-" + "a" * 80
    p = plan(info(session_id=long_id))
    assert p.reason == f"not resuming: the session id {long_id[:57] + '…'!r} is not a claude session id (a UUID)"
    exactly = "b" * 60
    assert repr(exactly) in (plan(info(session_id=exactly)).reason or "")
    one_more = "b" * 61
    assert repr(one_more[:57] + "…") in (plan(info(session_id=one_more)).reason or "")


def test_upper_case_uuids_are_ids_too():
    assert plan(info(session_id=UUID.upper())).argv == ("claude", "--resume", UUID.upper())


def test_ash_and_unknown_agents_have_no_command_and_say_why(tmp_path: Path):
    ash = plan(info("ash", session_id="chat-1", cwd=str(tmp_path)))
    assert ash.to_dict() == {
        "session_id": "chat-1", "agent": "ash", "cwd": str(tmp_path), "cwd_exists": True, "command": None,
        "argv": None,
        "note": "Ash sessions are chat-bot conversations kept by the Ash server: they cannot be resumed from a terminal",
    }  # fmt: skip
    other = plan(info("cursor"))
    assert (other.argv, other.reason) == (None, "cursor sessions cannot be resumed from relay-search")


def test_a_plan_without_a_directory_is_just_the_command():
    assert ResumePlan(UUID, "claude", None, ("claude", "--resume", UUID), False).command == f"claude --resume {UUID}"


def test_pick_session_takes_the_named_one_or_a_chains_latest_and_refuses_a_range():
    one, two, three = (info(session_id=f"{n}" * 8, number=n, slug="brave-otter") for n in (1, 2, 3))
    assert pick_session("brave-otter", (one, two, three), single=False) is three
    assert pick_session("brave-otter#2", (two,), single=True) is two
    assert pick_session("brave-otter", (one, two, three), single=True) is one
    assert pick_session("11111111", (one,), single=False) is one
    with pytest.raises(BadInput) as refused:
        pick_session("brave-otter#1-3", (one, two, three), single=False)
    assert str(refused.value) == "brave-otter#1-3 names 3 sessions; resume one of them, e.g. brave-otter#3"
    assert pick_session("brave-otter#2-2", (two,), single=False) is two  # a range of one is that one
    assert pick_session("brave-otter", (one, two), single=False) is two  # two: still the latest
    with pytest.raises(BadInput):
        pick_session("brave-otter#1-2", (one, two), single=False)
