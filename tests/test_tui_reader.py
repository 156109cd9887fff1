"""The reader lands on the match and highlights it; n/N through matches; find; header; zoom (issue 22).

Every check reads what the screen painted (the compositor's strips inside the
reader's region), so "on screen" means on screen at that terminal size.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from core.fixtures.claude import ClaudeTranscript
from tui.app import make_app
from tui.testing import settle, wait_for

NOW = datetime(2026, 11, 20, 12, 0, tzinfo=UTC)
SLUG = "amber-quiet-harbor"
WORD = "guard_fail"
# where the match sits: line 240 of a 300-line tool output in the second turn, far below the turn's top
DEEP_LINE = 240


def write_home(home: Path) -> None:
    t = ClaudeTranscript(
        "5a1e2b3c-0000-4000-8000-000000000022", cwd="/home/me/work/harbor/deep/inside/a/long/path",
        slug=SLUG, git_branch="feature/open-at-the-match", start=datetime(2026, 11, 19, 9, 0, tzinfo=UTC),
    )
    t.user("set up the harbor supervisor")
    t.assistant("Set up.\n\n" + "\n".join(f"- step {i}: configured the harbor" for i in range(40)))
    t.user("why does the supervisor crash in CI?")
    t.assistant("Let me look at the supervisor log.")
    log = [f"{i:04d} supervisor tick ok" for i in range(300)]
    log[DEEP_LINE] = f"{DEEP_LINE:04d} subagent_live.ex:25:{WORD} raised in the restart loop"
    t.tool("Bash", {"command": "cat supervisor.log", "description": "read the log"}, "\n".join(log))
    t.assistant("Found it.\n\n" + "\n".join(f"Line {i} of the analysis." for i in range(60))
                + f"\n\nThe `{WORD}` comes from the restart loop; a {WORD} again later.")
    t.user("and the third turn mentions nothing")
    t.thinking("Nothing to do; the zeppelin gauge is fine.")  # a match inside a folded thinking step
    # nine short words starting "restar": the index completes a typed "restar" to the shortest
    # eight of them, so "restart" is highlighted only if the reader treats "restar" as a prefix
    t.assistant("Nothing here. " + " ".join(f"restar{c}" for c in "abcdefghi"))
    t.write_under(home / ".claude" / "projects")


@pytest.fixture
def home(tmp_path: Path) -> Path:
    write_home(tmp_path)
    return tmp_path


def reader_lines(app) -> list[tuple[int, object]]:
    """(screen row, strip) of every row of the reader's visible region, as painted."""
    strips = app.screen._compositor.render_strips()
    region = app.main.reader.content_region
    return [(y, strips[y].crop(region.x, region.right)) for y in range(region.y, region.bottom)]


def visible_text(app) -> str:
    return "\n".join(strip.text for _, strip in reader_lines(app))


def flat_visible(app) -> str:
    """The reader's visible text on one line (wrapping and the turn gutter removed)."""
    return " ".join(visible_text(app).replace("█", " ").split())


SNIPPET_LINE = f"The {WORD} comes from the restart loop"  # the answer's line the hit list's snippet shows


def footer(app) -> str:
    strips = app.screen._compositor.render_strips()
    return strips[-1].text


def status(app) -> str:
    return str(app.main.query_one("#reader-status").render())


async def search_and_open(pilot, text: str):
    app = pilot.app
    await settle(pilot)
    await pilot.press("slash")
    app.main.query_one("#query").value = ""
    await pilot.press(*text)
    await wait_for(pilot, lambda: app.main.search_pane.shown_query == text and app.main.search_pane.hits, what="hits")
    await pilot.press("enter")
    reader = app.main.reader
    await wait_for(pilot, lambda: reader.is_open and reader.match_index is not None, what="the reader at the match")
    await settle(pilot)
    return reader


@pytest.mark.parametrize("size", [(80, 24), (120, 35)])
async def test_enter_on_a_hit_shows_the_matching_line(home, size):
    app = make_app(home, now=NOW)
    async with app.run_test(size=size) as pilot:
        await search_and_open(pilot, WORD)
        # what the hit list showed (its snippet: the answer's line), not the turn's top
        assert app.main.search_pane.hits[0].snippet.find(f"`{WORD}` comes from") > 0
        assert SNIPPET_LINE in flat_visible(app), visible_text(app)
        assert "set up the harbor" not in flat_visible(app) and "Line 0 of the analysis" not in flat_visible(app)


async def open_from_sessions(pilot):
    """Open the first session of the Sessions pane (no query) and wait for the reader to settle."""
    await pilot.press("tab", "enter")
    reader = pilot.app.main.reader
    await wait_for(pilot, lambda: reader.is_open and reader.blocks, what="the session")
    await settle(pilot)
    return reader


