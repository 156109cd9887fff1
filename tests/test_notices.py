"""Issue 34 parts 2 and 3: what Claude Code showed a person is indexed, and a quoted
command is a phrase.

Corpus (real Claude Code record shapes, ``core.fixtures.claude``): one 2.1 session whose
turns hold a hook's blocking error, a command the agent ran, a Stop-hook summary, an away
summary, a ``/model`` answer with its colour codes, an IDE-opened file and an API error;
and one 2.0 session that holds nothing but a ``/model`` answer and a summary record. Every
check runs through a front end: the CLI as a subprocess, the MCP SDK's client.
"""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone
from pathlib import Path

import httpx
import pytest
from mcp import Client

from core.fixtures.claude import ClaudeTranscript, stable_uuid
from core.fixtures.codex import CodexRollout, codex_id
from core.front.http_api import build_http_app
from core.front.mcp import build_server
from tests.hostile_support import cli_json, run_cli
from tests.support import open_archive

T0 = datetime(2026, 4, 18, 13, 0, tzinfo=timezone.utc)
CWD = "/home/t/work/ledger"
MAIN = stable_uuid("test-notices", "main")
ONLY = stable_uuid("test-notices", "only-commands")
OLD = stable_uuid("test-notices", "one-oh")
LATE = stable_uuid("test-notices", "ide-and-tasks")
CODEX = codex_id(34)
SLUG = "quiet-amber-lantern"
COMMAND = "mix compile --warnings-as-errors"


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("notices")
    write_corpus(home)
    return home


