"""What a keystroke repaints (issue 35.1: keystroke → hit list), through Textual's Pilot.

* A key typed into the search box repaints the box and never lays out the screen again
  (Input keeps its text's width in a layout reactive), yet a query longer than the box
  still scrolls so the cursor stays in it.
* A hit row drawn for one keystroke is reused by the next when it shows the same thing:
  the same strips as a fresh drawing, drawn in the new theme's colours after a theme
  change. The strips carry no place of their own: the mouse finds a row by its line, so
  hovering or clicking a row that moved reaches its new place. A roomy row (OptionList's
  own drawing, text that wraps) is kept across keystrokes too.
* A row made of its lines (the compact rows) knows them as splitting it would find them.
* A row new to the list draws only its lines not drawn before (a session's line stays
  while the snippet's marks change), and draws them exactly as Textual's OptionList does.
* The hit list first overflowing as a query is typed lays out nothing (it keeps its
  scrollbar's column).
* The app sets Textual's frame rate to 120 before Textual loads, unless the user chose one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from textual.app import App, ComposeResult
from textual.content import Content
from textual.strip import Strip
from textual.theme import Theme
from textual.visual import Visual
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from core.fixtures.demo import DEFAULT_NOW
from tui.app import make_app
from tui.testing import settle, wait_for
from tui.widgets.hit_list import HitList
from tui.widgets.hit_rows import Rows
from tui.widgets.query_box import QueryBox

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


def row(head: str, snippet: str) -> Rows:
    """A hit row as the app builds one (:func:`tui.widgets.hit_rows.compact_hit`)."""
    content = Content.assemble((head, "bold $text-accent"), (" · ", "$text-muted"), ("claude", "$text-secondary"), "\n  ", snippet)
    return Rows(content.plain, list(content.spans), content.cell_length, strip_control_codes=False)


def rows(*texts: str) -> list[Option]:
    return [Option(row(text, "snippet of " + text), id=f"h{i}") for i, text in enumerate(texts)]


def drawn(hit_list: HitList) -> list[list[tuple[str, object]]]:
    """Each line of the list as (text, the option index its segments carry)."""
    lines = hit_list.render_lines(hit_list.scrollable_content_region.reset_offset)
    return [[(seg.text, (seg.style.meta or {}).get("option") if seg.style else None) for seg in line] for line in lines]


def without_place(strips: list[Strip]) -> list[list[tuple[str, object, dict]]]:
    """Each segment as (text, style, meta) without the option index OptionList puts in the meta."""
    return [
        [(seg.text, seg.style.clear_meta_and_links() if seg.style else None, {k: v for k, v in (seg.style.meta if seg.style else {}).items() if k != "option"}) for seg in strip]
        for strip in strips
    ]


def count_drawings(monkeypatch) -> list[tuple[object, ...]]:
    """Each drawing of a whole row by OptionList's general path (Visual.to_strips), from now on."""
    drawings: list[tuple[object, ...]] = []
    to_strips = Visual.to_strips.__func__  # type: ignore[attr-defined]

    def counted(cls, *args, **kwargs):
        drawings.append(args)
        return to_strips(cls, *args, **kwargs)

    monkeypatch.setattr(Visual, "to_strips", classmethod(counted))
    return drawings


async def test_a_row_kept_by_the_next_keystroke_is_reused_at_its_new_place(monkeypatch) -> None:
    app = ListApp()
    async with app.run_test(size=(60, 12)) as pilot:
        hit_list = app.query_one(HitList)
        hit_list.set_options(rows("alpha", "beta", "gamma"))
        await pilot.pause()
        drawn(hit_list)
        drawings = count_drawings(monkeypatch)
        lines_drawn = hit_list._line_drawer.drawn
        hit_list.set_options(rows("gamma", "alpha", "delta"))
        await pilot.pause()
        reused = drawn(hit_list)
        assert drawings == []  # the hit rows are drawn a line at a time
        assert hit_list._line_drawer.drawn - lines_drawn == 2  # only "delta" is new
        monkeypatch.undo()

        fresh_app = ListApp()
        async with fresh_app.run_test(size=(60, 12)) as fresh_pilot:
            fresh = fresh_app.query_one(HitList)
            fresh.set_options(rows("gamma", "alpha", "delta"))
            await fresh_pilot.pause()
            assert reused == drawn(fresh)
        # the strips carry no place: the mouse finds a row by its line (gamma moved from 2 to 0,
        # alpha from 0 to 1; the rows start under the border)
        assert all(index is None for line in reused for _, index in line)
        for line, place in ((1, 0), (2, 0), (3, 1), (4, 1), (5, 2)):
            await pilot.hover(HitList, offset=(3, line))
            assert hit_list._mouse_hovering_over == place, f"hovering line {line}"
            await pilot.click(HitList, offset=(3, line))
            assert hit_list.highlighted == place, f"a click on line {line}"
        await pilot.hover(HitList, offset=(3, 8))  # under the last row
        assert hit_list._mouse_hovering_over is None


