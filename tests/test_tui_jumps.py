"""Home and End in a long session (issue 22): the first frame after the key is a whole screen
at the right end, nothing in it moves as the rest of the window mounts, and tall turns make
that first window smaller than a page (what brought the jump under 50 ms).

The row estimate that picks the first window must never overstate what a block paints,
or the first frame would come up short; that is checked against the painted heights.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.fixtures.claude import ClaudeTranscript
from tui.app import make_app
from tui.testing import settle, wait_for
from tui.widgets.turn_view import TurnView
from tui.widgets.window import PAGE, min_rows

from .test_tui_reader import open_from_sessions, visible_text

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
TURNS = 80


def write_session(home: Path, shape: str) -> None:
    t = ClaudeTranscript("5a1e2b3c-0000-4000-8000-0000000000aa", cwd="/home/me/work/bay", slug=f"{shape}-amber-bay",
                         start=datetime(2026, 11, 19, 9, 0, tzinfo=UTC))  # fmt: skip
    for i in range(TURNS):
        if shape == "tiny":
            t.user(f"ok {i}?")
            t.assistant(f"yes {i}.")
            continue
        t.user(f"turn {i}: why is the bay gauge slow?\n\nIt was fine yesterday.\nThe log is below.")
        if i % 2:
            t.thinking("The gauge polls every tick; maybe the budget is too small.")
        t.tool("Bash", {"command": "pytest -q", "description": "run the tests"}, "\n".join(f"line {j}" for j in range(30)))
        t.assistant(f"Turn {i} answer: the gauge polls too often, and the cache is cold.\nSo it waits.\n\n"
                    "- raised the poll interval\n- warmed the cache\n  (on start)\n\n"
                    "1. ran the tests\n2) all green\n\n```python\ndef poll():\n    return 1\n```\n\n"
                    f"Done with turn {i}.")  # fmt: skip
    t.write_under(home / ".claude" / "projects")


async def frames_after(pilot, action) -> list[tuple[int, int, float, float, str]]:
    """(lo, hi, scroll_y, max_scroll_y, the reader's text) at each screen update (each the
    terminal would be sent) from ``action`` until the app settles: the first frame, then
    what the window's growth after the paint showed."""
    app, reader = pilot.app, pilot.app.main.reader
    frames: list[tuple] = []
    display = app._display

    def recording(screen, update) -> None:
        display(screen, update)
        if update is not None and not app._batch_count:
            frames.append((reader.lo, reader.hi, reader.scroll_y, reader.max_scroll_y, visible_text(app)))

    app._display = recording
    try:
        await action()
        await wait_for(pilot, lambda: frames, what="the first frame")
        await settle(pilot)
    finally:
        app._display = display
    return frames


async def find_answer(pilot):
    """Open the session and find "answer" in it (once a turn, in its answer: markdown, no
    fold to open); returns the reader once it is at the first occurrence."""
    app = pilot.app
    reader = await open_from_sessions(pilot)
    await pilot.press("slash")
    await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "find-input", what="the find box")
    await pilot.press(*"answer", "enter")
    await wait_for(pilot, lambda: reader.match_index == 0, what="the first occurrence")
    return reader


def without_scrollbar(text: str) -> str:
    return "\n".join(line[:-2] for line in text.splitlines())  # (its thumb shrinks as the window grows)