def write_corpus(home: Path) -> None:
    root = home / ".claude" / "projects"
    t = ClaudeTranscript(MAIN, cwd=CWD, slug=SLUG, version="2.1.114", start=T0, step=timedelta(seconds=5))
    t.hook_success("./scripts/clmail.cmd actor started", "clmail registered the gannet desk\n", event="SessionStart",
                   tool="startup")  # before the first prompt: joins its turn
    t.user("Wire the invoice exporter into the nightly job")
    t.assistant("I'll edit the exporter first.")
    t.tool("Edit", {"file_path": f"{CWD}/lib/exporter.ex", "old_string": "a", "new_string": "b"})
    t.hook_blocking_error("ruff check failed", "uv run ruff check")
    for _ in range(3):  # a hook that says the same after every tool call: one note a turn
        t.hook_success("./scripts/clmail.cmd actor busy", "Status set to busy: cormorant\n", tool="Edit")
    t.tool("Bash", {"command": COMMAND, "description": "Compile strictly"}, "Compiling 3 files (.ex)\nGenerated ledger app")
    t.assistant("It compiles without warnings now.")
    t.stop_hooks("./scripts/notify.sh idle")
    t.away_summary("We rewired the zeppelin ledger exporter and the strict compile is clean; next, run the tests.")
    t.local_command("model", "Kept model as \x1b[1mHaiku Quokka Edition\x1b[22m")
    t.user("Why does the widget crash?", as_blocks=True, ide_file=f"{CWD}/lib/quasar_widget.ex")
    t.api_error("Overloaded harbormaster", attempt=2)
    t.assistant("The widget reads a nil config.")
    t.write_under(root)
    # nothing but a /model answer and a summary record (as 3680252d in the samples): no prompt at all
    only = ClaudeTranscript(ONLY, cwd=CWD, version="2.0.0", start=T0 + timedelta(hours=2))
    only.command("model", "Set model to \x1b[1mopus (claude-opus-pelican-9)\x1b[22m")
    only.summary("Ledger exporter work", stable_uuid("test-notices", "a leaf in no file"))
    only.write_under(root)
    # 1.0.x hook lines, an IDE selection and a background task's notification, as raw records
    old = ClaudeTranscript(OLD, cwd=CWD, version="1.0.53", start=T0 + timedelta(hours=3))
    old.user("Tidy the ledger module")
    old.tool("Edit", {"file_path": f"{CWD}/ledger.py", "old_string": "a", "new_string": "b"})
    for text in ("Running \x1b[1mPostToolUse:Edit\x1b[22m...",
                 "\x1b[1mPostToolUse:Edit\x1b[22m [uv run ruff format] completed successfully: 31 files left unchanged"):
        old.raw(json.dumps({"parentUuid": old.last_uuid, "isSidechain": False, "userType": "external", "cwd": CWD,
                            "sessionId": OLD, "version": "1.0.53", "type": "system", "content": text, "isMeta": False,
                            "timestamp": "2026-04-18T16:00:30.000Z", "uuid": stable_uuid("old", text),
                            "toolUseID": "toolu_01", "level": "info"}))
    old.assistant("Tidied.")
    old.write_under(root)
    late = ClaudeTranscript(LATE, cwd=CWD, version="2.1.39", start=T0 + timedelta(hours=4))
    late.user("Check the ledger", as_blocks=True)
    late.assistant("Checking.")
    late.raw(json.dumps({"parentUuid": late.last_uuid, "isSidechain": False, "userType": "external", "cwd": CWD,
                         "sessionId": LATE, "version": "2.1.39", "type": "user", "message": {"role": "user", "content": [
                             {"type": "text", "text": "<ide_selection>The user selected the lines 3 to 4 from "
                              f"{CWD}/lib/ibis_report.ex:\nIbisReport.render\n\nThis may or may not be related to "
                              "the current task.</ide_selection>"},
                             {"type": "text", "text": "and this function?"}]},
                         "uuid": stable_uuid("late", "ide"), "timestamp": "2026-04-18T17:01:00.000Z"}))
    late.raw(json.dumps({"parentUuid": stable_uuid("late", "ide"), "isSidechain": False, "userType": "external",
                         "cwd": CWD, "sessionId": LATE, "version": "2.1.39", "type": "user", "message": {
                             "role": "user", "content": "<task-notification>\n<task-id>b7636e2</task-id>\n<status>"
                             "completed</status>\n<summary>Background command \"Run the heron suite\" completed "
                             "(exit code 0)</summary>\n</task-notification>\nRead the output file to retrieve the result"},
                         "uuid": stable_uuid("late", "task"), "timestamp": "2026-04-18T17:02:00.000Z"}))
    late.write_under(root)
    # Codex: an error event its terminal showed
    rollout = CodexRollout(home / ".codex", CODEX, cwd=CWD, start=T0 + timedelta(hours=5))
    rollout.user("Bump the otter dependency")
    rollout.event({"type": "error", "message": "stream disconnected before completion: otterhound timeout",
                   "codex_error_info": "other"})
    rollout.assistant("Retried and bumped.")


def search(home: Path, query: str, *args: str) -> dict:
    return cli_json(home, "search", query, *args)


def test_an_away_summary_is_found_and_read_back(home: Path) -> None:
    found = search(home, "zeppelin ledger")["results"]
    assert found and found[0]["session_id"] == MAIN and found[0]["turn_number"] == 0
    assert "zeppelin ledger exporter" in found[0]["snippet"]
    shown = run_cli(home, "show", found[0]["ref"])
    assert shown.returncode == 0
    assert "Away summary: We rewired the zeppelin ledger exporter" in shown.stdout.decode()


def test_a_model_output_is_found_without_its_colour_codes(home: Path) -> None:
    found = search(home, "quokka")["results"]
    assert [h["session_id"] for h in found] == [MAIN]
    assert "/model: Kept model as Haiku Quokka Edition" in found[0]["snippet"]
    shown = run_cli(home, "show", found[0]["ref"]).stdout.decode()
    assert "/model: Kept model as Haiku Quokka Edition" in shown
    assert "\x1b" not in shown and "[1m" not in shown and "[22m" not in shown


def test_a_hooks_blocking_error_is_found(home: Path) -> None:
    answer = search(home, '"ruff check failed"')
    assert "note" not in answer  # shown: the phrase is in the turn's text
    assert [(h["session_id"], h["turn_number"], h["exact_phrase"]) for h in answer["results"]] == [(MAIN, 0, True)]
    assert "PostToolUse:Edit hook blocked: ruff check failed" in answer["results"][0]["snippet"]


