"""Pilot tests: the hit list groups hits per session and pages past the first page
(issue 14, point 7).

The corpus: one long session whose every turn mentions ``route_to_dlq`` (it would
flood a flat list) and 30 short sessions that mention it once each.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.fixtures.demo import DEFAULT_NOW
from tui import tasks
from tui.app import make_app
from tui.testing import settle, wait_for
from tui.widgets.hit_list import HitList

from .support import project_dir, transcript

SIZE = (120, 40)
LONG_TURNS = 60
SHORT_SESSIONS = 30
LONG_ID = "30003000-3000-4000-8000-300030003000"


def _corpus(home: Path) -> None:
    start = datetime(2026, 11, 1, tzinfo=UTC)
    t = transcript(LONG_ID, cwd="/home/t/work/queues", slug="long-winding-queue", start=start + timedelta(days=3))
    for n in range(LONG_TURNS):
        t.user(f"step {n}: why does route_to_dlq drop message {n}? route_to_dlq again")  # ranks first
        t.assistant(f"Turn {n}: route_to_dlq now retries batch {n} before giving up (ask the lighthousekeeper).")
    t.write(project_dir(home, "/home/t/work/queues"))
    for i in range(SHORT_SESSIONS):
        sid = f"40004000-4000-4000-8000-{i:012d}"
        s = transcript(sid, cwd=f"/home/t/work/svc{i}", slug=f"short-quiet-svc{i}", start=start + timedelta(hours=i + 1))
        s.user(f"service {i}: wire route_to_dlq into the consumer")
        s.assistant(f"Wired route_to_dlq for service {i}.")
        s.write(project_dir(home, f"/home/t/work/svc{i}"))


async def _search(pilot, text: str) -> None:
    await pilot.press("slash")
    pilot.app.main.query_one("#query").value = text  # as pasted ("_" is no key name)
    await wait_for(pilot, lambda: pilot.app.main.search_pane.shown_query == text, what=f"hits for {text!r}")


def _status(app) -> str:
    return str(app.main.query_one("#search-status").render())


async def _to_the_end(pilot, count: int) -> None:
    """Focus the hit list and hold ``end`` until ``count`` rows are loaded."""
    pane = pilot.app.main.search_pane
    pane.query_one(HitList).focus()

    for _ in range(20):
        await pilot.press("end")
        await pilot.pause()
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()
        if len(pane.hits) >= count:
            return
    raise AssertionError(f"only {len(pane.hits)} hits loaded, wanted {count}")


async def test_one_long_session_is_one_row_with_n_more(tmp_path):
    _corpus(tmp_path)
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, timeout=60)
        await _search(pilot, "route_to_dlq")
        pane = app.main.search_pane
        sessions = [h.session_id for h in pane.hits]
        assert len(sessions) == len(set(sessions)) == tasks.SEARCH_LIMIT  # one row per session
        assert LONG_ID in sessions
        index = sessions.index(LONG_ID)
        row = app.main.query_one(HitList).get_option_at_index(index).prompt.plain
        assert f"+{LONG_TURNS - 1} more" in row  # compact; the roomy layout (v) says "in this session (n/N)"
        short = app.main.query_one(HitList).get_option_at_index(1 if index == 0 else 0).prompt.plain
        assert "more in this session" not in short  # nothing more: nothing said
        assert "25+ sessions" in _status(app)
        # enter opens its best hit; n then walks the session's other matching turns
        pane.query_one(HitList).focus()
        pane.query_one(HitList).highlighted = index
        await pilot.press("enter")
        reader = app.main.reader
        await wait_for(pilot, lambda: reader.is_open and reader.current is not None and reader.hits, what="the reader")
        assert reader.current_block.session_id == LONG_ID and len(reader.hits) == LONG_TURNS
        first = reader.match_index
        assert first is not None and reader.matches
        await pilot.press("n")  # the next match (in this turn or a later one)
        assert reader.match_index == (first + 1) % len(reader.matches) and reader.current in reader.hits


async def test_g_switches_to_every_matching_turn_and_back(tmp_path):
    _corpus(tmp_path)
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, timeout=60)
        await _search(pilot, "route_to_dlq")
        pane = app.main.search_pane
        pane.query_one(HitList).focus()
        await pilot.press("g")
        await wait_for(pilot, lambda: not pane.grouped and pane.hits and pane.hits[0].more_in_session is None, what="flat hits")
        assert "25+ hits" in _status(app)
        await pilot.press("g")
        await wait_for(pilot, lambda: pane.grouped and pane.hits and pane.hits[0].more_in_session is not None, what="grouped hits")
        assert len({h.session_id for h in pane.hits}) == len(pane.hits)


async def test_reaching_the_end_of_the_list_loads_the_next_page(tmp_path):
    _corpus(tmp_path)
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, timeout=60)
        await _search(pilot, "route_to_dlq")
        pane = app.main.search_pane
        assert len(pane.hits) == tasks.SEARCH_LIMIT and "25+ sessions" in _status(app)
        await _to_the_end(pilot, SHORT_SESSIONS + 1)
        ids = [h.session_id for h in pane.hits]
        assert len(ids) == len(set(ids)) == SHORT_SESSIONS + 1  # every session once, none twice
        assert app.main.query_one(HitList).option_count == SHORT_SESSIONS + 1
        assert _status(app).startswith(f"{SHORT_SESSIONS + 1} sessions")  # the real count, no "+"
        # flat: every matching turn, page by page, to the real total
        await pilot.press("g")
        await wait_for(pilot, lambda: not pane.grouped and len(pane.hits) == tasks.SEARCH_LIMIT, what="flat hits")
        total = LONG_TURNS + SHORT_SESSIONS
        await _to_the_end(pilot, total)
        refs = [h.ref for h in pane.hits]
        assert len(refs) == len(set(refs)) == total
        assert _status(app).startswith(f"{total} hits")


async def test_scrolling_to_the_end_loads_the_next_page(tmp_path):
    _corpus(tmp_path)
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, timeout=60)
        await _search(pilot, "route_to_dlq")
        pane = app.main.search_pane
        hit_list = pane.query_one(HitList)
        hit_list.focus()
        await pilot.pause()
        hit_list.scroll_end(animate=False, immediate=True)  # as the mouse wheel does: the highlight stays put
        await wait_for(pilot, lambda: len(pane.hits) > tasks.SEARCH_LIMIT, what="the next page")
        assert hit_list.highlighted == 0


async def test_the_reader_marks_the_hits_of_a_half_typed_word(tmp_path):
    _corpus(tmp_path)
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, timeout=60)
        await _search(pilot, "lighthousekee")  # still being typed: a prefix, as in the list
        pane = app.main.search_pane
        index = [h.session_id for h in pane.hits].index(LONG_ID)
        assert pane.hits[index].more_in_session == LONG_TURNS - 1
        pane.query_one(HitList).focus()
        pane.query_one(HitList).highlighted = index
        await pilot.press("enter")
        reader = app.main.reader
        await wait_for(pilot, lambda: reader.is_open and reader.current is not None, what="the reader")
        await settle(pilot)
        assert len(reader.hits) == LONG_TURNS  # n/N walks what the row counted
        assert reader.current in reader.hits


async def test_n_more_counts_turns_as_the_reader_does_with_subagent_work(demo_home):
    # session #1 of the demo matches "bm25 index" in turn 1, in turn 0 and in the
    # subagent run during turn 0: that is two turns (n/N visits two), not three
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await _search(pilot, "bm25 index")
        pane = app.main.search_pane
        first = pane.hits[0]
        assert first.more_in_session == 1
        await pilot.press("enter")
        reader = app.main.reader
        await wait_for(pilot, lambda: reader.is_open and reader.current is not None, what="the reader")
        await settle(pilot)
        assert reader.current_block.session_id == first.session_id
        assert len(reader.hits) == first.more_in_session + 1
