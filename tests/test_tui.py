"""Pilot tests: the real app on the demo corpus, driven key by key.

Each test builds the app with :func:`tui.app.make_app` on a temp HOME (so the cache
lives there too), waits until it has opened, synced and started watching, then
presses keys and asserts on widgets, the clipboard and notifications.
"""

from __future__ import annotations

import json
from contextlib import asynccontextmanager
from pathlib import Path

import pyperclip

from core.fixtures.demo import CHAIN_SLUG, DEFAULT_NOW
from tui.app import make_app
from tui.screens.dialogs import PickScreen, TagScreen
from tui.screens.help import HelpScreen
from tui.testing import ClipboardSpy, palette_offers, settle, wait_for
from tui.widgets.hit_list import HitList
from tui.widgets.reader import PAGE, Reader
from tui.widgets.sessions_pane import SessionList
from tui.widgets.turn_view import CompactionRule, Fold, SessionHeader, TurnView

SIZE = (120, 40)


def app_for(home: Path):
    return make_app(home, now=DEFAULT_NOW)


async def search(pilot, text: str) -> None:
    """Focus the search box, clear it, type ``text`` and wait for its hits."""
    await pilot.press("slash")
    pilot.app.main.query_one("#query").value = ""
    await pilot.press(*text)
    await wait_for(pilot, lambda: pilot.app.main.search_pane.shown_query == text, what=f"hits for {text!r}")


async def open_first_hit(pilot, text: str) -> Reader:
    await search(pilot, text)
    await pilot.press("enter")
    reader = pilot.app.main.reader
    await wait_for(pilot, lambda: reader.is_open and reader.current is not None, what="the reader to open")
    return reader


def notes(app) -> list[str]:
    return [n.message for n in app._notifications]


def visible(reader: Reader, widget) -> bool:
    region = widget.virtual_region
    top, bottom = reader.scroll_y, reader.scroll_y + reader.scrollable_content_region.height
    return region.y < bottom and region.y + max(region.height, 1) > top


# --- start-up and the three panes -------------------------------------------------


async def test_sessions_pane_groups_the_chain_with_numbered_sessions(demo_home):
    home, corpus = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        rows = app.main.query_one(SessionList).rows
        assert rows[0].kind == "chain" and rows[0].slug == CHAIN_SLUG  # live chain: most recent activity
        members = [r.session for r in rows[1:6]]
        assert [s.session_number for s in members] == [1, 2, 3, 4, 5]
        assert [s.session_id for s in members] == list(corpus.chain_session_ids)
        assert [s.is_live for s in members] == [False] * 4 + [True]
        listed = {r.session.session_id for r in rows if r.kind == "session"}
        assert listed == set(corpus.session_ids)
        status = str(app.main.query_one("#status").render())
        assert "11 sessions" in status and "watching" in status


async def test_search_as_you_type_shows_ranked_hits_with_highlights(demo_home):
    home, corpus = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        query, answer = corpus.queries[-1]  # ("watermark skew", ingest-long)
        await search(pilot, query)
        pane = app.main.search_pane
        assert pane.hits[0].session_id == answer
        prompt = app.main.query_one(HitList).get_option_at_index(0).prompt
        text = prompt.plain
        assert len(text.splitlines()) == 2  # compact: reference · project … age, one snippet line
        assert text.startswith("tidal-humming-quokka#1:217 ")  # the project follows where it fits
        assert "11d ago" in text  # relative to the injected now
        marked = {text[span.start : span.end].lower() for span in prompt.spans if "warning" in str(span.style)}
        assert {"watermark", "skew"} <= marked
        await pilot.press("escape", "v")  # the roomy layout: project and agent whole
        roomy = app.main.query_one(HitList).get_option_at_index(0).prompt.plain
        assert "tidal-humming-quokka#1:217" in roomy and "ingest-pipeline" in roomy and "claude" in roomy
        assert len(roomy.splitlines()) > 2


async def test_the_word_being_typed_matches_as_a_prefix(demo_home):
    home, corpus = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        _, answer = corpus.queries[-1]  # ("watermark skew", ingest-long)
        await search(pilot, "watermark ske")  # "ske" is still being typed
        pane = app.main.search_pane
        assert pane.hits and pane.hits[0].session_id == answer
        prompt = app.main.query_one(HitList).get_option_at_index(0).prompt
        marked = {prompt.plain[span.start : span.end].lower() for span in prompt.spans if "warning" in str(span.style)}
        assert "skew" in marked


