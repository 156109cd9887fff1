"""Pilot tests for the app's edges: empty machine, bad files, failing workers, a
2,000-turn session, date filters."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.fixtures.demo import DEFAULT_NOW
from tui.app import make_app
from tui.screens.dialogs import PickScreen
from tui.screens.empty import EmptyScreen
from tui.testing import settle, wait_for
from tui.widgets.reader import PAGE
from tui.widgets.turn_view import TurnView

from .support import open_archive, project_dir, transcript
from .test_tui import notes

SIZE = (120, 40)


async def test_empty_machine_shows_where_it_looked_and_the_demo(tmp_path):
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, EmptyScreen), what="the empty screen")
        text = str(app.screen.query_one("#empty-text").render())
        assert str(tmp_path / ".claude" / "projects") in text
        assert str(tmp_path / ".codex" / "sessions") in text
        assert "relay-search --demo" in text
        # it watches: a session written now closes the screen
        t = transcript("12121212-1212-4121-8121-121212121212")
        t.user("first ever prompt about the gazebo renderer")
        t.assistant("Hello.")
        t.write(project_dir(tmp_path))
        await wait_for(pilot, lambda: not isinstance(app.screen, EmptyScreen), what="the empty screen to close")
        await settle(pilot)
        assert [s.summary for s in app.main.sessions_pane.sessions] == ["first ever prompt about the gazebo renderer"]


async def test_unreadable_lines_are_counted_in_the_status_line(tmp_path):
    t = transcript("34343434-3434-4343-8343-343434343434")
    t.user("parse the heliotrope config")
    t.raw("{not json at all")
    t.raw("[1, 2, 3]")
    t.assistant("Parsed.")
    t.write(project_dir(tmp_path))
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        status = str(app.main.query_one("#status").render())
        assert "2 unreadable lines in 1 file" in status
        assert len(app.main.sessions_pane.sessions) == 1


class _Failing:
    """An archive whose search breaks the way bugs and bad input do."""

    def __init__(self, inner, error: Exception) -> None:
        self._inner = inner
        self._error = error

    def __getattr__(self, name):
        return getattr(self._inner, name)

    def search(self, *args, **kwargs):
        raise self._error


async def test_worker_errors_become_notifications_not_tracebacks(demo_home):
    from core.errors import BadInput

    home, _ = demo_home
    archive = open_archive(home)
    cases = ((RuntimeError("index exploded"), "RuntimeError: index exploded"), (BadInput("query too long"), "query too long"))
    try:
        for error, expected in cases:
            app = make_app(home, now=DEFAULT_NOW, archive=_Failing(archive, error))
            async with app.run_test(size=SIZE) as pilot:
                await settle(pilot)
                await pilot.press(*"gizmo")

                def reported(app=app, expected=expected) -> bool:
                    return any(expected in n for n in notes(app))

                await wait_for(pilot, reported, what="the error notification")
                assert app.is_running and app.main.search_pane.hits == []
    finally:
        archive.close()


def _long_session(home: Path, turns: int) -> str:
    sid = "20002000-2000-4000-8000-200020002000"
    t = transcript(sid, cwd="/home/t/work/marathon", slug="endless-winding-road", start=datetime(2026, 11, 1, tzinfo=UTC))
    for n in range(turns):
        t.user(f"step {n}: tune the lighthouse beacon module, part {n}")
        if n % 2 == 0:
            t.tool("Bash", {"command": f"pytest tests/test_beacon_{n % 17}.py -q"}, f"{n % 9 + 1} passed")
        t.assistant(f"Done with part {n}: the **beacon** now blinks {n % 7 + 1} times.\n\n- checked\n- committed")
    t.write(project_dir(home, "/home/t/work/marathon"))
    return sid


async def test_a_2000_turn_session_paints_a_page_and_grows_on_demand(tmp_path):
    sid = _long_session(tmp_path, 2000)
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, timeout=120)
        reader = app.main.reader
        app.main.open_ref("endless-winding-road#1:1500", focus_reader=True)
        await wait_for(pilot, lambda: reader.current is not None and reader.query(f"#block-{reader.current}"), what="first paint")
        assert reader.current_block.turn == 1500 and reader.current_block.session_id == sid
        assert len(reader.query(TurnView)) <= 3 * PAGE  # not 2,000 widgets (its speed: bench/app_bench.py)
        # (the window is remounted asynchronously: on a loaded machine one pause is not enough)
        await pilot.press("end")
        await wait_for(pilot, lambda: reader.query(TurnView).last().block.turn == 1999, what="the last turn")
        await pilot.press("home")
        await wait_for(pilot, lambda: reader.query(TurnView).first().block.turn == 0, what="the first turn")
        mounted = reader.hi
        reader.scroll_end(animate=False)  # scrolling down mounts more pages below
        await wait_for(pilot, lambda: reader.hi > mounted > 0, what="more turns mounted below")


async def test_d_filters_by_date(demo_home):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "d")
        await wait_for(pilot, lambda: isinstance(app.screen, PickScreen), what="the date picker")
        await pilot.press("down", "down", "enter")  # Last 7 days
        await settle(pilot)
        assert app.filters.date_label == "Last 7 days"
        cutoff = (DEFAULT_NOW - timedelta(days=8)).isoformat()
        sessions = app.main.sessions_pane.sessions
        assert sessions and all(s.last_timestamp >= cutoff for s in sessions)
        assert len(sessions) < 11
        assert "Last 7 days" in str(app.main.query_one("#sessions-status").render())


async def test_clearing_while_the_reader_paints_never_crashes(tmp_path):
    """The reader is cleared (or given another conversation) while it mounts a page."""
    import asyncio

    from core.fixtures.demo import write_demo_corpus
    from tui import tasks

    corpus = write_demo_corpus(tmp_path)
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        reader = app.main.reader
        loaded = tasks.load_conversation(app.archive, corpus.chain_slug)
        for _ in range(3):
            painting = asyncio.create_task(reader.show(loaded))
            await asyncio.sleep(0)  # show() is now waiting for the old children to go
            reader.clear()
            await painting  # must not raise
        await reader.show(loaded)
        await pilot.pause()
        assert reader.is_open and len(reader.blocks) == len(loaded.blocks)
