"""Helpers for driving the app headless: tests, the screenshot script, the benchmark.

They wait on the app's own state (archive open, first sync done, watcher running,
no refresh pending, workers idle) rather than sleeping for a guessed time.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from textual.command import CommandList
from textual.pilot import Pilot


async def wait_for(pilot: Pilot, predicate: Callable[[], Any], timeout: float = 10.0, what: str = "") -> None:
    """Pause until ``predicate()`` is true (workers get to finish in between)."""
    app = pilot.app
    deadline = time.monotonic() + timeout
    while True:
        await pilot.pause()
        if predicate():
            return
        if time.monotonic() > deadline:
            raise TimeoutError(f"timed out waiting for {what or predicate}")
        await app.workers.wait_for_complete()
        await pilot.pause(0.02)


async def show_hits(pilot: Pilot, query: str) -> None:
    """``query`` put in the search box (as pasted, not typed key by key) and its hits shown, settled."""
    app: Any = pilot.app
    app.main.query_one("#query").value = query
    await wait_for(pilot, lambda: app.main.search_pane.shown_query == query, what=f"hits for {query!r}")
    await settle(pilot)


def palette_offers(app: Any, title: str) -> bool:
    """The command palette is open with ``title`` as its highlighted command (what Enter runs)."""
    found = app.screen.query(CommandList)
    if not found:
        return False
    commands = found.first()
    index = commands.highlighted
    return index is not None and str(commands.get_option_at_index(index).prompt).startswith(title)


def is_idle(app: Any) -> bool:
    """Nothing pending: open, synced, watching, no refresh queued, no worker running."""
    return (
        app.archive is not None
        and not app.syncing
        and app.watching
        and not app._refresh_pending
        and not any(w.is_running for w in app.workers)
    )


async def settle(pilot: Pilot, timeout: float = 15.0) -> None:
    """Wait until the app has opened, synced and finished what that triggered."""
    await wait_for(pilot, lambda: is_idle(pilot.app), timeout, "the app to settle")
    await pilot.pause()
    await wait_for(pilot, lambda: is_idle(pilot.app), timeout, "the app to settle")
    await pilot.pause()


class ClipboardSpy:
    """Stands in for ``pyperclip.copy``; ``fail=True`` makes it raise like a headless box."""

    def __init__(self, fail: bool = False) -> None:
        self.fail = fail
        self.copied: list[str] = []

    def __call__(self, text: str) -> None:
        import pyperclip

        if self.fail:
            raise pyperclip.PyperclipException("Pyperclip could not find a copy/paste mechanism for your system")
        self.copied.append(text)


# --- scenes: the screens the snapshot tests pin and the README shows -----------------
# Each takes a Pilot on an app built by make_app(home, now=DEFAULT_NOW) over the demo
# corpus and leaves the screen in the state to capture.


def _quiet(app: Any) -> None:
    """No blinking cursor (a screenshot must not depend on when it was taken)."""
    from textual.widgets import Input

    for widget in app.screen.query(Input):
        widget.cursor_blink = False


async def scene_sessions(pilot: Pilot) -> None:
    """Start-up: the session list with the chain grouped, focus on it."""
    await settle(pilot)
    await pilot.press("tab")
    await settle(pilot)
    _quiet(pilot.app)


async def scene_search(pilot: Pilot, query: str = "bm25 index") -> None:
    """Hits for a query across several sessions, the first one open in the reader."""
    await settle(pilot)
    app: Any = pilot.app  # (the relay-search app: textual types it as App[Any])
    app.main.action_focus_search()
    await pilot.press(*query)
    await wait_for(pilot, lambda: app.main.search_pane.shown_query == query, what="hits")
    await pilot.press("enter")
    reader = app.main.reader
    await wait_for(pilot, lambda: reader.is_open and reader.current is not None, what="the hit to open")
    app.main.action_focus_search()
    await settle(pilot)
    _quiet(pilot.app)


async def scene_hit_list(pilot: Pilot, query: str = "unit test") -> None:
    """A screenful of two-line hits, every matching turn (``g``), Sessions folded below."""
    await settle(pilot)
    app: Any = pilot.app  # (the relay-search app: textual types it as App[Any])
    app.main.action_focus_search()
    await pilot.press(*query)
    await wait_for(pilot, lambda: app.main.search_pane.shown_query == query, what="hits")
    await pilot.press("escape", "g")
    await settle(pilot)
    await pilot.press("down", "down")
    await settle(pilot)
    _quiet(pilot.app)


async def scene_reader_chain(pilot: Pilot) -> None:
    """The whole chain open, scrolled to session 3's compaction separator."""
    await settle(pilot)
    await pilot.press("tab", "enter")
    app: Any = pilot.app  # (the relay-search app: textual types it as App[Any])
    reader = app.main.reader
    await wait_for(pilot, lambda: reader.is_open and len(reader.sessions) > 1, what="the chain to open")
    compaction = next(i for i, b in enumerate(reader.blocks) if b.kind == "compaction")
    turn = max(i for i, b in enumerate(reader.blocks[:compaction]) if b.kind == "turn")
    await reader.go_to(turn)
    await pilot.press("e")  # unfold the tool calls of that turn
    await settle(pilot)
    header = max(i for i, b in enumerate(reader.blocks[:turn]) if b.kind == "session")
    reader.scroll_to_widget(reader.query_one(f"#block-{header}"), animate=False, top=True)
    await pilot.pause()
    _quiet(pilot.app)


async def scene_reader_match(pilot: Pilot, query: str = "exponential backoff") -> None:
    """A hit opened at its match: the reader scrolled to the matching line, the words highlighted."""
    await settle(pilot)
    app: Any = pilot.app  # (the relay-search app: textual types it as App[Any])
    app.main.action_focus_search()
    await pilot.press(*[("space" if c == " " else c) for c in query])
    await wait_for(pilot, lambda: app.main.search_pane.shown_query == query, what="hits")
    await pilot.press("enter")
    reader = app.main.reader
    await wait_for(pilot, lambda: reader.is_open and reader.match_index is not None, what="the match to open")
    await pilot.press("N", "N")  # two matches up: a line inside a turn, not its top
    await settle(pilot)
    _quiet(pilot.app)


async def scene_help(pilot: Pilot) -> None:
    await settle(pilot)
    await pilot.press("tab", "question_mark")
    await pilot.pause()
    _quiet(pilot.app)


async def scene_usage(pilot: Pilot) -> None:
    """The usage screen, by model: tokens and the estimated cost of the demo corpus."""
    from .screens.usage import UsageScreen

    await settle(pilot)
    await pilot.press("tab", "u")
    app: Any = pilot.app  # (the relay-search app; its screen is the usage screen below)
    await wait_for(pilot, lambda: isinstance(app.screen, UsageScreen) and app.screen.report is not None, what="usage")
    await pilot.press("o")
    await wait_for(pilot, lambda: app.screen.report.by == "model", what="usage by model")
    await settle(pilot)
    _quiet(app)


SCENES = {
    "sessions": scene_sessions,
    "search": scene_search,
    "hit-list": scene_hit_list,
    "reader-chain": scene_reader_chain,
    "reader-match": scene_reader_match,
    "help": scene_help,
    "usage": scene_usage,
}


def screen_text(app: Any) -> list[str]:
    """The screen as plain text, one string a row (what a person sees, dialogs and notices included)."""
    return [strip.text for strip in app.screen._compositor.render_strips()]