async def test_stale_search_results_are_dropped(demo_home):
    from tui.messages import SearchFinished

    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await search(pilot, "snowball stemmer")
        pane = app.main.search_pane
        good = list(pane.hits)
        pane.post_message(SearchFinished(query="snow", hits=[], elapsed_ms=1.0))  # an older keystroke, late
        await pilot.pause()
        assert pane.hits == good and pane.shown_query == "snowball stemmer"


async def test_enter_opens_the_hit_scrolled_to_the_matched_turn(demo_home):
    home, corpus = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        reader = await open_first_hit(pilot, "watermark skew")
        block = reader.current_block
        assert block.session_id == corpus.queries[-1][1] and block.turn == 217
        widget = reader.query_one(f"#block-{reader.current}")
        assert widget.has_class("-current") and widget.has_class("-hit")
        await wait_for(pilot, lambda: visible(reader, widget), what="the hit turn in view")
        # lazily rendered: a 300-turn session mounts one page, not every turn
        assert len(reader.query(TurnView)) <= 3 * PAGE < len(reader.blocks)
        assert app.focused is reader


async def test_tab_cycles_the_three_panes(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        seen = []
        for _ in range(4):
            seen.append(app.main.pane_of(app.focused))
            await pilot.press("tab")
        assert seen == ["search-pane", "sessions-pane", "reader-pane", "search-pane"]
        assert app.main.pane_of(app.focused) == "sessions-pane"
        await pilot.press("shift+tab", "shift+tab")
        assert app.main.pane_of(app.focused) == "reader-pane"
        await pilot.press("slash")
        assert app.focused.id == "query"


async def test_enter_in_the_sessions_pane_opens_the_whole_chain_with_separators(demo_home):
    home, corpus = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab")  # sessions, on the chain header
        assert app.main.query_one(SessionList).selection_ref() == CHAIN_SLUG
        await pilot.press("enter")
        reader = app.main.reader
        await wait_for(pilot, lambda: reader.is_open, what="the chain to open")
        assert [s.session_number for s in reader.sessions] == [1, 2, 3, 4, 5]
        assert sum(b.kind == "session" for b in reader.blocks) == 5
        compaction = [i for i, b in enumerate(reader.blocks) if b.kind == "compaction"]
        assert [reader.blocks[i].session_id for i in compaction] == [corpus.compacted_session_id]
        await pilot.press("end")
        await pilot.pause()
        assert len(reader.query(SessionHeader)) >= 2 and len(reader.query(CompactionRule)) == 1
        assert reader.view_ref() == CHAIN_SLUG


async def test_folds_expand_by_key_and_by_mouse(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        reader = await open_first_hit(pilot, "k1 saturation")
        turn = reader.query_one(f"#block-{reader.current}", TurnView)
        folds = list(turn.query(Fold))
        assert folds and not any(f.expanded for f in folds)
        await pilot.press("e")
        assert all(f.expanded for f in folds)
        assert turn.query(".fold-body")  # bodies are built on first expand
        await pilot.press("e")
        assert not any(f.expanded for f in folds)
        first = folds[0]
        reader.scroll_to_widget(first, animate=False)
        await pilot.pause()
        await pilot.click(first.query_one(".fold-head"))
        assert first.expanded
        subagents = [f for f in reader.query(Fold) if f.has_class("subagent")]
        thinking = [f for f in reader.query(Fold) if f.has_class("thinking")]
        assert subagents and thinking  # session 1 has a subagent and thinking, both folded


async def test_mouse_click_on_a_hit_opens_it(demo_home):
    home, corpus = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await search(pilot, "E0502 borrow")
        await pilot.click(HitList, offset=(5, 0))
        await pilot.click(HitList, offset=(5, 0))  # highlight, then select
        reader = app.main.reader
        await wait_for(pilot, lambda: reader.is_open, what="the clicked hit to open")
        assert reader.sessions[0].session_id == dict(corpus.queries)["E0502 borrow"]


# --- handoff ------------------------------------------------------------------------


async def test_c_copies_the_reference_block_of_the_current_turn(demo_home, clipboard):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_first_hit(pilot, "watermark skew")
        await pilot.press("c")
        await wait_for(pilot, lambda: clipboard.copied, what="a copy")
        assert clipboard.copied == [app.archive.reference_block("tidal-humming-quokka#1:217")]
        assert "tidal-humming-quokka#1:217" in clipboard.copied[0].splitlines()[0]
        await wait_for(pilot, lambda: any("copied to the clipboard" in n for n in notes(app)))


async def test_c_on_a_range_in_the_chain_copies_slug_4_5(demo_home, clipboard):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "down", "down", "down", "down")  # chain header, #1 … #4
        listing = app.main.query_one(SessionList)
        assert listing.current_row.session.session_number == 4
        await pilot.press("shift+down")
        assert listing.selection_ref() == f"{CHAIN_SLUG}#4-5"
        await pilot.press("c")
        await wait_for(pilot, lambda: clipboard.copied, what="a copy")
        assert clipboard.copied[0] == app.archive.reference_block(f"{CHAIN_SLUG}#4-5")
        assert f"{CHAIN_SLUG}#4-5" in clipboard.copied[0]
        await pilot.press("escape", "up", "up", "up", "space", "down", "down", "space")  # from #5 to #2, then #4
        assert listing.selection_ref() == f"{CHAIN_SLUG}#2,4"


async def test_shift_c_copies_the_content_as_markdown(demo_home, clipboard):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await search(pilot, "sidebar overlaps footer")
        await pilot.press("down", "C")  # on the hit list: the text of the hit's session
        await wait_for(pilot, lambda: clipboard.copied, what="a copy")
        ref = app.main.search_pane.selected_hit.ref.rpartition(":")[0]
        assert clipboard.copied == [app.archive.content_markdown(ref)]
        assert any(n.startswith(f"Text of session {ref} copied to the clipboard") for n in notes(app))


async def test_copy_falls_back_to_osc52_and_says_so(demo_home, monkeypatch):
    home, _ = demo_home
    monkeypatch.setattr(pyperclip, "copy", ClipboardSpy(fail=True))
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "c")  # the chain header
        await wait_for(pilot, lambda: app.clipboard, what="the OSC 52 copy")
        assert app.clipboard == app.archive.reference_block(CHAIN_SLUG)
        assert any("OSC 52" in n for n in notes(app))


