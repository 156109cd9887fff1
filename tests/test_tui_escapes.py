"""A transcript's terminal escapes never reach the terminal through the app (issue #37 item 6).

A prompt, an answer, a tool call and its output, a title, a working directory and a git
branch hold ``ESC ]0;owned BEL`` (the window title), ``ESC ]52;c;… BEL`` (writes the
clipboard), ``ESC [2J`` (clears the screen), DEL and the C1 CSI ``0x9b``. The test reads
what the app would write to the terminal — every frame is the compositor's update,
rendered as the driver renders it (``LayoutUpdate.render_segments``) — with the session list, the hit rows, the open
session (folds expanded), the help's preview of a copy, the export dialog and the usage figures on screen: Textual's own cursor moves and colours
only, no OSC, no clear, no BEL, no C1; the transcript's controls shown as ␛, ␇, ␡, <9B>.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.widgets import Input

from core.fixtures.demo import DEFAULT_NOW
from tui.app import make_app
from tui.screens.export_dialog import ExportScreen
from tui.screens.help import HelpScreen
from tui.screens.usage import UsageScreen
from tui.testing import settle, wait_for
from tui.widgets.turn_view import Fold, TurnView

from .hostile_support import record, write_jsonl
from .test_tui import SIZE, search

SID = "33333333-3333-4333-8333-333333333333"
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4K\x07"  # OSC 52: sets the clipboard to "rm -rf ~"
TITLE = "\x1b]0;owned\x07"
CLEAR = "\x1b[2J"
CSI_C1 = "\x9b31m"
POISON = f"{CLIPBOARD}{TITLE}{CLEAR}{CSI_C1}\x7f"
PROMPT = f"the kestrel deploy {POISON} log done"
ANSWER = f"The kestrel answer \x1b[31mred\x1b[0m and \x9b2J end {POISON}."
COMMAND = f"echo kestrel {TITLE}"
OUTPUT = f"kestrel output {POISON} tail"


def write_poisoned(home: Path) -> Path:
    cwd = f"/home/t/proj{TITLE}x"
    extra = {"cwd": cwd, "gitBranch": f"main{CLEAR}{TITLE}"}
    records = [
        record("user", "u1", None, SID, PROMPT, "2026-11-02T09:00:00Z", **extra),
        record("assistant", "a1", "u1", SID, ANSWER, "2026-11-02T09:00:01Z", **extra),
        record("assistant", "a2", "a1", SID, "", "2026-11-02T09:00:02Z", **extra),
        record("user", "u2", "a2", SID, "", "2026-11-02T09:00:03Z", **extra),
        {"type": "custom-title", "customTitle": f"kestrel title {POISON}", "sessionId": SID},
    ]
    records[1]["message"].update(id="msg_1", model=f"claude-x{TITLE}", usage={"input_tokens": 10, "output_tokens": 5})
    records[1]["requestId"] = "req_1"
    records[2]["message"]["content"] = [{"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": COMMAND}}]
    records[3]["message"]["content"] = [{"type": "tool_result", "tool_use_id": "t1", "content": OUTPUT}]
    write_jsonl(home / ".claude" / "projects" / "-home-t-proj" / f"{SID}.jsonl", records)
    return home


def terminal_output(app) -> tuple[str, str]:
    """What the driver would write for the whole screen now, and the text in it (its
    segments but Textual's own control ones)."""
    update = app.screen._compositor.render_update(full=True)
    written = update.render_segments(app.console)
    text = "\n".join("".join(seg.text for seg in strip if not seg.control) for line in update.strips for strip in line)
    return written, text


def assert_inert(app, *shown: str) -> str:
    written, text = terminal_output(app)
    bad = sorted({f"U+{ord(c):04X}" for c in text if (ord(c) < 0x20 and c not in "\n") or 0x7F <= ord(c) <= 0x9F})
    assert not bad, (bad, text)
    for sequence in ("\x1b]", "\x1b[2J", "\x07", "\x9b", "\x7f"):  # OSC, clear, BEL, C1 CSI, DEL
        assert sequence not in written, (sequence, written)
    for piece in shown:
        assert piece in text, (piece, text.splitlines())
    return text


@pytest.fixture
def home(tmp_path: Path) -> Path:
    return write_poisoned(tmp_path / "home")


async def test_a_transcript_s_escapes_are_shown_never_sent(home: Path, clipboard):
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert_inert(app, "kestrel title ␛]52;c;")  # the sessions pane: the title, the project
        await search(pilot, "kestrel")
        await settle(pilot)
        assert_inert(app, "␛]0;owned␇")  # the hit rows' snippets
        await pilot.press("enter")
        reader = app.main.reader
        await wait_for(pilot, lambda: reader.is_open and reader.current is not None, what="the reader")
        turn = reader.query_one(f"#block-{reader.current}", TurnView)
        for fold in turn.query(Fold):
            await fold.open()
        await settle(pilot)
        text = assert_inert(app, "␛]52;c;cm0gLXJmIH4K␇", "␛[2J<9B>31m␡", "kestrel output ␛", "echo kestrel ␛]0;owned␇")
        assert "main␛[2J" in text or "proj␛]0;owned␇x" in text  # the session header: branch, cwd
        await pilot.press("C")  # a copy of the text: the help screen's "last copy" previews it
        await wait_for(pilot, lambda: clipboard.copied, what="a copy")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="the help")
        app.screen.query_one("#help-body").scroll_end(animate=False)
        await pilot.pause()
        assert_inert(app, "project proj␛]0;owned␇x")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen), what="the help to close")
        count = len(app._notifications)
        await pilot.press("r")  # resume: its notice names the session's directory
        await wait_for(pilot, lambda: len(app._notifications) > count, what="the resume notice")
        await pilot.pause()
        notice = list(app._notifications)[-1].message
        assert f"/home/t/proj{TITLE}x" in notice  # (the notice's text is the directory's own; shown inert)
        assert_inert(app, "proj␛]0;owned␇x")
        await pilot.press("E")  # the export dialog names the session
        await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen), what="the export dialog")
        app.screen.query_one("#export-dir", Input).value = f"/tmp/{TITLE}"
        await pilot.pause()
        assert_inert(app, "/tmp/␛]0;owned␇")  # (an Input renders through Content too)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, ExportScreen), what="the dialog to close")
        app.main.sessions_pane.session_list.focus()
        await pilot.press("u")  # the usage figures by model and by project
        await wait_for(pilot, lambda: isinstance(app.screen, UsageScreen) and app.screen.report is not None, what="usage")
        screen = app.screen
        await pilot.press("o")
        await wait_for(pilot, lambda: screen.report.by == "model", what="by model")
        assert_inert(app, "claude-x␛]0;owned␇")
        await pilot.press("p")
        await wait_for(pilot, lambda: screen.report.by == "project", what="by project")
        assert_inert(app, "␛]0;owned␇")
