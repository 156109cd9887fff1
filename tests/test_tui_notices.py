"""The reader shows what the index holds of Claude Code's notices (issue 34): a hit on an
away summary or a compaction summary opens the turn with that text on screen."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from core.fixtures.claude import ClaudeTranscript, stable_uuid
from tests.test_notices import write_corpus
from tests.test_tui_reader import flat_visible, search_and_open
from tui.app import make_app

NOW = datetime(2026, 4, 20, 12, 0, tzinfo=UTC)


async def test_a_hit_on_an_away_summary_shows_it(tmp_path: Path) -> None:
    write_corpus(tmp_path)
    app = make_app(tmp_path, now=NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        await search_and_open(pilot, "zeppelin")
        assert "Away summary: We rewired the zeppelin ledger exporter" in flat_visible(app)


async def test_a_hit_deep_in_a_compaction_summary_unfolds_it(tmp_path: Path) -> None:
    t = ClaudeTranscript(stable_uuid("test-tui-notices", "compact"), cwd="/home/t/work/ledger", slug="calm-blue-otter",
                         version="2.1.39", start=datetime(2026, 4, 18, 9, 0, tzinfo=UTC), step=timedelta(seconds=5))
    t.user("Carry on with the ledger migration")
    t.assistant("Migrating.")
    filler = "\n".join(f"{i}. Reviewed the ledger table number {i}." for i in range(60))
    t.compact(f"Analysis:\n{filler}\n61. The walrus_reconcile job must run before the nightly export.")
    t.user("what next?")
    t.assistant("The export.")
    t.write_under(tmp_path / ".claude" / "projects")
    app = make_app(tmp_path, now=NOW)
    async with app.run_test(size=(120, 35)) as pilot:
        await search_and_open(pilot, "walrus_reconcile")
        assert "The walrus_reconcile job must run before the nightly export" in flat_visible(app)