# --- filters and tags ---------------------------------------------------------------


async def test_p_filters_by_project_and_a_by_agent(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "p")
        await wait_for(pilot, lambda: isinstance(app.screen, PickScreen), what="the project picker")
        values = app.screen.values
        await pilot.press(*["down"] * (values.index("billing-api") + 1), "enter")
        await settle(pilot)
        sessions = app.main.sessions_pane.sessions
        assert app.filters.project == "billing-api"
        assert sessions and {s.project for s in sessions} == {"billing-api"}
        await search(pilot, "watermark skew")  # lives in another project
        assert app.main.search_pane.hits == []
        await pilot.press("tab", "a")
        await wait_for(pilot, lambda: isinstance(app.screen, PickScreen), what="the agent picker")
        assert app.screen.values == ["claude"]
        await pilot.press("down", "enter")
        await settle(pilot)
        assert app.filters.agent == "claude"
        await pilot.press("x")
        await settle(pilot)
        assert not app.filters.active and len(app.main.sessions_pane.sessions) == 11


async def test_t_tags_a_session_shows_and_filters_by_it(demo_home):
    home, corpus = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "down", "t")  # session #1 of the chain
        await wait_for(pilot, lambda: isinstance(app.screen, TagScreen), what="the tag dialog")
        await pilot.press(*"perf, bm25", "enter")
        first = corpus.chain_session_ids[0]
        await wait_for(pilot, lambda: sorted(app.archive.get_tags(first)) == ["bm25", "perf"], what="tags saved")
        await settle(pilot)
        row = app.main.query_one(SessionList).rows[1]
        assert sorted(row.session.tags) == ["bm25", "perf"]
        assert "#perf" in app.main.query_one(SessionList).get_option_at_index(1).prompt.plain
        app.set_filter("tag", "perf")
        await settle(pilot)
        assert [s.session_id for s in app.main.sessions_pane.sessions] == [first]
        assert [s.session_id for s in app.archive.list_sessions(tags=["perf"])] == [first]


# --- reader navigation ----------------------------------------------------------------


async def test_n_and_shift_n_move_between_hits_in_the_reader(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        reader = await open_first_hit(pilot, "exponential backoff")
        await settle(pilot)
        total = len(reader.matches)  # n / N step through matches (every occurrence), not turns
        assert len(reader.hits) > 3 and total > len(reader.hits)
        start = reader.match_index
        assert start is not None and reader.current in reader.hits
        await pilot.press("n")  # wraps around after the last match
        assert reader.match_index == (start + 1) % total
        await pilot.press("n", "n", "N")
        assert reader.match_index == (start + 2) % total
        await pilot.press("N", "N")
        assert reader.match_index == start
        assert reader.current == reader.matches[start].block
        await settle(pilot)
        widget = reader.query_one(f"#block-{reader.current}")
        assert widget.has_class("-current") and visible(reader, widget)
        assert f"{start + 1}/{total}" in str(app.main.query_one("#reader-status").render())


async def test_help_screen_lists_every_key_and_closes(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "question_mark")
        assert isinstance(app.screen, HelpScreen)
        text = " ".join(str(w.render()) for w in app.screen.query(".help-key, .help-general"))
        for key in ("/", "enter", "tab", "c", "C", "f", "p", "a", "t", "n", "N", "ctrl+q", "ctrl+p"):
            assert f" {key} " in f" {text} ".replace("\n", " ")
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)


