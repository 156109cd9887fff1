"""The app agrees with the CLI (issue 15): tags set by another process show within
a second, a reference typed into the search box opens, counts are in words.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from core.fixtures.demo import CHAIN_SLUG, DEFAULT_NOW
from tui import app as app_module
from tui.app import make_app
from tui.testing import settle, wait_for
from tui.widgets.hit_list import HitList
from tui.widgets.sessions_pane import SessionList

SIZE = (120, 40)
SCRIPT = Path(sys.executable).with_name("relay-search")


async def test_tags_set_by_another_process_show_within_a_second(demo_home, monkeypatch):
    """The app looks at the tag store every TAGS_CHECK seconds (≤ 0.5); the first look after
    another process tagged starts the refresh that shows the tag. Within a second, counted in
    looks rather than timed (a wall-clock bound fails on a loaded machine)."""
    assert app_module.TAGS_CHECK <= 0.5
    looks: list[bool] = []  # one per look: did it start a refresh?
    check = app_module.RelayApp._check_tags

    def counted(self) -> None:
        refreshes = []
        refresh_all = self.main.refresh_all
        self.main.refresh_all = lambda **kw: (refreshes.append(kw), refresh_all(**kw))[1]
        try:
            check(self)
        finally:
            del self.main.refresh_all
        looks.append(bool(refreshes))

    monkeypatch.setattr(app_module.RelayApp, "_check_tags", counted)
    home, corpus = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: len(looks) >= 2, what="the app's looks at the tag store")
        assert not any(looks)  # nothing changed: no refresh
        sid = corpus.chain_session_ids[1]
        env = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
        proc = subprocess.run([str(SCRIPT), "tag", sid, "from-the-cli"], env=env, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 0, proc.stderr
        looked = len(looks)  # (the event loop waited for the CLI: no look was under way)

        def shown() -> bool:
            rows = app.main.query_one(SessionList).rows
            return any(r.kind == "session" and "from-the-cli" in r.session.tags for r in rows)

        await wait_for(pilot, shown, timeout=15, what="the tag from the CLI")
        assert looks[looked] is True  # the first look after the tag started the refresh


async def test_a_typed_reference_is_offered_first_and_opens(demo_home):
    home, corpus = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for ref in (CHAIN_SLUG, f"{CHAIN_SLUG}#4:0", corpus.chain_session_ids[2][:8]):
            app.main.query_one("#query").value = ""
            await pilot.press(*ref)
            await wait_for(pilot, lambda: app.main.search_pane.shown_query == ref, what=f"results for {ref}")
            hits = app.main.query_one(HitList)
            assert app.main.search_pane.opens == ref
            assert f"open {ref}" in str(hits.get_option_at_index(0).prompt)
        app.main.query_one("#query").value = ""
        await pilot.press(*f"{CHAIN_SLUG}#4-5")
        await wait_for(pilot, lambda: app.main.search_pane.opens == f"{CHAIN_SLUG}#4-5", what="the open row")
        await pilot.press("enter")
        reader = app.main.reader
        await wait_for(pilot, lambda: reader.is_open and len(reader.sessions) == 2, what="sessions 4-5 to open")
        assert [s.session_number for s in reader.sessions] == [4, 5]
        await pilot.press("tab")  # reader → search box (in the reader, / finds in the session)
        app.main.query_one("#query").value = ""
        await pilot.press(*"velvet")  # a word, not a reference: a plain search
        await wait_for(pilot, lambda: app.main.search_pane.shown_query == "velvet", what="hits")
        assert app.main.search_pane.opens is None
        app.main.query_one("#query").value = ""
        await pilot.press(*"no-such-slug-here")
        await wait_for(pilot, lambda: app.main.search_pane.shown_query == "no-such-slug-here", what="hits")
        assert app.main.search_pane.opens is None


async def test_counts_in_the_app_are_plural_only_when_not_one(demo_home):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.main.open_ref(f"{CHAIN_SLUG}#2")  # a one-turn session
        reader = app.main.reader
        await wait_for(pilot, lambda: reader.is_open and reader.sessions, what="the session")
        await settle(pilot)
        status = str(app.main.query_one("#reader-status").render())
        assert "1 turn" in status and "1 turns" not in status
        listing = app.main.query_one(SessionList)
        prompts = " ".join(str(listing.get_option_at_index(i).prompt) for i in range(listing.option_count))
        assert "1 turn" in prompts and "1 turns" not in prompts
