"""Keys and focus that never surprise (issue 36), through the real app (Pilot).

``/`` on an empty search box is the focus key and types nothing (a slash inside a
query is typed); Esc from the reader goes back to the search box with the query kept
and selected; ``q`` asks first while a query is open; a notice never sits over a
dialog; the copy notice wraps at 80 columns; the sessions pane shows its top after a
cold start.
"""

from __future__ import annotations

import threading
from datetime import UTC, datetime
from pathlib import Path

from textual.widgets import Input
from textual.widgets._toast import Toast

from core.fixtures.claude import ClaudeTranscript
from core.fixtures.demo import DEFAULT_NOW
from core.outputs.handoff import DEFAULT_BUDGET
from tui.app import make_app
from tui.screens.help import HelpScreen
from tui.testing import ClipboardSpy, screen_text, settle, wait_for
from tui.widgets.reader import Reader

from .test_tui import notes, open_first_hit

SIZE = (120, 35)
SMALL = (80, 24)


def box(app) -> Input:
    return app.main.query_one("#query", Input)


async def test_slash_on_an_empty_box_types_nothing_and_inside_a_query_is_typed(demo_home):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert box(app).has_focus  # focus starts in the search box
        await pilot.press("slash", *"bm25")
        assert box(app).value == "bm25"
        await wait_for(pilot, lambda: app.main.search_pane.shown_query == "bm25", what="hits for bm25")
        await pilot.press("ctrl+u")  # (Input: delete to the start)
        await pilot.press(*"core", "slash", *"index", "slash", *"bm25.py")
        assert box(app).value == "core/index/bm25.py"


async def test_esc_from_the_reader_returns_to_the_box_with_the_query_selected(demo_home):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_first_hit(pilot, "bm25")
        assert isinstance(app.focused, Reader)
        await pilot.press("escape")
        await pilot.pause()
        assert box(app).has_focus and box(app).value == "bm25"
        assert box(app).selection == (0, 4)  # typing replaces it
        # what quit the app before: z (zoom) then q, typed after esc
        await pilot.press("z", "q")
        assert app.is_running and box(app).value == "zq"


async def test_esc_from_a_zoomed_reader_brings_the_column_back(demo_home):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_first_hit(pilot, "bm25")
        await pilot.press("z")
        assert not app.main.query_one("#left").display
        await pilot.press("escape")
        await pilot.pause()
        assert app.main.query_one("#left").display and box(app).has_focus and box(app).value == "bm25"


async def test_q_asks_first_while_a_query_is_open(demo_home):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_first_hit(pilot, "bm25")
        await pilot.press("q")
        await pilot.pause()
        assert app.is_running
        assert any("press q again to quit" in n for n in notes(app))
        await pilot.press("q")
        await wait_for(pilot, lambda: not app.is_running, what="the app to quit")


class SlowClipboard(ClipboardSpy):
    """A clipboard that answers when the test says so (a copy landing after ``?``)."""

    def __init__(self) -> None:
        super().__init__()
        self.go = threading.Event()

    def __call__(self, text: str) -> None:
        self.go.wait(10)
        super().__call__(text)


async def test_a_notice_that_lands_while_the_help_is_open_waits_under_it(demo_home, monkeypatch):
    import pyperclip

    home, _ = demo_home
    spy = SlowClipboard()
    monkeypatch.setattr(pyperclip, "copy", spy)
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("tab", "c", "question_mark")  # the copy is still on its way
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        spy.go.set()
        await wait_for(pilot, lambda: spy.copied, what="the copy")
        await app.workers.wait_for_complete()
        await pilot.pause(0.1)
        assert not list(app.screen.query(Toast))  # nothing over the help…
        assert "copied to the clipboard" in str(app.screen.query_one("#help-last-copy").render())  # …which says it
        await pilot.press("escape")
        await wait_for(pilot, lambda: list(app.screen.query(Toast)), what="the held notice")
        assert "copied to the clipboard" in str(app.screen.query_one(Toast).render())


