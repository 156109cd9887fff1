"""The reader's mounted window stays bounded however far one reads, and what it lets go
of is collected after a paint, not left to pile up (tui/widgets/reader_window.py, tui/heap.py).

Reading down a long session used to mount every turn passed: paging through 632 turns
of the 2,000-turn bench session held 473 MB, and each full garbage collection walked
1.2 million objects. Each check reads what the screen painted.
"""

from __future__ import annotations

import gc
import re
from contextlib import asynccontextmanager
from pathlib import Path

import pytest

from tui import heap
from tui.app import make_app
from tui.heap import DISCARDED_DUE, IdleCollector
from tui.testing import settle, wait_for
from tui.widgets.window import MOUNTED_MAX, PAGE

from .test_tui_reader import NOW, open_from_sessions, visible_text, write_bay_session

SIZE = (120, 35)
TURNS = 120
PAGES = 45  # PageDowns: far past MOUNTED_MAX blocks (each turn is about half a screen)


def _answer(i: int) -> str:
    return f"reply {i} begins\n\n" + "\n".join(f"- point {j} of reply {i}" for j in range(12))


@pytest.fixture
def home(tmp_path: Path) -> Path:
    write_bay_session(tmp_path, 31, "long-steady-bay", TURNS, _answer)
    return tmp_path


def _shown_replies(app) -> list[int]:
    """The reply numbers painted in the reader's view, top to bottom."""
    return [int(n) for n in re.findall(r"of reply (\d+)", visible_text(app))]


@asynccontextmanager
async def reading(home: Path):
    """The app with the long session open in the reader, which has the focus."""
    app = make_app(home, now=NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        reader = await open_from_sessions(pilot)
        reader.focus()
        yield app, pilot, reader


def _mounted_blocks(reader) -> int:
    return sum(1 for child in reader.children if (child.id or "").startswith("block-"))


async def test_reading_down_a_long_session_keeps_the_window_bounded_and_the_view_steady(home):
    async with reading(home) as (app, pilot, reader):
        last_bottom = max(_shown_replies(app))
        for _ in range(PAGES):
            await pilot.press("pagedown")
            await settle(pilot)
            shown = _shown_replies(app)
            # the view moved on by a page from where it was: nothing skipped, nothing jumped
            # back (letting go of the turns above must not move what is on screen)
            assert shown and last_bottom <= shown[0] + 1 and shown[0] <= last_bottom + 1, (last_bottom, shown)
            last_bottom = max(shown)
            assert reader.hi - reader.lo == _mounted_blocks(reader) <= MOUNTED_MAX
        assert reader.lo > 0  # turns far above were let go of
        assert last_bottom > MOUNTED_MAX  # (read well past one bounded window)


async def test_reading_back_up_mounts_the_turns_again_and_lets_go_below(home):
    async with reading(home) as (app, pilot, reader):
        for _ in range(PAGES):
            await pilot.press("pagedown")
        await settle(pilot)
        assert reader.lo > 0
        last_top = min(_shown_replies(app))
        for _ in range(3 * PAGES):
            await pilot.press("pageup")
            await settle(pilot)
            shown = _shown_replies(app)
            assert shown and shown[0] <= last_top and max(shown) >= last_top - 1, (last_top, shown)
            last_top = shown[0]
            assert reader.hi - reader.lo == _mounted_blocks(reader) <= MOUNTED_MAX
            if reader.lo == 0 and reader.scroll_y == 0:
                break
        assert "reply 0 begins" in visible_text(app)
        assert reader.hi < len(reader.blocks)  # turns far below were let go of


def test_letting_go_of_widgets_makes_a_collection_due() -> None:
    collector = IdleCollector()
    try:
        assert not collector.discarded(DISCARDED_DUE - 1)
        assert not collector.collect_due()  # not yet: freed pages are handed back all the same
        assert collector.collections == 0 and collector.trims == 1
        assert collector.discarded(1)
        assert collector.collect_due()
        assert collector.collections == 1 and collector.discarded_widgets == 0
        assert not collector.collect_due()  # (a second call after the same paint)
    finally:
        collector.close()


async def test_jumping_without_a_pause_collects_what_the_windows_let_go_of(home, monkeypatch):
    """Home / End replace the window each time; with no idle moment at all, the widgets
    let go of are still collected (after a paint), so the old generation does not pile up."""
    monkeypatch.setattr(heap, "IDLE_SECONDS", 10_000.0)  # the idle collection never runs here
    async with reading(home) as (app, pilot, reader):
        collections = app.heap.collections
        jumps = 0
        while app.heap.collections == collections and jumps < 60:
            await pilot.press("end" if jumps % 2 == 0 else "home")
            await settle(pilot)
            jumps += 1
        assert app.heap.collections > collections, "no collection after 60 window jumps"
        # roughly one collection per DISCARDED_DUE widgets: each jump lets go of a window of
        # at most MOUNTED_MAX turns (a turn is a few widgets), so not on the first jumps
        assert jumps > 1
        assert gc.get_count()[2] < 5  # the old generation was just collected
        assert _mounted_blocks(reader) <= max(PAGE, MOUNTED_MAX)


async def test_each_paint_of_the_reader_hands_freed_memory_back(home, monkeypatch):
    """Opening a conversation and reading on free what their loads dropped; after each paint
    that does not collect, the freed pages go back to the system (tui/heap.py)."""
    monkeypatch.setattr(heap, "IDLE_SECONDS", 10_000.0)  # no idle collection (which trims too)
    trimmed: list[int] = []
    monkeypatch.setattr(heap, "release_freed_memory", lambda: trimmed.append(1))  # (counted here instead)
    async with reading(home) as (app, pilot, reader):
        assert app.heap.trims >= 1 and len(trimmed) >= app.heap.trims  # the open's paint
        opened = app.heap.trims
        for _ in range(3):
            await pilot.press("pagedown")
            await settle(pilot)
        assert app.heap.trims > opened  # pages mounted on the way down


async def test_following_a_growing_session_keeps_the_window_bounded(demo_home):
    """``f`` on the live session while it is written turn after turn: the reader shows each
    new turn at the bottom and lets go of the oldest, as when reading on."""
    from .test_tui import _append, following_the_live_session

    async with following_the_live_session(demo_home) as (app, pilot, reader, path, live):
        turns = sum(b.kind == "turn" for b in reader.blocks)
        parent = None
        for batch in range(8):
            for i in range(6):
                n = batch * 6 + i
                prompt, answer = f"f1000000-0000-4000-8000-{2 * n:012d}", f"f1000000-0000-4000-8000-{2 * n + 1:012d}"
                ts = f"2026-11-20T12:{n // 60:02d}:{n % 60:02d}.000Z"
                _append(path, live, f"now wire exporter {n}\n\n" + "\n".join(f"- detail {j}" for j in range(10)),
                        "user", prompt, parent, ts)
                _append(path, live, f"Exporter {n} is wired.", "assistant", answer, prompt, ts)
                parent = answer
            turns += 6
            await wait_for(pilot, lambda turns=turns: sum(b.kind == "turn" for b in reader.blocks) == turns,
                           what=f"batch {batch}")
            await settle(pilot)
            assert reader.hi - reader.lo == _mounted_blocks(reader) <= MOUNTED_MAX
            assert f"Exporter {batch * 6 + 5} is wired." in visible_text(app)  # the newest, at the bottom
        assert reader.lo > 0
