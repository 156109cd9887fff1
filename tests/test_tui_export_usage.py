"""The app's ``E`` export dialog and ``u`` usage dialog (Pilot): the directory shown and
changeable, a file never replaced without asking; usage figures right-aligned, an agent
tab, and figures (not an error) on an archive holding NaN and garbage records."""

from __future__ import annotations

from pathlib import Path

from rich.text import Text
from textual.widgets import DataTable, Input, OptionList

from core.fixtures.demo import DEFAULT_NOW
from tui.app import make_app
from tui.screens.export_dialog import ExportScreen
from tui.screens.usage import UsageScreen
from tui.testing import settle, wait_for

from .test_export_safety import write_home
from .test_tui import SIZE, notes
from .test_usage_views import write_hostile_home


async def test_u_opens_with_figures_on_nan_and_garbage_records_right_aligned_with_an_agent_tab(tmp_path: Path):
    home = write_hostile_home(tmp_path / "home")
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.main.sessions_pane.session_list.focus()
        await pilot.press("u")
        await wait_for(pilot, lambda: isinstance(app.screen, UsageScreen) and app.screen.report is not None,
                       what="the usage figures")
        screen = app.screen
        table = screen.query_one(DataTable)
        labels = [str(table.get_row_at(i)[0]) for i in range(table.row_count)]
        assert "unknown date" in labels and labels[-1] == "TOTAL" and len(labels) >= 4
        assert not [n for n in notes(app) if "error" in n.lower()]
        cells = table.get_row_at(0)[1:]
        assert all(isinstance(c, Text) and c.justify == "right" for c in cells)
        await pilot.press("a")
        await wait_for(pilot, lambda: screen.report.by == "agent", what="by agent")
        assert [str(table.get_row_at(i)[0]) for i in range(table.row_count)] == ["claude", "TOTAL"]


async def _open_export(pilot, app) -> ExportScreen:
    app.main.sessions_pane.session_list.focus()
    await pilot.press("E")
    await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen), what="the export dialog")
    return app.screen


async def test_E_shows_the_directory_lets_it_change_and_asks_before_replacing(tmp_path: Path, monkeypatch):
    home = write_home(tmp_path / "home")
    started = tmp_path / "started-here"
    started.mkdir()
    monkeypatch.chdir(started)
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        screen = await _open_export(pilot, app)
        box = screen.query_one("#export-dir", Input)
        assert box.value == str(started)  # shown, not implied
        elsewhere = tmp_path / "elsewhere"
        box.value = str(elsewhere)
        screen.query_one(OptionList).focus()
        await pilot.press("enter")  # Markdown
        await wait_for(pilot, lambda: not isinstance(app.screen, ExportScreen), what="the export")
        files = sorted(elsewhere.iterdir())  # the chain: a file per session and an index
        assert files and all(p.suffix == ".md" for p in files) and list(started.iterdir()) == []
        written = files[0]
        await wait_for(pilot, lambda: any(str(elsewhere) in n for n in notes(app)), what="where it wrote")
        written.write_text("my edits")
        # again: the same directory is offered, and the file is not replaced without asking
        screen = await _open_export(pilot, app)
        assert screen.query_one("#export-dir", Input).value == str(elsewhere)
        await pilot.press("enter")
        status = screen.query_one("#export-status")
        await wait_for(pilot, lambda: "Replace it?" in str(status.render()), what="the question")
        assert str(written) in str(status.render()) and written.read_text() == "my edits"
        await pilot.press("n")
        assert written.read_text() == "my edits" and isinstance(app.screen, ExportScreen)
        await pilot.press("enter")
        await wait_for(pilot, lambda: "Replace it?" in str(status.render()), what="the question again")
        await pilot.press("y")
        await wait_for(pilot, lambda: not isinstance(app.screen, ExportScreen), what="the replacement")
        assert written.read_text() != "my edits" and len(list(elsewhere.iterdir())) == len(files)