async def test_command_palette_offers_every_action(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        titles = [c.title for c in app.get_system_commands(app.main)]
        names = ("Search", "Open", "Copy ref", "Copy text", "Follow", "Next hit", "Prev hit", "Project", "Agent", "Tag", "Help")
        for name in names:
            assert any(t.startswith(name + " (") for t in titles), name
        await pilot.press("ctrl+p")
        await pilot.pause()
        assert app.screen.__class__.__name__ == "CommandPalette"
        await pilot.press(*"Copy ref")
        await wait_for(pilot, lambda: palette_offers(app, "Copy ref"), what="the palette to offer Copy ref")
        await pilot.press("escape")


async def test_ctrl_q_quits(demo_home):
    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert not app.is_running


# --- live ---------------------------------------------------------------------------


def _append(path: Path, sid: str, text: str, role: str, uuid: str, parent: str | None, ts: str) -> None:
    record = {
        "parentUuid": parent, "isSidechain": False, "userType": "external",
        "cwd": "/home/demo/work/relay-search", "sessionId": sid, "version": "2.1.39",
        "gitBranch": "feat/bm25-index", "slug": CHAIN_SLUG, "type": role,
        "message": {"role": role, "content": text if role == "user" else [{"type": "text", "text": text}]},
        "uuid": uuid, "timestamp": ts,
    }
    with open(path, "a", encoding="utf-8") as handle:
        handle.write(json.dumps(record) + "\n")


@asynccontextmanager
async def following_the_live_session(demo_home):
    """The demo app with its live session (chain #5) selected and followed (``f``);
    yields the app, the pilot, the reader, and the path and id of the session's file."""
    home, corpus = demo_home
    live = corpus.live_session_id
    path = next(corpus.root.rglob(f"{live}.jsonl"))
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "down", "down", "down", "down", "down")
        await pilot.press("f")
        reader = app.main.reader
        await wait_for(pilot, lambda: reader.is_open and reader.follow, what="follow mode")
        yield app, pilot, reader, path, live


async def test_f_follows_the_live_session_as_it_is_written(demo_home):
    async with following_the_live_session(demo_home) as (app, pilot, reader, path, live):
        turns_before = sum(b.kind == "turn" for b in reader.blocks)
        assert "following" in str(app.main.query_one("#reader-status").render())
        prompt, answer = "f0000000-0000-4000-8000-000000000001", "f0000000-0000-4000-8000-000000000002"
        _append(path, live, "now wire the zanzibar exporter", "user", prompt, None, "2026-11-20T11:59:30.000Z")
        _append(path, live, "The zanzibar exporter is wired.", "assistant", answer, prompt, "2026-11-20T11:59:40.000Z")
        await wait_for(pilot, lambda: sum(b.kind == "turn" for b in reader.blocks) == turns_before + 1, what="the new turn")
        await settle(pilot)
        last = reader.query(TurnView).last()
        assert "zanzibar" in last.block.prompt
        header = reader.query(SessionHeader).first()
        assert header.block.session.turn_count == turns_before + 1  # the header follows too
        assert reader.is_vertical_scroll_end or reader.max_scroll_y == 0
        await pilot.press("f")
        assert not reader.follow


async def test_a_new_transcript_appears_and_the_open_search_refreshes(demo_home):
    from tests.support import project_dir, transcript

    home, _ = demo_home
    app = app_for(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await search(pilot, "quasar")
        assert app.main.search_pane.hits == []
        await search(pilot, "snowball stemmer")
        await pilot.press("down")
        kept = app.main.search_pane.selected_hit.ref
        sid = "99999999-9999-4999-8999-999999999999"
        t = transcript(sid, cwd="/home/demo/work/quasar")
        t.user("Why does the snowball stemmer choke on quasar names?")
        t.assistant("Because quasar names are identifiers; keep them unstemmed.")
        t.write(project_dir(home, "/home/demo/work/quasar"))
        await wait_for(pilot, lambda: any(s.session_id == sid for s in app.main.sessions_pane.sessions), what="the new session")
        await wait_for(pilot, lambda: any(h.session_id == sid for h in app.main.search_pane.hits), what="the refreshed search")
        assert app.main.search_pane.selected_hit.ref == kept  # selection not stolen
        assert app.focused is app.main.query_one(HitList)