async def test_the_copy_notice_wraps_whole_within_3_lines_at_80_columns(demo_home, monkeypatch):
    """The longest copy notice there is: a marked range, OSC 52, the data dir not writable."""
    import pyperclip

    home, _ = demo_home
    monkeypatch.setattr(pyperclip, "copy", ClipboardSpy(fail=True))
    (home / ".local").mkdir(exist_ok=True)
    (home / ".local" / "share").write_text("not a directory")  # last-copy.md cannot be saved
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SMALL, notifications=True) as pilot:
        await settle(pilot)
        await pilot.press("tab", "down", "down", "down", "down", "shift+down", "C")
        await wait_for(pilot, lambda: list(app.screen.query(Toast)), what="the notice")
        await pilot.pause()
        toast = app.screen.query_one(Toast)
        note = notes(app)[-1]
        assert note.startswith("Text of sessions") and "OSC 52" in note and "not saved" in note
        assert toast.region.height <= 3  # the toast as drawn: every line of it on screen
        shown = [row[toast.region.x : toast.region.right] for row in screen_text(app)[toast.region.y : toast.region.bottom]]
        words = " ".join(" ".join(row.strip(" ▌▎▐") for row in shown).split())
        assert words == " ".join(note.split())  # every word shows: nothing cut mid-line


def _session_with_a_huge_turn(home: Path) -> None:
    """Six short turns, one of ~60,000 characters, then two short ones (newest)."""
    t = ClaudeTranscript("c0ffee00-0000-4000-8000-00000000c001", cwd="/home/t/work/bulky", slug="bulky-copy-test",
                         start=datetime(2026, 11, 20, 9, 0, tzinfo=UTC))
    for n in range(6):
        t.user(f"Early question {n} about the ledger export.")
        t.assistant(f"Early answer {n}: the ledger export is fine.")
    t.user("Paste the whole build log here.")
    t.assistant("\n".join(f"log line {i:05d}: compiling module number {i} of the ledger" for i in range(1200)))
    t.user("Which module failed?")
    t.assistant("Module 1142 failed: a missing import.")
    t.user("Fix it.")
    t.assistant("Fixed the import in module 1142; the build passes.")
    t.write_under(home / ".claude" / "projects")


async def test_shift_c_fills_its_budget_a_huge_turn_cut_and_marked(tmp_path, clipboard):
    _session_with_a_huge_turn(tmp_path)
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "C")
        await wait_for(pilot, lambda: clipboard.copied, what="the copy")
        text = clipboard.copied[0]
        assert 38_000 <= len(text) <= DEFAULT_BUDGET  # the budget is filled, not a few thousand characters
        assert text.rstrip().endswith("Fixed the import in module 1142; the build passes.")  # the latest turns, whole
        assert "Which module failed?" in text and "Paste the whole build log here." in text
        assert "_[… turn cut here:" in text  # the huge turn: its start, marked as cut
        assert "6 earlier turns left out to stay within 40,000 characters" in text
        assert "Early answer" not in text


async def test_newer_sessions_arriving_leave_the_untouched_list_at_its_top(demo_home):
    """What a cold start does as its chunks land (and a live change after it): newer
    sessions are listed above the rows shown. A list nobody has moved in shows its top."""
    from tui.widgets.sessions_pane import SessionList

    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        listing = app.main.query_one(SessionList)
        first = listing.rows[0].key
        for n in range(3):  # three sessions newer than any in the demo
            t = ClaudeTranscript(f"feed0000-0000-4000-8000-00000000f00{n}", cwd=f"/home/t/work/fresh{n}",
                                 start=datetime(2026, 11, 20, 11, 59, 10 + 10 * n, tzinfo=UTC))
            t.user(f"Fresh question {n}")
            t.assistant(f"Fresh answer {n}")
            t.write_under(home / ".claude" / "projects")
        await wait_for(pilot, lambda: len(app.main.sessions_pane.sessions) == 14, timeout=20, what="the new sessions")
        await settle(pilot)
        assert listing.rows[0].key != first  # the newest are on top…
        assert listing.scroll_y == 0 and listing.highlighted == 0  # …and shown, selected
