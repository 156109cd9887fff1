"""Hit rows show what was searched for (issue 36), through the real app (Pilot).

Every query word in a row's snippet is highlighted (a stem the stemmer rewrote too:
``flaky`` → ``flaki``); the snippet's window is chosen around a query word, also one
deep inside a long path; an emoji (two cells) never pushes a two-line row onto a third.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from textual.content import Content

from core.fixtures.claude import ClaudeTranscript
from core.fixtures.demo import DEFAULT_NOW
from tui.app import make_app
from tui.testing import screen_text, settle, wait_for
from tui.widgets.hit_list import HitList

from .test_tui_hitlist import type_query

SIZE = (120, 35)

PATH = "platform_infrastructure/services/payments_gateway_worktree/config.yaml"
EMOJI = "✅ Deploy 🚀🚀🚀 checks 🎉🎉 passed 👍👍👍 and the 🔥 canary 🔥 rollout 🚀 is green ✅✅ everywhere 🎉🎉🎉🎉 done"


def _corpus(home: Path) -> None:
    for n, (question, answer) in enumerate([
        ("Where does the payments config live now?", f"It moved: {PATH} holds it."),
        ("Is the release out?", EMOJI),
        ("Is the release out on staging?", EMOJI + " on staging"),
    ]):
        t = ClaudeTranscript(f"ab1e0000-0000-4000-8000-00000000a00{n}", cwd=f"/home/t/work/app{n}",
                             start=datetime(2026, 11, 19, 9, n, tzinfo=UTC))
        t.user(question)
        t.assistant(answer)
        t.write_under(home / ".claude" / "projects")


def highlighted(prompt: Content) -> list[str]:
    """The highlighted words of a row (bold on a background: the match style)."""
    plain = prompt.plain
    return [plain[span.start : span.end] for span in prompt.spans if "bold" in str(span.style) and "on" in str(span.style)]


def snippet_line(prompt: Content) -> str:
    return prompt.plain.split("\n")[1]


async def test_every_query_word_in_a_row_is_highlighted(demo_home):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_query(pilot, "flaky invoice test")
        hit_list = app.main.query_one(HitList)
        rows = [hit_list.get_option_at_index(i).prompt for i in range(hit_list.option_count)]
        row = next(r for r in rows if "test_invoice_rollover is flaky" in r.plain)
        assert {"test_invoice_rollover", "flaky"} <= set(highlighted(row))


async def test_the_snippet_shows_a_query_word_deep_inside_a_long_path(tmp_path):
    _corpus(tmp_path)
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:  # snippets get ~44 columns here
        await settle(pilot)
        await type_query(pilot, "worktree")
        hit_list = app.main.query_one(HitList)
        row = hit_list.get_option_at_index(0).prompt
        assert "worktree" in snippet_line(row)
        assert any("worktree" in word for word in highlighted(row))


async def test_an_emoji_snippet_keeps_its_row_at_two_lines(tmp_path):
    _corpus(tmp_path)
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_query(pilot, "canary rollout")
        await pilot.press("escape", "g")  # every matching turn: the two emoji turns, one after the other
        await wait_for(pilot, lambda: len(app.main.search_pane.hits) == 2 and not app.main.search_pane.grouped, what="hits")
        await settle(pilot)
        hit_list = app.main.query_one(HitList)
        width = hit_list.scrollable_content_region.width
        for i in range(hit_list.option_count):
            for line in hit_list.get_option_at_index(i).prompt.split("\n"):
                assert line.cell_length <= width, line.plain
        region = hit_list.content_region
        rows = [row[region.x : region.right] for row in screen_text(app)[region.y : region.bottom]]
        heads = [n for n, row in enumerate(rows) if row[:1].strip()]  # a hit's first line starts at the edge
        assert len(heads) == 2 and heads[1] - heads[0] == 2  # two lines a hit, the emoji row too


def test_a_laid_out_row_is_drawn_as_it_is_never_wrapped():
    """A compact row is laid out to the list's width when it is made: the list asks its
    height and draws it without wrapping it again (at every keystroke, for every hit)."""
    from textual.style import Style
    from textual.visual import RenderOptions

    from tui.widgets.hit_rows import Rows

    row = Rows("quiet-sorting-falcon#1:0 · billing-api · claude  4d ago\n  the snippet line")
    assert row.get_height({}, 20) == 2  # as plain Content, wrapped at 20 cells: 5 lines
    assert Content(row.plain).get_height({}, 20) > 2
    strips = row.render_strips(20, None, Style(), RenderOptions(Style.parse, {}))
    assert [strip.cell_length for strip in strips] == [20, 18]
    assert strips[0].text.endswith("…")


async def test_compact_rows_are_rows_and_roomy_ones_wrap(demo_home):
    from tui.widgets.hit_rows import Rows

    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await type_query(pilot, "flaky invoice test")
        hit_list = app.main.query_one(HitList)
        assert all(isinstance(hit_list.get_option_at_index(i).prompt, Rows) for i in range(hit_list.option_count))
        assert set(hit_list._heights.values()) == {2}
        app.main.search_pane.toggle_compact()  # v: the roomy layout's snippet wraps onto its second line
        await settle(pilot)
        assert not isinstance(hit_list.get_option_at_index(0).prompt, Rows)
        assert min(hit_list._heights.values()) >= 3


def test_a_snippet_window_counts_cells_whether_or_not_each_character_is_one():
    """Latin text (one cell a character: counted by length) and text with wide characters
    (counted cell by cell) get the same window around the word, within the width."""
    from rich.cells import cell_len

    from tui.formatting import around_match

    filler = "café — naïve résumé " * 8
    for text in (f"{filler}the canary rollout is green {filler}", f"{filler}the canary rollout 🚀 is green {filler}"):
        for width in (20, 33, 44):
            window = around_match(text, ["canari"], width)
            assert cell_len(window) <= width and "canary" in window, (width, window)
            assert window.startswith("…") and window.endswith("…")