@pytest.mark.parametrize("shape", ["tall", "tiny"])
@pytest.mark.parametrize("size", [(80, 24), (120, 35), (100, 70)])
async def test_home_and_end_paint_a_whole_screen_that_stays_as_the_window_grows(tmp_path: Path, shape, size):
    write_session(tmp_path, shape)
    app = make_app(tmp_path, now=NOW)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        reader = await open_from_sessions(pilot)
        reader.focus()
        last, first = ("Done with turn", "turn 0: why") if shape == "tall" else ("yes 79.", "ok 0?")
        for _ in range(2):
            frames = await frames_after(pilot, reader.action_bottom)
            lo, hi, y, max_y, shown = frames[0]
            assert hi == len(reader.blocks) and lo > 0
            assert y == max_y > 0  # at the end, and the mounted turns more than fill the view
            assert shown.rstrip().splitlines()[-1].strip().startswith(last if shape == "tiny" else "Done with turn 79")
            if shape == "tall":
                assert hi - lo < PAGE  # tall turns: fewer than a page before the first paint
            # the turns mounted above after the paint moved nothing in view, in no frame
            assert {without_scrollbar(frame[-1]) for frame in frames} == {without_scrollbar(shown)}

            frames = await frames_after(pilot, reader.action_top)
            lo, hi, y, max_y, shown = frames[0]
            assert lo == 0 and y == 0 < max_y
            assert first in shown
            if shape == "tall":
                assert hi - lo < PAGE
            assert {without_scrollbar(frame[-1]) for frame in frames} == {without_scrollbar(shown)}


@pytest.mark.parametrize("shape", ["tall", "tiny"])
async def test_the_row_estimate_never_exceeds_what_a_block_paints(tmp_path: Path, shape):
    """At a wide terminal (least wrapping) every mounted block paints at least ``min_rows``."""
    write_session(tmp_path, shape)
    app = make_app(tmp_path, now=NOW)
    async with app.run_test(size=(220, 60)) as pilot:
        await settle(pilot)
        reader = await open_from_sessions(pilot)
        reader.focus()
        checked = 0
        for action in (reader.action_bottom, reader.action_top):
            await action()
            await settle(pilot)
            for index in range(reader.lo, reader.hi):
                widget = reader.get_child_by_id(f"block-{index}")
                if isinstance(widget, TurnView):
                    painted = widget.outer_size.height + widget.styles.margin.top
                    assert min_rows(reader.blocks[index]) <= painted, (index, reader.blocks[index].prompt)
                    checked += 1
        assert checked >= 10


async def test_n_within_the_mounted_turns_shows_the_match_in_its_first_frame(tmp_path: Path):
    """A match whose step is mounted and laid out is scrolled to in the key's own frame (the
    scroll used to wait for a refresh: a frame that showed the mark move, then one that
    scrolled, ~30 ms later)."""
    write_session(tmp_path, "tall")
    app = make_app(tmp_path, now=NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        reader = await find_answer(pilot)
        await settle(pilot)
        for index in range(1, 6):
            assert reader.lo <= reader.matches[index].block < reader.hi  # (mounted: not a jump)
            frames = await frames_after(pilot, lambda: reader.next_hit(1))
            assert reader.match_index == index
            assert len({without_scrollbar(frame[-1]) for frame in frames}) == 1  # the first frame is the last
            assert f"Turn {index} answer" in frames[0][-1]


async def test_after_home_n_finds_from_the_top_and_after_end_N_from_the_bottom(tmp_path: Path):
    """As ``less`` after ``g``/``G``: Home and End leave the match n/N had reached, so the
    next n is the session's first match and the next N its last (n used to go on from the
    match before the jump, three turns down, or wherever it was)."""
    write_session(tmp_path, "tall")
    app = make_app(tmp_path, now=NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        reader = await find_answer(pilot)
        reader.focus()
        for _ in range(3):
            await pilot.press("n")
        await wait_for(pilot, lambda: reader.match_index == 3, what="the fourth occurrence")
        await pilot.press("home")
        await settle(pilot)
        assert reader.match_index is None and reader.current is None
        assert not reader.query(".-current")  # no turn is marked current any more
        await pilot.press("n")
        await wait_for(pilot, lambda: reader.match_index == 0, what="n after Home: the first match")
        assert "Turn 0 answer" in visible_text(app)
        await pilot.press("end")
        await settle(pilot)
        assert reader.match_index is None
        await pilot.press("N")
        last = len(reader.matches) - 1
        await wait_for(pilot, lambda: reader.match_index == last, what="N after End: the last match")
        assert f"Turn {TURNS - 1} answer" in visible_text(app)
