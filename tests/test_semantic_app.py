"""Hybrid recall in the terminal app: the hit list labels a hit found by meaning alone, and
the status line says when semantic recall is off and why (Textual Pilot, a real archive)."""

from __future__ import annotations

import threading
from pathlib import Path

import pytest

from core.fixtures.demo import DEFAULT_NOW, write_demo_corpus
from core.semantic.embedder import MODEL_ENV, SHIPPED_DIR, model_state
from tui import app as app_module
from tui.app import make_app
from tui.testing import settle, wait_for
from tui.widgets.hit_list import HitList

from .support import open_archive, transcript
from .test_semantic import PARAPHRASE

BAKING = "a1b2c3d4-0000-4000-8000-00000000b4ed"
BREAD_QUERY = "my homemade bread was too heavy and flat"  # none of these words is in the baking session

SIZE = (120, 40)
STATE = model_state({MODEL_ENV: str(SHIPPED_DIR)})
pytestmark = [
    pytest.mark.semantic,
    pytest.mark.skipif(not STATE.on, reason=f"the model cannot run here: {STATE.reason}"),
]


async def search(pilot, text: str) -> None:
    await pilot.press("slash")
    pilot.app.main.query_one("#query").value = ""
    await pilot.press(*text)
    await wait_for(pilot, lambda: pilot.app.main.search_pane.shown_query == text, what=f"hits for {text!r}")


def embedded_home(home: Path) -> Path:
    write_demo_corpus(home)
    baking = transcript(BAKING, cwd="/home/t/kitchen")
    baking.user("The sourdough loaf came out dense again. What went wrong?")
    baking.assistant("Underproofed dough: let it rise longer, and bake it hotter with steam for a lighter crumb.")
    baking.write_under(home / ".claude" / "projects")
    with open_archive(home) as archive:
        assert archive.wait_semantic(timeout=300)
    return home


async def test_the_hit_list_labels_a_hit_found_by_meaning(tmp_path: Path):
    app = make_app(embedded_home(tmp_path), now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await search(pilot, BREAD_QUERY)
        hits = app.main.search_pane.hits
        assert [h.session_id for h in hits if h.by_meaning] == [BAKING]
        hit_list = app.main.query_one(HitList)
        prompts = {h.session_id: hit_list.get_option_at_index(i).prompt.plain for i, h in enumerate(hits)}
        assert "by meaning" in prompts[BAKING]
        assert all("by meaning" not in text for sid, text in prompts.items() if sid != BAKING)
        status = str(app.main.query_one("#status").render())
        assert "semantic recall off" not in status


async def test_the_status_line_says_semantic_recall_is_off_and_why(tmp_path: Path, monkeypatch):
    monkeypatch.setenv(MODEL_ENV, str(tmp_path / "no-model-here"))
    write_demo_corpus(tmp_path)
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await wait_for(
            pilot, lambda: "semantic recall off" in str(app.main.query_one("#status").render()), what="the status"
        )
        status = str(app.main.query_one("#status").render())
        assert "model file missing" in status
        await search(pilot, PARAPHRASE)
        assert not any(h.by_meaning for h in app.main.search_pane.hits)


def _embedding() -> bool:
    return any(t.name == "relay-search-embed" and t.is_alive() for t in threading.enumerate())


async def test_the_app_starts_embedding_only_after_it_is_interactive(tmp_path: Path, monkeypatch):
    """Loading the model and embedding a fresh archive took the interpreter from the
    first paint and keys: the app leaves it until EMBED_AFTER past its first sync."""
    monkeypatch.setattr(app_module, "EMBED_AFTER", 3600.0)
    write_demo_corpus(tmp_path)
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await search(pilot, "sourdough")
        assert not _embedding()
        semantic = app.archive.stats().semantic
        assert semantic["embedded"] == 0
        # the backlog is in sight: the status line says how much has vectors
        await wait_for(pilot, lambda: "meaning: 0/" in str(app.main.query_one("#status").render()), what="the backlog in the status")
        assert f"meaning: 0/{semantic['passages']:,} passages embedded" in str(app.main.query_one("#status").render())


async def test_the_app_embeds_a_fresh_archive_itself_and_then_finds_by_meaning(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(app_module, "EMBED_AFTER", 0.1)
    write_demo_corpus(tmp_path)
    baking = transcript(BAKING, cwd="/home/t/kitchen")
    baking.user("The sourdough loaf came out dense again. What went wrong?")
    baking.assistant("Underproofed dough: let it rise longer, and bake it hotter with steam for a lighter crumb.")
    baking.write_under(tmp_path / ".claude" / "projects")
    # Nothing is embedded before the app runs: no cache at all yet. (Sampling the stats after
    # the first settle raced the 0.1 s timer: on a loaded CI machine the embedding had finished.)
    assert not any(tmp_path.glob(".cache/**/*.npz"))
    app = make_app(tmp_path, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)

        def embedded() -> bool:  # (not wait_semantic: that would start the embedding itself)
            now = app.archive.stats().semantic
            return now["embedded"] == now["passages"] > 0

        await wait_for(pilot, embedded, timeout=300, what="the app to embed every passage")
        assert any(tmp_path.glob(".cache/**/*.npz"))  # (where the check above looked)
        await search(pilot, BREAD_QUERY)
        assert [h.session_id for h in app.main.search_pane.hits if h.by_meaning] == [BAKING]
