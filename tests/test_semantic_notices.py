"""Issue 34: a passage's notes are one more vector slot, so an away summary is found by meaning
(a paraphrase sharing no word with it), and the hit points at the summary's message."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from core.fixtures.claude import ClaudeTranscript, stable_uuid
from core.semantic.embedder import MODEL_ENV, SHIPPED_DIR, model_state
from tests.test_semantic_phases import cli, search_json

STATE = model_state({MODEL_ENV: str(SHIPPED_DIR)})
pytestmark = [pytest.mark.semantic, pytest.mark.skipif(not STATE.on, reason=f"the model cannot run here: {STATE.reason}")]

AWAY = stable_uuid("test-semantic-notices", "away")
RECAP = ("We moved the customer invoices from the old billing database to the new ledger service; the import "
         "finished and every total matched. Next: switch the checkout page over to the ledger.")
PARAPHRASE = "transferred client statements off the legacy payments store into the accounting backend"


def test_an_away_summary_is_found_by_meaning(tmp_path: Path) -> None:
    t = ClaudeTranscript(AWAY, cwd="/home/dev/shop", version="2.1.114", start=datetime(2026, 11, 20, tzinfo=timezone.utc),
                         step=timedelta(seconds=5))
    t.user("ok go ahead with it")
    t.tool("Bash", {"command": "make import"}, "done")
    t.assistant("Done.")
    t.away_summary(RECAP)
    other = ClaudeTranscript(stable_uuid("test-semantic-notices", "other"), cwd="/home/dev/garden",
                             start=datetime(2026, 11, 19, tzinfo=timezone.utc))
    other.user("Water the tomatoes schedule: make it every second morning")
    other.assistant("The watering timer now runs every second morning at six.")
    for s in (t, other):
        s.write_under(tmp_path / ".claude" / "projects")
    cli(tmp_path, "index")
    assert not [h for h in search_json(tmp_path, PARAPHRASE, "--mode", "lexical")["results"] if h["session_id"] == AWAY]
    found = [h for h in search_json(tmp_path, PARAPHRASE)["results"] if h["session_id"] == AWAY]
    assert found and found[0]["by_meaning"] is True
    shown = cli(tmp_path, "show", f"{AWAY}:{found[0]['turn_number']}").stdout
    assert "Away summary: We moved the customer invoices" in shown