def test_the_path_opened_in_the_ide_is_a_word_of_its_turn(home: Path) -> None:
    found = search(home, "quasar_widget.ex")["results"]
    assert (found[0]["session_id"], found[0]["turn_number"]) == (MAIN, 1)  # (turn 0 shares the part "ex")
    assert "Opened in the IDE: /home/t/work/ledger/lib/quasar_widget.ex" in found[0]["snippet"]
    turn = cli_json(home, "show", found[0]["ref"])
    assert turn["user_text"] == "Why does the widget crash?"  # the prompt is what was typed, not the IDE note


def test_an_api_error_the_user_saw_is_found(home: Path) -> None:
    found = search(home, "harbormaster")["results"]
    assert [(h["session_id"], h["turn_number"]) for h in found] == [(MAIN, 1)]
    assert "API error: Overloaded harbormaster (retry 2 of 10)" in found[0]["snippet"]


def test_a_session_of_only_command_output_is_findable_and_openable(home: Path) -> None:
    found = search(home, "pelican")["results"]
    assert [(h["session_id"], h["turn_number"]) for h in found] == [(ONLY, 0)]
    listed = {s["session_id"] for s in cli_json(home, "list")["sessions"]}
    assert ONLY in listed
    shown = run_cli(home, "show", ONLY)
    assert shown.returncode == 0
    assert "/model: Set model to opus (claude-opus-pelican-9)" in shown.stdout.decode()


def test_notices_open_no_turn_before_the_first_prompt(home: Path) -> None:
    """The /model answer and the Stop hooks sit in the turn they happened in; the prompts keep their numbers."""
    turns = [cli_json(home, "show", f"{SLUG}#1:{n}") for n in (0, 1)]
    assert [t["user_text"] for t in turns] == ["Wire the invoice exporter into the nightly job", "Why does the widget crash?"]
    counts = {s["session_id"]: s["turn_count"] for s in cli_json(home, "list")["sessions"]}
    assert counts == {MAIN: 2, ONLY: 1, OLD: 1, LATE: 2, CODEX: 1}
    assert turns[0]["notes"][0] == "SessionStart:startup hook: clmail registered the gannet desk (./scripts/clmail.cmd actor started)"
    busy = [n for n in turns[0]["notes"] if "cormorant" in n]
    assert busy == ["PostToolUse:Edit hook: Status set to busy: cormorant (./scripts/clmail.cmd actor busy)"]  # once


def test_hook_lines_of_1_0_ide_selections_and_task_notifications(home: Path) -> None:
    found = search(home, '"ruff format"')["results"]
    assert [(h["session_id"], h["turn_number"]) for h in found][:1] == [(OLD, 0)]
    notes = cli_json(home, "show", found[0]["ref"])["notes"]
    assert notes == ["PostToolUse:Edit [uv run ruff format] completed successfully: 31 files left unchanged"]  # no "Running"
    found = search(home, "IbisReport.render")["results"]
    assert [(h["session_id"], h["turn_number"]) for h in found] == [(LATE, 1)]
    turn = cli_json(home, "show", found[0]["ref"])
    assert turn["user_text"] == "and this function?"
    assert turn["notes"][0].startswith(f"Selected in the IDE: lines 3 to 4 from {CWD}/lib/ibis_report.ex:")
    found = search(home, '"heron suite"')["results"]
    assert [(h["session_id"], h["turn_number"], h["exact_phrase"]) for h in found] == [(LATE, 1, True)]
    assert 'Background command "Run the heron suite" completed (exit code 0)' in turn["notes"]


