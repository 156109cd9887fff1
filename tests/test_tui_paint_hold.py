"""A keystroke's echo waits for its hits, a moment at most (issue 35.1), through Textual's Pilot.

* Each screen update after a key shows that key's hits: the echo of the typed letter is
  not painted alone first (its paint ran before the search could start).
* A search slower than the hold still shows the typed letter: the echo is painted while
  the search runs, and the hits when they come.
* Clearing the query lets the held paint through at once.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from core.fixtures.demo import DEFAULT_NOW
from tui import tasks
from tui.app import make_app
from tui.testing import settle, wait_for

SIZE = (120, 36)


def record_paints(app: Any) -> list[tuple[str, str]]:
    """(the search box's text, the query whose hits the list shows) at each screen update."""
    paints: list[tuple[str, str]] = []
    display = app._display  # (Textual's one way to the terminal: called once an update)

    def recorded(screen: Any, update: Any) -> None:
        pane = app.main.search_pane
        paints.append((pane.query_text, pane.shown_query))
        display(screen, update)

    app._display = recorded
    return paints


async def test_each_update_after_a_key_shows_that_key_s_hits(demo_home) -> None:
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.main.search_pane._paint_hold.longest = 5.0  # (a busy machine's search must not outlast the hold here)
        paints = record_paints(app)
        typed = ""
        for key in "retry":
            typed += key
            start = len(paints)
            await pilot.press(key)
            await wait_for(pilot, lambda typed=typed: app.main.search_pane.shown_query == typed, 10, f"the hits for {typed!r}")
            await settle(pilot)
            after = paints[start:]
            assert after, f"nothing painted after {key!r}"
            assert after[0] == (typed, typed), f"{typed!r}: the first update showed {after[0]}"
        assert app.main.search_pane.hits


def searches_waiting_for(go_on: threading.Event) -> Callable[..., Any]:
    """The app's search, each call in its thread until ``go_on`` is set (10 s at most)."""
    search = tasks.search

    def waiting(*args: Any, **kwargs: Any) -> Any:
        go_on.wait(10)
        return search(*args, **kwargs)

    return waiting


async def test_a_slow_search_shows_the_typed_letter_before_its_hits(demo_home, monkeypatch) -> None:
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    go_on = threading.Event()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        paints = record_paints(app)
        monkeypatch.setattr(tasks, "search", searches_waiting_for(go_on))
        await pilot.press("r", "e", "t")
        # the hits wait on go_on; the echo must not
        await wait_for(pilot, lambda: ("ret", "") in paints, 5, "the typed letters painted while the search runs")
        assert app.main.search_pane._paint_hold.holding is False
        go_on.set()
        await wait_for(pilot, lambda: app.main.search_pane.shown_query == "ret", 10, "the hits")
        await settle(pilot)
        assert paints[-1] == ("ret", "ret")


async def test_clearing_the_query_lets_the_held_paint_through(demo_home, monkeypatch) -> None:
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    go_on = threading.Event()
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        pane = app.main.search_pane
        pane._paint_hold.longest = 60.0  # only the clearing can end this hold
        monkeypatch.setattr(tasks, "search", searches_waiting_for(go_on))
        await pilot.press("x")
        assert pane._paint_hold.holding
        paints = record_paints(app)
        await pilot.press("backspace")
        assert not pane._paint_hold.holding
        await wait_for(pilot, lambda: ("", "") in paints, 5, "the cleared box painted")
        go_on.set()
        await settle(pilot)
