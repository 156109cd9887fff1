"""Pilot tests: keys and focus as people who live in lazygit, k9s or fzf expect them.

Esc leaves the search box (again: clears it), ``/`` comes back without typing a
slash, ``?``/``q``/``j``/``k`` work outside an input, the footer shows the keys of
the focused pane and fits 80 columns, chains fold, marks are counted, pickers
filter as you type and sort case-insensitively, and the date picker takes a
custom range.
"""

from __future__ import annotations

from pathlib import Path

from textual.widgets import Input
from textual.widgets._footer import FooterKey

from core.fixtures.demo import CHAIN_SLUG, DEFAULT_NOW
from tui.app import make_app
from tui.screens.dialogs import CUSTOM, PickScreen, RangeScreen, sort_values
from tui.screens.help import HelpScreen
from tui.testing import settle, wait_for
from tui.widgets.hit_list import HitList
from tui.widgets.reader import Reader
from tui.widgets.sessions_pane import SessionList

SIZE = (120, 40)
SMALL = (80, 24)


def app_for(home: Path):
    return make_app(home, now=DEFAULT_NOW)


def box(app) -> Input:
    return app.main.query_one("#query", Input)


def footer_keys(app) -> list[str]:
    return [key.key_display for key in app.main.query(FooterKey)]


async def test_esc_leaves_the_search_box_and_a_second_esc_clears_it(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert box(app).has_focus
        await pilot.press(*"bm25")
        await wait_for(pilot, lambda: app.main.search_pane.shown_query == "bm25", what="hits")
        await pilot.press("escape")
        assert isinstance(app.focused, HitList)
        assert box(app).value == "bm25"
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.press("escape")
        assert box(app).value == ""
        assert not box(app).has_focus
        await pilot.press("slash")
        assert box(app).has_focus and box(app).value == ""


async def test_q_quits_outside_an_input_and_is_typed_inside_it(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("q")
        assert box(app).value == "q" and app.is_running
        await pilot.press("escape", "q")  # a query is open: q asks first (issue 36)…
        await pilot.pause()
        assert app.is_running
        await pilot.press("q")  # …and q again quits
        await wait_for(pilot, lambda: not app.is_running, what="the app to quit")


async def test_j_and_k_move_in_the_lists(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab")
        listing = app.main.query_one(SessionList)
        assert listing.highlighted == 0
        await pilot.press("j", "j")
        assert listing.highlighted == 2
        await pilot.press("k")
        assert listing.highlighted == 1
        assert box(app).value == ""


async def test_the_footer_shows_the_keys_of_the_focused_pane(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        in_box = footer_keys(app)
        assert "esc" in in_box and "c" not in in_box and "?" not in in_box  # letters are typed here
        await pilot.press("tab")
        await settle(pilot)
        sessions = footer_keys(app)
        assert {"/", "c", "?", "p"} <= set(sessions) and "esc" not in sessions and "n" not in sessions
        await pilot.press("enter")
        await wait_for(pilot, lambda: app.main.reader.is_open, what="the reader")
        await settle(pilot)
        assert isinstance(app.focused, Reader)
        # opened from Sessions with no query: nothing for n to step through, so no "n Next hit";
        # "/" finds in the session and "z" maximises the reader
        assert "n" not in footer_keys(app) and "p" not in footer_keys(app)
        assert {"/", "z"} <= set(footer_keys(app))


async def test_the_footer_fits_80_columns_in_every_pane(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SMALL) as pilot:
        await settle(pilot)
        for _ in range(3):
            await pilot.press("tab")
            await settle(pilot)
            for key in app.main.query(FooterKey):
                region = key.region
                assert region.width >= len(key.key_display) + len(key.description) + 1, key.key_display
                assert region.right <= SMALL[0], f"{key.key_display} runs off the screen"


async def test_left_and_right_fold_and_unfold_a_chain(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "down", "down")  # inside the chain
        listing = app.main.query_one(SessionList)
        count = len(listing.rows)
        await pilot.press("left")
        assert listing.current_row.kind == "chain" and len(listing.rows) == count - 5
        assert "▸" in str(listing.get_option_at_index(0).prompt)
        await pilot.press("right")
        assert len(listing.rows) == count
        await pilot.press("space")  # on the chain header: fold again
        assert len(listing.rows) == count - 5


async def test_marked_sessions_are_counted_in_the_pane_status(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "down", "down", "down", "down", "shift+down")
        status = str(app.main.query_one("#sessions-status").render())
        assert "2 marked: #4-5" in status
        await pilot.press("escape")
        assert "marked" not in str(app.main.query_one("#sessions-status").render())


async def test_pickers_filter_as_you_type_and_sort_case_insensitively(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "p")
        await wait_for(pilot, lambda: isinstance(app.screen, PickScreen), what="the project picker")
        picker = app.screen
        assert picker.values == sort_values(picker.values)
        await pilot.press(*"BILL")
        assert picker.shown == ["billing-api"]
        await pilot.press("enter")
        await settle(pilot)
        assert app.filters.project == "billing-api"
    assert sort_values(["beta", "Alpha", "api"]) == ["Alpha", "api", "beta"]


async def test_the_date_picker_takes_a_custom_relative_range(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        everything = len(app.main.sessions_pane.sessions)
        await pilot.press("tab", "d")
        await wait_for(pilot, lambda: isinstance(app.screen, PickScreen), what="the date picker")
        await pilot.press(*"custom", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RangeScreen), what="the range dialog")
        await pilot.press(*"someday", "enter")
        assert isinstance(app.screen, RangeScreen)  # refused, with a hint
        assert "7d" in str(app.screen.query_one("#range-help").render())
        app.screen.query_one(Input).value = ""
        await pilot.press(*"2d", "enter")
        await settle(pilot)
        sessions = app.main.sessions_pane.sessions
        assert app.filters.date_label == "2d"
        assert 0 < len(sessions) < everything
        cutoff = DEFAULT_NOW.timestamp() - 2 * 86400
        from core.timeutil import parse_ts

        assert all(parse_ts(s.last_timestamp) >= cutoff for s in sessions)
    assert CUSTOM.startswith("Custom")
    assert CHAIN_SLUG
