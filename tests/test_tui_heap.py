"""Garbage collection kept off the keystroke path (tui/heap.py), in the real app."""

from __future__ import annotations

import gc
import time
from collections.abc import Iterator
from contextlib import contextmanager

from core.fixtures.demo import DEFAULT_NOW
from tui.app import make_app
from tui.heap import IDLE_SECONDS, OLD_THRESHOLD, IdleCollector
from tui.testing import settle, show_hits, wait_for
from tui.widgets.sessions_pane import session_ref

SIZE = (120, 40)


@contextmanager
def _reference_counting_only() -> Iterator[None]:
    """Nothing collected as a cycle inside: what is still alive at the end was not freed as dropped."""
    gc.collect()
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def test_collects_only_when_idle_and_something_aged() -> None:
    before = gc.get_threshold()
    collector = IdleCollector()
    assert gc.get_threshold() == before  # nothing changes until the app mounts
    collector.start()
    try:
        assert gc.get_threshold()[2] == OLD_THRESHOLD
        assert gc.get_freeze_count() > 0  # the start-up heap
        gc.collect(1)  # something reached the old generation
        assert gc.get_count()[2] > 0
        collector.touch()
        assert not collector.tick()  # a key was just pressed
        collector.last_input -= 60
        assert not collector.tick(ready=False)  # a load is running
        assert collector.tick()
        assert gc.get_count()[2] == 0
        assert not collector.tick()  # nothing new since
        assert collector.collections == 1
    finally:
        collector.close()
    assert gc.get_threshold() == before
    assert gc.get_freeze_count() == 0


async def test_the_app_freezes_start_up_and_collects_when_the_person_pauses(demo_home) -> None:
    home, _corpus = demo_home
    before = gc.get_threshold()
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        heap = app.heap
        assert heap is not None and gc.get_freeze_count() > 0
        heap.last_input -= 60
        await pilot.press("b")  # typing counts as use: no collection right after
        # (the app's own idle timer may have collected while the key was on its way,
        # when last_input was still a minute old: count from here)
        collections = heap.collections
        assert not heap.tick()
        heap.last_input -= 60  # the person paused
        gc.collect(1)
        app._collect_when_idle()  # no await since the baseline: the timer cannot run in between
        assert heap.collections == collections + 1
    assert gc.get_threshold() == before  # put back on exit
    assert gc.get_freeze_count() == 0


async def test_opening_a_conversation_counts_as_use(demo_home) -> None:
    """An open without a key (a link, a click elsewhere) still holds the idle collection
    off: one landing between the load and the paint held an open back by ~0.2 s."""
    home, _corpus = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        heap = app.heap
        heap.last_input -= 60  # the person walked away
        app.main.open_ref(session_ref(app.archive.list_sessions()[0]))  # (no key, no click)
        await wait_for(pilot, lambda: app.main.reader.is_open, what="the session")
        gc.collect(1)
        assert not heap.tick()  # just used


async def test_a_live_update_of_the_open_conversation_is_not_use(demo_home) -> None:
    """Following a session written every second must leave the idle collection its
    moments: when updates counted as use, memory grew with every update."""
    from .test_tui import _append, following_the_live_session

    async with following_the_live_session(demo_home) as (app, pilot, reader, path, live):
        turns = sum(b.kind == "turn" for b in reader.blocks)
        app.heap.last_input -= 60  # the person reads, hands off the keys
        prompt, answer = "f2000000-0000-4000-8000-000000000001", "f2000000-0000-4000-8000-000000000002"
        _append(path, live, "now wire the foghorn", "user", prompt, None, "2026-11-20T11:59:30.000Z")
        _append(path, live, "The foghorn is wired.", "assistant", answer, prompt, "2026-11-20T11:59:40.000Z")
        await wait_for(pilot, lambda: sum(b.kind == "turn" for b in reader.blocks) == turns + 1, what="the new turn")
        assert time.monotonic() - app.heap.last_input > IDLE_SECONDS  # (the update did not count as use)