async def test_a_roomy_row_kept_by_the_next_keystroke_is_reused_and_found_by_its_line(monkeypatch) -> None:
    """A roomy row (``v``) is text that wraps, drawn by OptionList's own path: kept across
    keystrokes too, the mouse reaching a moved row by its line."""

    def roomy(*texts: str) -> list[Option]:
        return [Option(Content.assemble((text, "bold $text-accent"), "\n", "snippet of " + text), id=f"h{i}") for i, text in enumerate(texts)]

    app = ListApp()
    async with app.run_test(size=(60, 12)) as pilot:
        hit_list = app.query_one(HitList)
        hit_list.set_options(roomy("alpha", "beta", "gamma"))
        await pilot.pause()
        drawn(hit_list)
        drawings = count_drawings(monkeypatch)
        hit_list.set_options(roomy("gamma", "alpha", "delta"))
        await pilot.pause()
        drawn(hit_list)
        assert len(drawings) == 1  # only "delta" is new
        monkeypatch.undo()
        for line, place in ((1, 0), (3, 1), (6, 2)):
            await pilot.click(HitList, offset=(3, line))
            assert hit_list.highlighted == place, f"a click on line {line}"


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


async def test_a_new_row_draws_only_the_line_not_drawn_before() -> None:
    app = ListApp()
    async with app.run_test(size=(60, 12)) as pilot:
        hit_list = app.query_one(HitList)
        hit_list.set_options([Option(row("alpha", "the flaky test"), id="h0")])
        await pilot.pause()
        before = hit_list._line_drawer.drawn
        marked = Content.assemble("the ", ("flaky", "bold $text-warning"), " test")  # the next key marks a word
        hit_list.set_options([Option(row("alpha", marked), id="h0")])
        await pilot.pause()
        assert hit_list._line_drawer.drawn - before == 1  # the snippet's line; the session's line was drawn
        again = drawn(hit_list)
        fresh_app = ListApp()
        async with fresh_app.run_test(size=(60, 12)) as fresh_pilot:
            fresh = fresh_app.query_one(HitList)
            fresh.set_options([Option(row("alpha", marked), id="h0")])
            await fresh_pilot.pause()
            assert again == drawn(fresh)


# texts a row may hold: wide CJK and emoji, combining marks, tabs, Textual markup's brackets
LINE_TEXT = st.text(alphabet=st.sampled_from([*"ab Z_./:-[]$\t", "\u2192", "\u754c", "\U0001f600", "\u00e9", "\u0301"]), max_size=90)
STYLES = st.sampled_from(["bold $text-accent", "$text-muted", "bold", "$text-secondary", "reverse", "italic $text-muted", "bold $text-warning"])


@st.composite
def styled_lines(draw: st.DrawFn) -> Content:
    text = draw(LINE_TEXT)
    content = Content(text)
    for _ in range(draw(st.integers(0, 4))):
        start = draw(st.integers(0, len(text)))
        content = content.stylize(draw(STYLES), start, draw(st.integers(start, len(text))))
    return content


@settings(max_examples=150, deadline=None)
@given(lines=st.lists(styled_lines(), min_size=1, max_size=3))
def test_a_row_made_of_its_lines_knows_them_as_splitting_it_finds_them(lines: list[Content]) -> None:
    known = Rows.of_lines(lines)
    joined = Content("\n").join(lines)
    split = Rows(joined.plain, list(joined.spans), joined.cell_length, strip_control_codes=False).lines
    assert (known.plain, known.spans) == (joined.plain, joined.spans)
    assert [(line.plain, line.spans) for line in known.lines] == [(line.plain, line.spans) for line in split]


class PaddedListApp(ListApp):
    CSS = "HitList > .option-list--option { padding: 0 2 0 1; }"