def test_a_quoted_command_is_a_phrase(home: Path) -> None:
    answer = search(home, f'"{COMMAND}"')
    assert "note" not in answer, answer.get("note")
    assert [(h["session_id"], h["turn_number"], h["exact_phrase"]) for h in answer["results"]] == [(MAIN, 0, True)]
    text = run_cli(home, "search", f'"{COMMAND}"').stdout.decode()
    assert not text.startswith("No turn holds the exact phrase")
    # words of the command out of order are its words, not the phrase
    apart = search(home, '"compile mix"')
    assert apart["note"].startswith("No turn holds the exact phrase") and apart["results"][0]["exact_phrase"] is False


async def test_mcp_finds_a_notice_and_a_quoted_command(home: Path) -> None:
    with open_archive(home) as archive:
        async with Client(build_server(archive), raise_exceptions=True) as c:
            result = await c.call_tool("search_history", {"query": f'"{COMMAND}"'})
            answer = json.loads(result.content[0].text)  # type: ignore[union-attr]
            assert answer.get("note") is None and answer["results"][0]["exact_phrase"] is True
            result = await c.call_tool("search_history", {"query": "quokka"})
            hit = json.loads(result.content[0].text)["results"][0]  # type: ignore[union-attr]
            assert hit["session_id"] == MAIN
            result = await c.call_tool("read_turn", {"session_id": hit["ref"]})
            turn = json.loads(result.content[0].text)  # type: ignore[union-attr]
            assert turn["user_text"] == "Wire the invoice exporter into the nightly job"


def test_an_error_codex_showed_is_a_note_of_its_turn(home: Path) -> None:
    found = search(home, "otterhound")["results"]
    assert [(h["session_id"], h["agent"], h["turn_number"]) for h in found] == [(CODEX, "codex", 0)]
    turn = cli_json(home, "show", found[0]["ref"])
    assert turn["user_text"] == "Bump the otter dependency"
    assert turn["notes"] == ["Error: stream disconnected before completion: otterhound timeout"]


async def test_http_finds_a_quoted_command_and_serves_the_notes(home: Path) -> None:
    with open_archive(home) as archive:
        transport = httpx.ASGITransport(app=build_http_app(archive))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            answer = (await client.get("/search", params={"q": f'"{COMMAND}"'})).json()
            assert answer.get("note") is None and answer["results"][0]["exact_phrase"] is True
            hit = (await client.get("/search", params={"q": "zeppelin"})).json()["results"][0]
            messages = (await client.get(f"/sessions/{hit['session_id']}/messages")).json()["messages"]
            summary = next(m for m in messages if m["type"] == "summary")
            assert summary["role"] == "system" and summary["text"].startswith("Away summary: We rewired the zeppelin")


def test_a_notice_read_before_its_prompt_was_written_joins_the_prompts_turn(tmp_path: Path) -> None:
    """The turn rule holds across incremental reads: a SessionStart hook's note indexed alone, then
    the prompt appended, make one turn, as a whole read of the file does."""
    t = ClaudeTranscript(stable_uuid("test-notices", "growing"), cwd=CWD, version="2.1.114", start=T0)
    t.hook_success("./scripts/clmail.cmd actor started", "clmail registered the puffin desk\n", event="SessionStart",
                   tool="startup")
    path = t.write_under(tmp_path / ".claude" / "projects")
    written = len(t.lines())
    assert [h["turn_number"] for h in search(tmp_path, "puffin")["results"]] == [0]
    t.user("Sort the puffin ledger")
    t.assistant("Sorted.")
    with path.open("a", encoding="utf-8") as f:
        f.write("\n".join(t.lines()[written:]) + "\n")
    grown = [(h["turn_number"], h["snippet"]) for h in search(tmp_path, "puffin")["results"]]
    assert [turn for turn, _ in grown] == [0]
    (session,) = cli_json(tmp_path, "list")["sessions"]
    assert session["turn_count"] == 1
    assert cli_json(tmp_path, "show", f"{t.session_id}:0")["user_text"] == "Sort the puffin ledger"
    rebuilt = tmp_path / "again"
    t.write_under(rebuilt / ".claude" / "projects")
    assert [(h["turn_number"], h["snippet"]) for h in search(rebuilt, "puffin")["results"]] == grown
