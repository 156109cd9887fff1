"""The sessions pane folds while a query's hits have the column (Pilot): folding and
unfolding at the same width keeps the rows laid out before (re-laying out hundreds of
session rows twice per query was a first keystroke's cost); a width changed while folded
lays them out again when they show."""

from __future__ import annotations

from core.fixtures.demo import DEFAULT_NOW
from tui.app import make_app
from tui.testing import settle, wait_for
from tui.widgets.sessions_pane import SessionList

from .test_tui_hitlist import type_query

SIZE = (120, 35)


def _count_layouts(listing: SessionList) -> list[int]:
    calls: list[int] = []
    render_rows = listing.render_rows

    def counted(*args, **kwargs):
        calls.append(listing.scrollable_content_region.width)
        return render_rows(*args, **kwargs)

    listing.render_rows = counted  # type: ignore[method-assign]
    return calls


async def _clear(pilot) -> None:
    app = pilot.app
    app.main.search_pane.query_one("#query").value = ""
    await wait_for(pilot, lambda: app.main.search_pane.shown_query == "", what="the query to clear")
    await settle(pilot)


async def test_folding_for_a_query_keeps_the_session_rows(demo_home):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_query(pilot, "flaky")  # (the first time, a scrollbar the first layout did not leave room for)
        await _clear(pilot)
        listing = app.main.query_one(SessionList)
        width = listing.rendered_width
        first_row = listing.get_option_at_index(0).prompt
        calls = _count_layouts(listing)
        await type_query(pilot, "invoice")
        assert app.main.sessions_pane.has_class("-folded")
        await _clear(pilot)
        assert not app.main.sessions_pane.has_class("-folded")
        assert calls == [] and listing.rendered_width == width
        assert listing.get_option_at_index(0).prompt is first_row


async def test_a_width_changed_while_folded_lays_the_rows_out_when_they_show(demo_home):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        listing = app.main.query_one(SessionList)
        width = listing.rendered_width
        calls = _count_layouts(listing)
        await type_query(pilot, "flaky")
        await pilot.resize_terminal(160, 35)
        await settle(pilot)
        await _clear(pilot)
        assert listing.scrollable_content_region.width != width
        assert calls and listing.rendered_width == listing.scrollable_content_region.width