@pytest.mark.parametrize("app_class", [ListApp, PaddedListApp])
async def test_rows_drawn_a_line_at_a_time_are_what_optionlist_draws(app_class: type[ListApp]) -> None:
    app = app_class()
    async with app.run_test(size=(48, 12)) as pilot:
        hit_list = app.query_one(HitList)
        await pilot.pause()
        padding = hit_list.get_component_styles("option-list--option").padding
        assert padding == ((0, 0, 0, 0) if app_class is ListApp else (0, 2, 0, 1))
        width = hit_list.scrollable_content_region.width - hit_list._get_left_gutter_width()
        styles = [hit_list.get_visual_style("option-list--option"), hit_list.get_visual_style("option-list--option-highlighted")]

        @settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
        @given(lines=st.lists(styled_lines(), min_size=1, max_size=3), index=st.integers(0, 30), highlighted=st.booleans())
        @example(lines=[Content("x" * 80).stylize("bold", 40, 60), Content("\u754c" * 30 + "\tend")], index=3, highlighted=False)  # (wider than the list: cut, with an ellipsis)
        def check(lines: list[Content], index: int, highlighted: bool) -> None:
            content = Content("\n").join(lines)
            prompt = Rows(content.plain, list(content.spans), content.cell_length, strip_control_codes=False)
            option = Option(prompt)
            hit_list._option_to_index[option] = index  # (OptionList's own drawing reads the option's place here)
            style = styles[highlighted]
            ours = hit_list._line_drawer.draw(hit_list, prompt.lines, style, width, padding)
            theirs = OptionList._get_option_render(hit_list, option, style)
            assert ours is not None
            assert without_place(ours) == without_place(theirs)
            assert all(seg.style is None or "option" not in seg.style.meta for strip in ours for seg in strip)
            assert [strip.cell_length for strip in ours] == [strip.cell_length for strip in theirs]

        check()


async def test_hits_first_overflowing_the_list_lay_out_nothing(demo_home) -> None:
    """The hit list keeps its scrollbar's column: a scrollbar appearing when the list first
    overflows (a query's second or third letter) laid out the whole screen again."""
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=(100, 16)) as pilot:
        await settle(pilot)
        app.main.action_focus_search()
        pane = app.main.search_pane
        await pilot.press("t")
        await wait_for(pilot, lambda: pane.shown_query == "t", what="hits for 't'")
        await settle(pilot)
        hit_list = app.main.query_one(HitList)
        assert hit_list.max_scroll_y == 0  # the hits fit (there are none yet)
        layouts = 0
        refresh_layout = app.screen._refresh_layout

        def counted(*args, **kwargs):
            nonlocal layouts
            layouts += 1
            return refresh_layout(*args, **kwargs)

        app.screen._refresh_layout = counted  # type: ignore[method-assign]
        await pilot.press(*"est")
        await wait_for(pilot, lambda: pane.shown_query == "test", what="hits for 'test'")
        await settle(pilot)
        assert hit_list.max_scroll_y > 0  # now they overflow
        assert layouts == 0


def test_a_session_s_line_is_made_once_for_the_keystrokes_that_show_it_and_says_what_changed() -> None:
    """A compact row's first line does not depend on the query: the next keystroke's row for the
    same session reuses it (half of making a row), and a session whose count, age or place
    changed gets a line that says so."""
    from datetime import timedelta

    from core.model import SearchHit
    from tui.widgets import hit_rows

    stamp = DEFAULT_NOW - timedelta(hours=3)
    hit = SearchHit(
        session_id="5d1f0c2e-0000-4000-8000-00000000beef", slug="brave-otter", session_number=2, project="/home/me/lighthouse",
        agent="claude", turn_number=7, sequence=3, score=1.0, snippet="the retry budget ran out under load", ref="brave-otter#2:7",
        timestamp=stamp.isoformat(), more_in_session=4,
    )  # fmt: skip
    hit_rows._head.cache_clear()
    first = hit_rows.compact_hit(hit, "retry", DEFAULT_NOW, 60)
    second = hit_rows.compact_hit(hit, "budget", DEFAULT_NOW, 60)
    assert hit_rows._head.cache_info().hits == 1
    head = first.plain.split("\n")[0]
    assert head == second.plain.split("\n")[0]
    assert head.startswith("brave-otter#2:7 · ") and "claude" in head and head.endswith("+4 more · 3h ago")
    assert first.spans[-1] != second.spans[-1]  # the snippet marks what each query matched

    def head_of(**changed) -> str:
        return hit_rows.compact_hit(msgspec.structs.replace(hit, **changed), "retry", DEFAULT_NOW, 60).plain.split("\n")[0]

    assert head_of(more_in_session=9).endswith("+9 more · 3h ago")
    assert head_of(timestamp=(DEFAULT_NOW - timedelta(days=2)).isoformat()).endswith("+4 more · 2d ago")
    assert head_of(turn_number=8, ref="brave-otter#2:8").startswith("brave-otter#2:8 · ")
    assert "claude sub" in head_of(is_sidechain=True)
    assert "codex" in head_of(agent="codex") and "/home/me/harbo…" in head_of(project="/home/me/harbour")