def write_bay_session(home: Path, number: int, slug: str, turns: int, answer) -> None:
    """A session of ``turns`` short exchanges about the bay; ``answer(i)`` is turn i's reply."""
    t = ClaudeTranscript(f"5a1e2b3c-0000-4000-8000-0000000000{number:02d}", cwd="/home/me/work/bay", slug=slug,
                         start=datetime(2026, 11, 19, 9, 0, tzinfo=UTC))  # fmt: skip
    for i in range(turns):
        t.user(f"question {i} about the bay")
        t.assistant(answer(i))
    t.write_under(home / ".claude" / "projects")


async def test_the_match_is_highlighted_in_a_style_unlike_the_text_around_it(home):
    app = make_app(home, now=NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        await search_and_open(pilot, WORD)
        row = next(strip for _, strip in reader_lines(app) if f"{WORD} comes" in strip.text)
        segments = [s for s in row if s.text.strip()]
        marked = [s for s in segments if WORD in s.text]
        plain = [s for s in segments if "comes from" in s.text]
        assert marked and plain
        assert marked[0].text.strip().endswith(WORD)  # the match is a segment of its own
        assert marked[0].style != plain[0].style
        assert marked[0].style.bgcolor != plain[0].style.bgcolor


async def test_the_word_being_typed_is_highlighted_as_a_prefix(home):
    app = make_app(home, now=NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        reader = await search_and_open(pilot, "supervisor restar")  # "restar" still being typed
        assert "restart" not in app.main.search_pane.hits[0].match_terms  # (not among the completions)
        assert reader.marks.spans("a restarted restart loop") == [(2, 11), (12, 19)]
        assert reader.marks.spans("the restaurant") == []  # (the stem "restaur" does not start with it)


async def test_n_and_N_step_through_matches_with_a_count(home):
    app = make_app(home, now=NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        reader = await search_and_open(pilot, WORD)
        total = len(reader.matches)
        assert total == 3  # the log line deep in a tool output, then twice in the answer after it
        assert reader.match_index == 1 and f"2/{total}" in status(app)  # the snippet's occurrence
        await pilot.press("n")
        await wait_for(pilot, lambda: reader.match_index == 2, what="the next match")
        await settle(pilot)
        assert f"3/{total}" in status(app) and f"a {WORD} again later" in flat_visible(app)
        await pilot.press("N", "N")  # back past the answer to line 240 of the folded 300-line output
        await wait_for(pilot, lambda: reader.match_index == 0, what="the first match")
        await settle(pilot)
        assert f"1/{total}" in status(app)
        assert f"{DEEP_LINE:04d}" in visible_text(app) and "subagent_live.ex:25:guard" in flat_visible(app)


async def test_find_in_the_session_moves_to_each_occurrence(home):
    app = make_app(home, now=NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        reader = await open_from_sessions(pilot)  # the session from the Sessions pane: no query
        assert reader.matches == [] and "Next hit" not in footer(app)  # opened from Sessions, no query
        await pilot.press("slash")
        await wait_for(pilot, lambda: app.focused is not None and app.focused.id == "find-input", what="the find box")
        await pilot.press(*"tick ok")
        await wait_for(pilot, lambda: len(reader.matches) == 299, what="the find's matches")
        await pilot.press("enter")
        await wait_for(pilot, lambda: reader.match_index == 0, what="the first occurrence")
        await settle(pilot)
        assert "0000 supervisor tick ok" in visible_text(app)
        await pilot.press("n")
        await wait_for(pilot, lambda: reader.match_index == 1, what="the next occurrence")
        await settle(pilot)
        assert "0001 supervisor tick ok" in visible_text(app) and "2/299" in status(app)
        await pilot.press("N", "N")
        await wait_for(pilot, lambda: reader.match_index == 298, what="wrap to the last occurrence")
        await settle(pilot)
        assert "0299 supervisor tick ok" in visible_text(app)
        assert "299/299" in status(app)
        await pilot.press("escape")  # in the reader (enter handed it the keys): the find closes, bar and all
        await settle(pilot)
        assert reader.marks.find == "" and reader.matches == []
        assert not app.main.query_one("#find-bar").display and "find:" not in visible_text(app)
        assert "find:" not in "".join(s.text for s in app.screen._compositor.render_strips())


async def test_header_at_80x24_keeps_the_position_and_turn_count(home):
    app = make_app(home, now=NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        reader = await search_and_open(pilot, WORD)
        row = reader.parent.query_one("#reader-status").region
        strips = app.screen._compositor.render_strips()
        painted = strips[row.y].crop(row.x, row.right).text
        assert f"{reader.match_index + 1}/{len(reader.matches)}" in painted and "3 turns" in painted, painted
        assert SLUG in painted
        assert "·  " not in painted.rstrip() and not painted.rstrip().endswith("·")


async def test_session_header_keeps_branch_on_its_line_and_shortens_the_path(home):
    app = make_app(home, now=NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await open_from_sessions(pilot)
        lines = [line.rstrip() for line in visible_text(app).splitlines()]
        times = next(line for line in lines if "→" in line)
        # 120×35: the reader is ~68 wide, so the branch goes whole to the directory line, cut from the left
        assert "3 turns · 5a1e2b3c" in times and "⎇" not in times
        assert any(line.strip().startswith("…") and line.endswith("/long/path · ⎇ feature/open-at-the-match")
                   for line in lines), lines
        assert not any(line.endswith("·") for line in lines)
        assert sum("set up the harbor supervisor" in line for line in lines) == 1  # not repeated by the header
        await pilot.press("z")  # the whole width: the branch fits on the times line
        await settle(pilot)
        times = next(line for line in visible_text(app).splitlines() if "→" in line)
        assert "3 turns · 5a1e2b3c · ⎇ feature/open-at-the-match" in times


async def test_z_maximises_the_reader_and_restores_it(home):
    app = make_app(home, now=NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        reader = await search_and_open(pilot, WORD)
        narrow = reader.size.width
        await pilot.press("z")
        await settle(pilot)
        assert not app.main.query_one("#left").display
        assert reader.size.width > narrow + 20
        assert SNIPPET_LINE in flat_visible(app)
        await pilot.press("z")
        await settle(pilot)
        assert app.main.query_one("#left").display and reader.size.width == narrow


async def test_a_match_in_a_folded_step_of_a_freshly_mounted_turn_opens_it(home):
    """The fold is unfolded before it was even composed (a crash once: no FoldHead yet).

    Opened as ``open_ref`` is called for a hit in a turn (the bench does this too): the
    turn's first match is in its folded thinking, mounted a moment before.
    """
    app = make_app(home, now=NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        reader = app.main.reader
        session = app.main.sessions_pane.sessions[0]
        app.main.open_ref(f"{SLUG}#1", query="zeppelin gauge", focus_turn=(session.session_id, 2), focus_reader=True)
        await wait_for(pilot, lambda: reader.is_open and reader.match_index is not None, what="the reader")
        await settle(pilot)
        text = visible_text(app)
        assert "the zeppelin" in text and "gauge is fine" in text  # (wrapped at 80×24)
        assert "▾ thinking" in text  # the thinking fold shows as open  # the thinking fold shows as open


async def test_the_current_turn_paints_its_background_and_the_one_left_stops(tmp_path):
    """``]`` moves the current turn: every row of it (its answer too, not only the turn's own
    box) paints in the current turn's background, and the turn it left paints as the others.
    (The reader restyles the turn alone on a move, not its subtree: this catches a child
    left painted in the old background.)"""
    write_bay_session(tmp_path, 23, "brisk-amber-bay", 4, lambda i: f"reply{i + 1} about the bay")
    app = make_app(tmp_path, now=NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        reader = await open_from_sessions(pilot)
        reader.focus()

        def background(word: str):
            rows = [strip for _, strip in reader_lines(app) if word in strip.text]
            assert rows, visible_text(app)
            return next(s for s in rows[0] if word in s.text).style.bgcolor

        for _ in range(3):
            before = reader.current
            await pilot.press("right_square_bracket")
            await wait_for(pilot, lambda before=before: reader.current != before, what="the next turn")
            await settle(pilot)
            shown = reader.current_block.turn + 1  # (turns count from 0; the replies from 1)
            current = background(f"reply{shown}")
            others = {background(f"reply{i}") for i in range(1, 5) if i != shown}
            assert len(others) == 1 and current not in others, (shown, current, others)


async def test_paging_down_finds_two_screens_already_mounted_below(tmp_path):
    """PageDown through a long session: once the reader settles, at least two screens
    below the view are mounted (or the session's end is), so the next pages paint
    without waiting for turns to mount (the window grows after a paint, ahead of need)."""
    write_bay_session(tmp_path, 24, "long-amber-bay", 60, lambda i: f"reply {i}\n\n- one\n- two\n- three")
    app = make_app(tmp_path, now=NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        reader = await open_from_sessions(pilot)
        reader.focus()
        assert reader.hi < len(reader.blocks)  # (a window, not the whole session)
        for _ in range(12):
            await pilot.press("pagedown")
            await settle(pilot)
            below = reader.max_scroll_y - reader.scroll_y
            assert reader.hi == len(reader.blocks) or below > 2 * reader.size.height, (reader.scroll_y, below)


async def test_a_grep_call_shows_its_pattern_in_the_reader(tmp_path: Path):
    """Issue 23: a Grep line shows what was searched for (``def parse_.*``), not its path (``.``),
    in the reader as in exports and read_turn."""
    from .test_export_safety import write_home

    write_home(tmp_path)
    app = make_app(tmp_path, now=NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await open_from_sessions(pilot)
        await pilot.press("end")
        await settle(pilot)
        shown = flat_visible(app)
        assert shown.count("Grep /def parse_.*/ in .") == 2, shown  # the pattern, then where (one call a session)
