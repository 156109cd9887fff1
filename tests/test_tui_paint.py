"""What a keystroke repaints (issue 35.1: keystroke → hit list), through Textual's Pilot.

* A key typed into the search box repaints the box and never lays out the screen again
  (Input keeps its text's width in a layout reactive), yet a query longer than the box
  still scrolls so the cursor stays in it.
* A hit row drawn for one keystroke is reused by the next when it shows the same thing:
  the same strips as a fresh drawing, carrying the row's new place (what a click on it
  selects), and drawn in the new theme's colours after a theme change.
* The app sets Textual's frame rate to 120 before Textual loads, unless the user chose one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from textual.app import App, ComposeResult
from textual.content import Content
from textual.theme import Theme
from textual.visual import Visual
from textual.widgets import Static
from textual.widgets.option_list import Option

from tui.widgets.query_box import QueryBox
from tui.widgets.search_pane import HitList

REPO = Path(__file__).resolve().parent.parent


class BoxApp(App):
    CSS = "QueryBox { width: 40; }"

    def compose(self) -> ComposeResult:
        yield QueryBox(id="query")
        yield Static("below", id="below")


async def test_typing_into_the_search_box_never_lays_out_the_screen() -> None:
    app = BoxApp()
    async with app.run_test(size=(80, 12)) as pilot:
        box = app.query_one(QueryBox)
        box.focus()
        await pilot.pause()
        screen = app.screen
        layouts = 0
        refresh_layout = screen._refresh_layout

        def counted(*args, **kwargs):
            nonlocal layouts
            layouts += 1
            return refresh_layout(*args, **kwargs)

        screen._refresh_layout = counted  # type: ignore[method-assign]
        await pilot.press(*"pyright version")
        await pilot.pause()
        assert box.value == "pyright version"
        assert layouts == 0
        assert box.virtual_size.width == len("pyright version") + 1  # (what scrolling reads)


async def test_a_query_longer_than_the_box_keeps_the_cursor_in_it() -> None:
    app = BoxApp()
    async with app.run_test(size=(80, 12)) as pilot:
        box = app.query_one(QueryBox)
        box.focus()
        long_query = "a_very_long_identifier_that_does_not_fit " * 3
        await pilot.press(*long_query)
        await pilot.pause()
        region = box.content_region
        assert box.scroll_x > 0  # (0 when the box does not know its text's width)
        assert region.x <= box.cursor_screen_offset.x <= region.right  # the cell after the text, as Input has it


class ListApp(App):
    def compose(self) -> ComposeResult:
        yield HitList(id="hits")


def rows(*texts: str) -> list[Option]:
    return [Option(Content.assemble((text, "bold $text-accent"), "\n  snippet of " + text), id=f"h{i}") for i, text in enumerate(texts)]


def drawn(hit_list: HitList) -> list[list[tuple[str, object]]]:
    """Each line of the list as (text, the option index its segments carry)."""
    lines = hit_list.render_lines(hit_list.scrollable_content_region.reset_offset)
    return [[(seg.text, (seg.style.meta or {}).get("option") if seg.style else None) for seg in line] for line in lines]


async def test_a_row_kept_by_the_next_keystroke_is_reused_at_its_new_place(monkeypatch) -> None:
    app = ListApp()
    async with app.run_test(size=(60, 12)) as pilot:
        hit_list = app.query_one(HitList)
        hit_list.set_options(rows("alpha", "beta", "gamma"))
        await pilot.pause()
        drawn(hit_list)
        drawings = 0
        to_strips = Visual.to_strips.__func__  # type: ignore[attr-defined]

        def counted(cls, *args, **kwargs):
            nonlocal drawings
            drawings += 1
            return to_strips(cls, *args, **kwargs)

        monkeypatch.setattr(Visual, "to_strips", classmethod(counted))
        hit_list.set_options(rows("gamma", "alpha", "delta"))
        await pilot.pause()
        reused = drawn(hit_list)
        assert drawings == 1  # only "delta" is new
        monkeypatch.undo()

        fresh_app = ListApp()
        async with fresh_app.run_test(size=(60, 12)) as fresh_pilot:
            fresh = fresh_app.query_one(HitList)
            fresh.set_options(rows("gamma", "alpha", "delta"))
            await fresh_pilot.pause()
            assert reused == drawn(fresh)
        carried = [{index for _, index in line if index is not None} for line in reused[1:6]]  # (under the border)
        assert carried == [{0}, {0}, {1}, {1}, {2}]  # gamma moved from 2 to 0, alpha from 0 to 1


async def test_a_new_theme_draws_the_same_rows_again() -> None:
    # two themes alike but for the primary colour (what the row's reference is drawn in): the rows' base style is the same in both
    twins = [Theme(name=f"twin-{i}", primary=primary, background="#101010", foreground="#e0e0e0") for i, primary in enumerate(("#ff0000", "#00ff00"))]
    app = ListApp()
    async with app.run_test(size=(60, 12)) as pilot:
        for theme in twins:
            app.register_theme(theme)
        app.theme = twins[0].name
        hit_list = app.query_one(HitList)
        hit_list.set_options(rows("alpha"))
        await pilot.pause()
        line = 1  # (under the border)
        before = hit_list.render_lines(hit_list.scrollable_content_region.reset_offset)[line]
        app.theme = twins[1].name
        await pilot.pause()
        after = hit_list.render_lines(hit_list.scrollable_content_region.reset_offset)[line]
        assert after.text == before.text
        assert [seg.style for seg in after] != [seg.style for seg in before]


@pytest.mark.parametrize(("chosen", "expected"), [(None, "120"), ("30", "30")])
def test_the_app_repaints_at_120_frames_unless_the_user_chose(chosen: str | None, expected: str) -> None:
    env = {k: v for k, v in os.environ.items() if k != "TEXTUAL_FPS"}
    if chosen is not None:
        env["TEXTUAL_FPS"] = chosen
    code = "import tui.app, textual.screen; print(round(1 / textual.screen.UPDATE_PERIOD))"
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == expected
