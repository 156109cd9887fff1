"""Copying that tells the truth (issue 15): the notice says what happened, shows
what was copied, and points at a file that always has it; ``C`` copies the
session, never one turn; a cut keeps the latest turns; the summary is a summary.
"""

from __future__ import annotations

import pyperclip

from core.fixtures.demo import CHAIN_SLUG, DEFAULT_NOW
from core.outputs.handoff import about, content_markdown
from tui.app import make_app
from tui.clipboard import LAST_COPY
from tui.testing import ClipboardSpy, settle, wait_for

from .test_tui import notes, open_first_hit

SIZE = (120, 40)


def titles(app) -> list[str]:
    return [n.title for n in app._notifications]


async def test_a_copy_says_copied_shows_a_preview_and_saves_a_file(demo_home, clipboard):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await open_first_hit(pilot, "watermark skew")
        await pilot.press("c")
        await wait_for(pilot, lambda: any("copied to the clipboard" in n for n in notes(app)), what="the notice")
        text = clipboard.copied[0]
        note = next(n for n in notes(app) if "copied to the clipboard" in n)
        assert note == "Reference to turn tidal-humming-quokka#1:217 copied to the clipboard · saved to last-copy.md"
        saved = app.config.data_path / LAST_COPY
        assert saved.read_text(encoding="utf-8") == text
        await pilot.press("question_mark")  # the full story (path, preview) is in the help screen
        last = str(app.screen.query_one("#help-last-copy").render())
        assert f"Saved to {saved}" in last
        assert "│ " + text.splitlines()[0][:40] in last  # the preview: what will be pasted


async def test_osc52_says_sent_not_copied_and_points_at_the_file(demo_home, monkeypatch):
    home, _ = demo_home
    monkeypatch.setattr(pyperclip, "copy", ClipboardSpy(fail=True))
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "c")  # the chain header
        await wait_for(pilot, lambda: app.clipboard and notes(app), what="the OSC 52 copy")
        note = notes(app)[-1]
        assert "sent via OSC 52 (the terminal or tmux must allow it)" in note
        assert "copied" not in note.lower() and "Copied" not in titles(app)[-1]
        assert note.startswith(f"Reference to chain {CHAIN_SLUG} (5 sessions)")
        assert note.endswith("saved to last-copy.md")
        saved = app.config.data_path / LAST_COPY
        assert saved.read_text(encoding="utf-8") == app.clipboard == app.archive.reference_block(CHAIN_SLUG)


async def test_shift_c_in_the_reader_copies_the_open_session_not_the_turn(demo_home, clipboard):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        reader = await open_first_hit(pilot, "watermark skew")
        await pilot.press("C")
        await wait_for(pilot, lambda: clipboard.copied, what="a copy")
        ref = reader.view_ref()
        assert ":" not in ref
        assert clipboard.copied == [app.archive.content_markdown(ref)]
        assert any(n.startswith(f"Text of session {ref} copied") for n in notes(app))


async def test_marked_range_copy_says_it_is_the_marked_range(demo_home, clipboard):
    home, _ = demo_home
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("tab", "down", "down", "down", "down", "shift+down", "C")
        await wait_for(pilot, lambda: clipboard.copied, what="a copy")
        assert clipboard.copied == [app.archive.content_markdown(f"{CHAIN_SLUG}#4-5")]
        assert any(n.startswith(f"Text of sessions {CHAIN_SLUG}#4-5 (2 marked)") for n in notes(app))


def test_a_cut_keeps_the_latest_turns_and_says_what_was_left_out(demo):
    archive, _ = demo
    full = archive.content_markdown(CHAIN_SLUG, 1_000_000)
    cut = archive.content_markdown(CHAIN_SLUG, 2_500)
    assert len(cut) <= 2_500
    resolved = archive.resolve(CHAIN_SLUG)
    last = resolved.sessions[-1]
    last_turn = archive.turns(last)[-1]
    assert f"### Turn {last_turn.number} —" in cut.rpartition("## Session")[2]  # the latest turn is there
    assert f"## Session {last.session_number}:" in cut
    first_turn = archive.turns(resolved.sessions[0])[0]
    turns_kept = cut.partition("## Session")[2]
    assert f"**User:** {first_turn.user_text[:60]}" in full and first_turn.user_text[:60] not in turns_kept
    assert "earlier turns left out to stay within 2,500 characters" in cut
    assert "left out" not in full
    assert cut == content_markdown(resolved, archive.turns, 2_500)


def test_the_summary_slot_is_the_summary_or_first_prompt_not_the_slug(demo):
    archive, _ = demo
    for session in archive.list_sessions(limit=100):
        block = archive.reference_block(session.session_id)
        context = block.splitlines()[1]
        if session.slug:
            assert not context.endswith(f"· {session.slug}"), context
        assert context.endswith(" ".join(about(session).split())[:120])
        assert about(session) and about(session) != session.slug
