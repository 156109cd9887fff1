"""The app after finding a conversation: ``r`` resume, ``E`` export, ``u`` usage, and
the reader header's full session id, directory, tokens and estimated cost (Pilot)."""

from __future__ import annotations

from pathlib import Path

import pyperclip
from textual.widgets import DataTable, OptionList

from core.fixtures.demo import DEFAULT_NOW
from tui.app import make_app
from tui.screens.usage import UsageScreen
from tui.testing import ClipboardSpy, settle, wait_for
from tui.widgets.turn_view import SessionHeader

from .test_tui import SIZE, notes, open_first_hit

LONG = "tidal-humming-quokka"  # the demo's 300-turn session ("watermark skew" is in turn 217)


async def test_r_shows_and_copies_the_resume_command_of_the_hit(demo_home, clipboard):
    home, corpus = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_first_hit(pilot, "watermark skew")
        await pilot.press("r")
        await wait_for(pilot, lambda: clipboard.copied, what="the command on the clipboard")
        plan = app.archive.resume_plan(f"{LONG}#1")
        assert clipboard.copied == [plan.command]
        assert plan.command.endswith(f"claude --resume {corpus.queries[-1][1]}")
        await wait_for(pilot, lambda: any(plan.command in n for n in notes(app)), what="the notice")
        note = next(n for n in notes(app) if plan.command in n)
        # the demo's directories are not on this machine: said, and the command given anyway
        assert "no longer exists" in note and "The command copied to the clipboard" in note
        assert "saved to last-copy.md" in note  # the file that always works, as for every copy


async def test_r_says_so_when_the_clipboard_falls_back(demo_home, monkeypatch):
    home, _ = demo_home
    spy = ClipboardSpy(fail=True)
    monkeypatch.setattr(pyperclip, "copy", spy)
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_first_hit(pilot, "watermark skew")
        await pilot.press("r")
        fallback = "sent via OSC 52 (the terminal or tmux must allow it)"
        await wait_for(pilot, lambda: any(fallback in n for n in notes(app)), what="the honest notice")
        plan = app.archive.resume_plan(f"{LONG}#1")
        [note] = [n for n in notes(app) if fallback in n]
        assert plan.command in note  # the command is still shown, whatever the clipboard did
        assert spy.copied == []  # (the clipboard took nothing: the notice must not claim it did)


async def test_E_exports_the_selected_session_and_says_where(demo_home, tmp_path: Path, monkeypatch):
    home, _ = demo_home
    out = tmp_path / "exports"
    out.mkdir()
    monkeypatch.chdir(out)
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_first_hit(pilot, "watermark skew")  # the reader's current turn: LONG#1:217
        await pilot.press("E")
        await wait_for(pilot, lambda: isinstance(app.screen.focused, OptionList), what="the format picker")
        await pilot.press("down", "enter")  # HTML
        target = out / f"{LONG}-turn-217.html"  # a one-session chain: no session number in the name
        await wait_for(pilot, lambda: any(str(target) in n for n in notes(app)), what="the export notice")
        assert target.is_file() and 'id="turn-217"' in target.read_text()
        assert [p.name for p in out.iterdir()] == [target.name]


async def test_reader_header_shows_full_id_directory_tokens_and_cost(demo_home):
    home, corpus = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        reader = await open_first_hit(pilot, "watermark skew")
        await pilot.press("home")
        await wait_for(pilot, lambda: reader.query(SessionHeader), what="the session header")
        text = str(reader.query_one(SessionHeader).render())
        info = app.archive.one_session(f"{LONG}#1")
        usage = app.archive.session_usage(info.session_id)
        assert info.session_id in text and info.cwd in text
        assert usage.responses > 0 and f"≈${usage.cost_usd:,.2f} est." in text and usage.short() in text


async def test_u_shows_usage_grouped_and_regrouped(demo_home):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=(140, 44)) as pilot:
        await settle(pilot)
        app.main.sessions_pane.session_list.focus()  # (in the search box, u is a letter of the query)
        await pilot.press("u")
        await wait_for(pilot, lambda: isinstance(app.screen, UsageScreen) and app.screen.report is not None, what="usage")
        screen = app.screen
        expected = app.archive.usage_report(by="day")
        table = screen.query_one(DataTable)
        assert table.row_count == len(expected.rows) + 1  # and the total
        assert table.get_row_at(table.row_count - 1)[0] == "TOTAL"
        await pilot.press("o")
        await wait_for(pilot, lambda: screen.report.by == "model", what="by model")
        assert [table.get_row_at(i)[0] for i in range(table.row_count - 1)] == [g for g, _ in app.archive.usage_report(by="model").rows]
        await pilot.press("escape")
        assert not isinstance(app.screen, UsageScreen)