async def test_what_a_finished_load_or_search_built_is_freed_without_a_full_collection(demo_home) -> None:
    """A finished worker lives on in a reference cycle until a full collection, which the app
    makes rare (above). When it kept what its work returned, every conversation opened and every
    search typed stayed in memory until then: ~4 MB per open of a 2,000-turn session, ~44 MB over
    the app bench's ten opens, and the malloc arenas they grew stayed after the collection."""
    from tui.messages import ConversationLoaded, SearchFinished

    home, _corpus = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        refs = [session_ref(info) for info in app.archive.list_sessions()[:3]]
        assert len(refs) == 3
        with _reference_counting_only():
            for ref in refs:
                app.main.open_ref(ref)
                await wait_for(pilot, lambda ref=ref: app.main.reader.is_open and app.main.reader.ref == ref, what=ref)
                await settle(pilot)
            for query in ("retry", "unit test", "checkout sidebar"):
                await show_hits(pilot, query)
            alive = [o for o in gc.get_objects() if isinstance(o, ConversationLoaded | SearchFinished)]
        conversations = [o.ref for o in alive if isinstance(o, ConversationLoaded)]
        searches = [o.query for o in alive if isinstance(o, SearchFinished)]
        assert refs[0] not in conversations and refs[1] not in conversations
        assert "retry" not in searches and "unit test" not in searches


def test_a_strip_cut_whole_is_itself_and_not_kept_in_itself(monkeypatch) -> None:
    """Textual kept a strip cut at its own width in its own cache: a cycle only a full
    collection frees (tui/strip_cycles.py)."""
    import sys

    from rich.segment import Segment
    from textual.strip import Strip

    from tui.strip_cycles import keep_strips_out_of_cycles

    # (put back after: the app test below must see the app apply it, not this test)
    monkeypatch.setattr(Strip, "divide", Strip.divide)
    monkeypatch.setattr(Strip, "crop_extend", Strip.crop_extend)
    keep_strips_out_of_cycles()
    strip = Strip([Segment("hello "), Segment("world")], 11)
    refs = sys.getrefcount(strip)
    assert strip.divide([11]) == [strip] and strip.divide([11, 20]) == [strip]
    assert strip.crop_extend(0, 11, None) is strip
    assert sys.getrefcount(strip) == refs  # nothing of it points back at it
    # and every other cut as Textual makes it
    assert [s.text for s in strip.divide([5, 11])] == ["hello", " world"]
    assert strip.crop_extend(0, 14, None).text == "hello world   "
    assert strip.crop_extend(6, 11, None).text == "world"


async def test_typing_leaves_no_strips_for_a_full_collection(demo_home) -> None:
    """Each key repaints the hit list; its strips must be freed when the next paint drops
    them, not pile up for the rare full collection (the app bench's 132 keys left ~22 MB)."""
    from textual.strip import Strip

    home, _corpus = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        with _reference_counting_only():
            for query in ("retry", "unit test", "checkout sidebar", "bm25 index"):
                await show_hits(pilot, query)
            gc.set_debug(gc.DEBUG_SAVEALL)  # (what a collection finds is kept in gc.garbage, to count)
            try:
                gc.collect()
                strips = sum(isinstance(o, Strip) for o in gc.garbage)
            finally:
                gc.set_debug(0)
                gc.garbage.clear()
        assert strips < 20, f"{strips} strips left in reference cycles"


async def test_every_catalog_connection_of_the_app_keeps_a_small_page_cache(demo_home) -> None:
    """Each thread that reads the catalog has a connection, each with its own page cache:
    at SQLite's default the app held 17 MB of them after its bench (core/archive/catalog.py)."""
    from core.archive.catalog import PAGE_CACHE_KIB

    assert PAGE_CACHE_KIB < 2000  # (SQLite's default)
    home, _corpus = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await show_hits(pilot, "retry")
        app.main.open_ref(session_ref(app.archive.list_sessions()[0]))
        await wait_for(pilot, lambda: app.main.reader.is_open, what="the session")
        await settle(pilot)
        connections = list(app.archive.catalog._conns)
        assert len(connections) >= 2  # (the sync's, the workers')
        assert {conn.execute("PRAGMA cache_size").fetchone()[0] for conn in connections} == {-PAGE_CACHE_KIB}
