"""A hit list that can be scanned (issue 22), through the real app.

Two lines a hit and the whole left column while a query is active (Sessions folds
to one line and comes back when the query is cleared); quiet notices; one name per
turn across the CLI and the app; summaries without agent markup; "live" from content,
not a copied file's mtime; the palette's screenshot lands in the data dir.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from textual.widgets._toast import Toast

from core.fixtures.claude import ClaudeTranscript
from core.fixtures.demo import DEFAULT_NOW
from tui.app import make_app
from tui.screens.help import HelpScreen
from tui.testing import palette_offers, screen_text, settle, wait_for
from tui.widgets.hit_list import HitList

from .test_answers import write_more
from .test_mcp import write_corpus

REPO = Path(__file__).resolve().parent.parent
REF_AT_START = re.compile(r"^[\w-]+#\d+:\d+ ")  # the first line of a hit: slug#n:turn


async def type_query(pilot, text: str) -> None:
    app = pilot.app
    app.main.action_focus_search()
    await pilot.press(*text)
    await wait_for(pilot, lambda: app.main.search_pane.shown_query == text, what=f"hits for {text!r}")
    await settle(pilot)


def visible_hits(app) -> int:
    """Hits whose reference line is on screen inside the hit list (what a person sees)."""
    hit_list = app.main.query_one(HitList)
    region = hit_list.content_region
    rows = screen_text(app)[region.y : region.bottom]
    return sum(1 for row in rows if REF_AT_START.match(row[region.x : region.right]))


async def scan_at(demo_home, size: tuple[int, int]) -> int:
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await type_query(pilot, "test")
        await pilot.press("escape", "g")  # every matching turn: more hits than the screen holds
        await settle(pilot)
        assert len(app.main.search_pane.hits) >= 12
        return visible_hits(app)


async def test_at_least_8_hits_are_visible_at_120x35(demo_home):
    assert await scan_at(demo_home, (120, 35)) >= 8


async def test_at_least_5_hits_are_visible_at_80x24(demo_home):
    assert await scan_at(demo_home, (80, 24)) >= 5


async def test_sessions_fold_to_one_line_while_a_query_is_active_and_come_back(demo_home):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        sessions = app.main.sessions_pane
        assert not sessions.folded and sessions.region.height > 10
        await type_query(pilot, "watermark skew")
        assert sessions.folded and sessions.region.height == 1
        assert "▸ 11 sessions" in screen_text(app)[sessions.region.y]  # the folded line says what is there
        await pilot.press("tab")  # to the sessions: they unfold
        await pilot.pause()
        assert not sessions.folded and sessions.session_list.has_focus
        await pilot.press("slash")  # back to the query: the hits get the column again
        await pilot.pause()
        assert sessions.folded
        await pilot.press("escape", "escape")  # leave the box, clear the query
        await settle(pilot)
        assert app.main.search_pane.query_text == "" and not sessions.folded
        assert sessions.region.height > 10


async def test_a_refresh_keeps_the_selection_and_scroll_when_the_top_hits_did_not_change(demo_home):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await type_query(pilot, "test")
        await pilot.press("escape", "g")
        await settle(pilot)
        await pilot.press(*["down"] * 9)
        hit_list = app.main.query_one(HitList)
        selected, scroll = hit_list.highlighted, hit_list.scroll_y
        assert selected == 9 and scroll > 0
        app.main.refresh_all(refresh=True)  # what a live change or a grown index does
        await settle(pilot)
        assert (hit_list.highlighted, hit_list.scroll_y) == (selected, scroll)


async def test_a_notice_is_at_most_3_lines_goes_away_and_a_dialog_clears_it(demo_home, clipboard):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:  # toasts drawn, as in a terminal
        await settle(pilot)
        await type_query(pilot, "watermark skew")
        await pilot.press("escape", "c")
        await wait_for(pilot, lambda: list(app.screen.query(Toast)), what="the notice")
        toast = app.screen.query_one(Toast)
        assert toast.region.height <= 3
        text = str(toast.render())
        assert "copied to the clipboard · saved to last-copy.md" in " ".join(text.split())
        assert all(not line.endswith("-") for line in text.splitlines())  # whole words per line
        assert app._notifications and next(iter(app._notifications)).timeout == 4
        await wait_for(pilot, lambda: not app._notifications, timeout=20, what="the notice to go")

        await pilot.press("c")
        await wait_for(pilot, lambda: app._notifications, what="a second notice")
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        assert not app._notifications and not list(app.screen.query(Toast))  # nothing over the help


async def test_the_help_groups_the_keys_and_fits_120x35(demo_home):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        await pilot.press("tab", "question_mark")
        await pilot.pause()
        groups = [str(w.render()) for w in app.screen.query(".help-group")]
        assert groups == ["Search", "Sessions", "Reader", "Handoff"]
        assert app.screen.query_one("#help-body").max_scroll_y == 0  # nothing to scroll to: it all shows
        # a wrapped description stays in its column (never back under the key)
        texts = list(app.screen.query(".help-text"))
        assert len({w.region.x for w in texts if w.region.x < 60}) == 1
        assert any(w.region.height > 1 for w in texts)


def _cli(home: Path, *args: str) -> dict:
    env = {**os.environ, "HOME": str(home), "PYTHONPATH": str(REPO)}
    env.pop("XDG_CACHE_HOME", None), env.pop("XDG_DATA_HOME", None), env.pop("CLAUDE_CONFIG_DIR", None)
    argv = [sys.executable, "-m", "core", *args, "--json"]
    proc = subprocess.run(argv, capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


async def test_a_turn_has_the_same_name_in_the_cli_and_the_app(tmp_path):
    write_corpus(tmp_path)
    write_more(tmp_path)  # a chain without a slug: its members are named by an id prefix, #1 and #2
    cli_ref = _cli(tmp_path, "search", "tested heron")["results"][0]["ref"]
    assert "#2:" in cli_ref
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot, timeout=60)
        await type_query(pilot, "tested heron")
        assert app.main.search_pane.hits[0].ref == cli_ref
        first_row = app.main.query_one(HitList).get_option_at_index(0).prompt.plain
        assert first_row.startswith(cli_ref + " ")


def _bash_mode_session(home: Path) -> str:
    from datetime import timedelta

    start = DEFAULT_NOW - timedelta(days=2)
    t = ClaudeTranscript("ba5e0000-0000-4000-8000-00000000b001", cwd="/home/t/work/shellish", start=start)
    t.user("<bash-input>uv run pytest -m browser -v</bash-input>")
    t.user("<bash-stdout>3 passed</bash-stdout><bash-stderr></bash-stderr>")
    t.assistant("The browser tests pass.")
    t.write_under(home / ".claude" / "projects")
    return t.session_id


async def test_summaries_have_no_agent_markup_in_the_cli_or_the_app(tmp_path):
    sid = _bash_mode_session(tmp_path)
    listed = {s["session_id"]: s for s in _cli(tmp_path, "list")["sessions"]}
    assert listed[sid]["summary"] == "uv run pytest -m browser -v"
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        shown = "\n".join(screen_text(app))
        assert "uv run pytest -m browser -v" in shown and "bash-input" not in shown


async def test_a_copied_archive_is_not_live_only_what_is_written_to_is(demo_home):
    home, corpus = demo_home
    stamp = DEFAULT_NOW.timestamp()
    for path in (home / ".claude" / "projects").rglob("*.jsonl"):
        os.utime(path, (stamp, stamp))  # a fresh copy: every file just written
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        live = [s.session_id for s in app.main.sessions_pane.sessions if s.is_live]
        assert live == [corpus.live_session_id]  # its newest records are recent; the others' are not


async def test_the_palettes_screenshot_goes_into_the_data_dir_and_says_where(demo_home):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        await settle(pilot)
        folder = app.config.data_path / "screenshots"
        assert not folder.exists()
        await pilot.press("ctrl+p")
        await pilot.press(*"Screenshot")
        await wait_for(pilot, lambda: palette_offers(app, "Screenshot"), what="the palette to offer Screenshot")
        await pilot.press("enter")
        notes = lambda: [n.message for n in app._notifications if "Screenshot" in n.message]  # noqa: E731
        await wait_for(pilot, notes, what="the screenshot notice")
        saved = list(folder.glob("*.svg"))
        assert len(saved) == 1 and saved[0].read_text(encoding="utf-8").startswith("<svg")
        shown = notes()[-1].removeprefix("Screenshot saved to ")
        assert Path(os.path.expanduser(shown)) == saved[0]  # the path, ~ for the home directory
