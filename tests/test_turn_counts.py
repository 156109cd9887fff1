"""A session's turn count and its readable turns come from one rule (issue 11 point 8).

Claude Code 1.0.x wrote a subagent's records (``isSidechain: true``) into the main
file. Subagent work belongs to the main turn that started it: a sidechain prompt
starts no turn of the session, in the count (``list``) as in what ``show`` and
``read_turn`` read, and its text is searchable in that turn.
"""

from __future__ import annotations

import shutil

from .hostile_support import cli_json, record, run_cli, write_jsonl
from .support import TRANSCRIPTS, needs_transcripts

SID = "33333333-3333-4333-8333-333333333333"


def _turns_agree(home, session_id: str) -> int:
    """``list``'s count = the turns ``show`` prints = the turns ``read_turn`` reads."""
    [info] = [s for s in cli_json(home, "list")["sessions"] if s["session_id"] == session_id]
    count = info["turn_count"]
    conv = cli_json(home, "show", session_id, "--limit", "500")
    assert conv["total_turns"] == count
    assert [t["turn_number"] for t in conv["turns"]] == list(range(count))
    for n in range(count):
        assert run_cli(home, "show", f"{session_id}:{n}", "--json").returncode == 0
    out_of_range = run_cli(home, "show", f"{session_id}:{count}")
    assert out_of_range.returncode == 1
    assert f"({count} turns" in out_of_range.stderr.decode() or f"has {count} turn" in out_of_range.stderr.decode()
    return count


@needs_transcripts
def test_claude_code_log_sidechain_sample(tmp_path):
    project = tmp_path / ".claude" / "projects" / "-p"
    project.mkdir(parents=True)
    shutil.copy(TRANSCRIPTS / "claude-code-log" / "test_data" / "sidechain.jsonl", project / "sidechain.jsonl")
    [info] = cli_json(tmp_path, "list")["sessions"]
    # its records: 2 sidechain prompts, 5 sidechain answers, 1 main answer — no prompt
    # of the session's own, so all of it is the one turn the main answer opens
    assert _turns_agree(tmp_path, info["session_id"]) == 1


def test_inline_sidechain_belongs_to_the_turn_that_started_it(tmp_path):
    ts = "2026-01-01T10:00:0{}Z"
    side = {"isSidechain": True}
    records = [
        record("user", "p1", None, SID, "profile the slow importer", ts.format(0)),
        record("assistant", "t1", "p1", SID, "delegating", ts.format(1)),
        record("user", "s1", None, SID, "find the quadratic loop in importer.py", ts.format(2), **side),
        record("assistant", "s2", "s1", SID, "the dedupe loop is quadratic", ts.format(3), **side),
        record("assistant", "a1", "t1", SID, "the subagent found the quadratic dedupe", ts.format(4)),
        record("user", "p2", "a1", SID, "now fix it with a set", ts.format(5)),
        record("assistant", "a2", "p2", SID, "done, linear now", ts.format(6)),
    ]
    write_jsonl(tmp_path / ".claude" / "projects" / "-home-t-proj" / f"{SID}.jsonl", records)
    assert _turns_agree(tmp_path, SID) == 2
    turn0 = cli_json(tmp_path, "show", f"{SID}:0")
    assert turn0["user_text"] == "profile the slow importer"  # the subagent's prompt is not the user's
    hits = cli_json(tmp_path, "search", "quadratic loop importer")["results"]
    assert hits and hits[0]["session_id"] == SID and hits[0]["turn_number"] == 0
