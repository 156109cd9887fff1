"""Real long sessions open with a screenful mounted, not the whole session (issue 15).

A real Claude Code session (a clone of a spotter transcript: few turns of hundreds
of steps) opens with only a page of steps mounted; the rest fill in as the
"more steps" line scrolls into view. The speed itself is measured by
``bench/real_long.py`` (first paint, worst of 5), not here.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.real_long import REAL_CWD, real_sessions, write_real_long_sessions
from core.fixtures.claude import project_dir_name
from tui.app import make_app
from tui.testing import settle, wait_for
from tui.widgets.turn_view import ITEM_PAGE, MoreSteps, TurnView

SHARED = Path(__file__).resolve().parents[2] / "shared" / "transcripts"
pytestmark = pytest.mark.skipif(not real_sessions(SHARED), reason="../shared/transcripts not present")


async def test_a_real_long_session_mounts_a_page_of_steps_and_fills_in_on_scroll(tmp_path):
    project = tmp_path / ".claude" / "projects" / project_dir_name(REAL_CWD)
    sid = write_real_long_sessions(project, SHARED)[0]
    app = make_app(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot, timeout=120)
        reader = app.main.reader
        show = reader.show
        painted: list[int] = []  # steps mounted when the first paint is due

        async def counted(loaded) -> None:
            await show(loaded)
            painted.append(sum(t.shown for t in reader.query(TurnView)))

        reader.show = counted
        app.main.open_ref(sid, focus_reader=True)
        await wait_for(pilot, lambda: painted, what="the session to open")
        steps = sum(len(b.items) for b in reader.blocks)
        assert steps > 10 * ITEM_PAGE  # the real shape: hundreds of steps
        small = sum(len(t.block.items) for t in reader.query(TurnView) if len(t.block.items) <= ITEM_PAGE)
        assert painted[0] <= ITEM_PAGE + small  # first paint: one page of the big turn
        await settle(pilot)
        assert reader.query(MoreSteps)  # what is far below the screen waits
        shown = sum(t.shown for t in reader.query(TurnView))
        assert shown < steps / 2
        for _ in range(6):
            reader.scroll_end(animate=False)
            await settle(pilot)
        assert sum(t.shown for t in reader.query(TurnView)) > shown  # scrolling on mounted more
