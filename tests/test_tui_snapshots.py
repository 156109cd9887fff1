"""Snapshot tests: the main screens, pinned (120x40 and 80x24, fixed clock, demo corpus).

Update after an intended change with ``pytest tests/test_tui_snapshots.py
--snapshot-update`` and look at the report before committing. The scenes are the
same ones ``scripts/export_screenshots.py`` draws for the README.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from core.fixtures.demo import DEFAULT_NOW, write_demo_corpus
from tui.app import make_app
from tui.screens.empty import EmptyScreen
from tui.testing import SCENES, wait_for

SIZE = (120, 40)
SMALL = (80, 24)  # the smallest terminal the app promises to render cleanly


@pytest.mark.parametrize("scene", sorted(SCENES))
def test_scene(scene, tmp_path, snap_compare):
    write_demo_corpus(tmp_path, now=DEFAULT_NOW)
    assert snap_compare(make_app(tmp_path, now=DEFAULT_NOW), terminal_size=SIZE, run_before=SCENES[scene])


@pytest.mark.parametrize("scene", sorted(SCENES))
def test_scene_at_80x24(scene, tmp_path, snap_compare):
    write_demo_corpus(tmp_path, now=DEFAULT_NOW)
    assert snap_compare(make_app(tmp_path, now=DEFAULT_NOW), terminal_size=SMALL, run_before=SCENES[scene])


def test_empty_machine(snap_compare):
    # The empty screen prints the paths it searched, so HOME must not vary per run.
    home = Path(tempfile.gettempdir()) / "relay-search-snapshot-empty-home"
    shutil.rmtree(home, ignore_errors=True)
    home.mkdir()

    async def run_before(pilot) -> None:
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, EmptyScreen), what="the empty screen")
        await pilot.pause()

    try:
        assert snap_compare(make_app(home, now=DEFAULT_NOW), terminal_size=SIZE, run_before=run_before)
    finally:
        shutil.rmtree(home, ignore_errors=True)


def test_tag_dialog(tmp_path, snap_compare):
    write_demo_corpus(tmp_path, now=DEFAULT_NOW)

    async def run_before(pilot) -> None:
        from tui.screens.dialogs import TagScreen
        from tui.testing import _quiet, settle

        await settle(pilot)
        await pilot.press("tab", "down", "t")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, TagScreen), what="the tag dialog")
        await pilot.press(*"perf bm25")
        _quiet(pilot.app)

    assert snap_compare(make_app(tmp_path, now=DEFAULT_NOW), terminal_size=SIZE, run_before=run_before)
