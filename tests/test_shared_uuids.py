"""Records that reuse another file's uuids are kept unless they are replays (issue 11 point 5).

Claude Code replays a session's records into the file that continues it: the same
uuid *and* the same content. A file whose records only reuse uuids (hand-made ids,
a writer's bug, the DAG fixtures of claude-code-log) holds other messages, and
none of them may vanish.
"""

from __future__ import annotations

import json
import shutil

from .hostile_support import cli_json, exchange, run_cli, write_jsonl
from .support import TRANSCRIPTS, needs_transcripts, open_archive

OLD = "11111111-1111-4111-8111-111111111111"
NEW = "22222222-2222-4222-8222-222222222222"


def test_a_session_reusing_uuids_with_other_text_is_kept(tmp_path):
    project = tmp_path / ".claude" / "projects" / "-home-t-proj"
    write_jsonl(project / f"{OLD}.jsonl", exchange(OLD, "how do I descale the kettle", "citric acid", "2026-01-01T10:00:00Z"))
    assert run_cli(tmp_path, "index").returncode == 0
    write_jsonl(project / f"{NEW}.jsonl", exchange(NEW, "why is the sourdough flat", "feed the starter", "2026-01-02T10:00:00Z"))
    for _ in range(2):  # incremental, then a fresh build: the same answer
        listed = {s["session_id"]: s for s in cli_json(tmp_path, "list")["sessions"]}
        assert set(listed) == {OLD, NEW}
        assert listed[NEW]["message_count"] == 2 and listed[NEW]["turn_count"] == 1
        assert listed[OLD]["message_count"] == 2
        shown = run_cli(tmp_path, "show", NEW)
        assert shown.returncode == 0, shown.stderr
        assert "why is the sourdough flat" in shown.stdout.decode() and "feed the starter" in shown.stdout.decode()
        hits = cli_json(tmp_path, "search", "sourdough starter")["results"]
        assert [h["session_id"] for h in hits] == [NEW]
        assert run_cli(tmp_path, "index", "--rebuild").returncode == 0


def test_a_real_replay_still_counts_once(tmp_path):
    project = tmp_path / ".claude" / "projects" / "-home-t-proj"
    first = exchange(OLD, "how do I descale the kettle", "citric acid", "2026-01-01T10:00:00Z")
    write_jsonl(project / f"{OLD}.jsonl", first)
    replayed = [{**r, "sessionId": NEW} for r in first]  # same uuids, same content
    own = exchange(NEW, "and the coffee machine", "same acid, weaker", "2026-01-02T10:00:00Z", ids=("u2", "a2"))
    own[0]["parentUuid"] = "a1"
    write_jsonl(project / f"{NEW}.jsonl", replayed + own)
    listed = {s["session_id"]: s for s in cli_json(tmp_path, "list")["sessions"]}
    assert listed[NEW]["message_count"] == 2 and listed[OLD]["message_count"] == 2
    assert [h["session_id"] for h in cli_json(tmp_path, "search", "descale kettle")["results"]] == [OLD]


@needs_transcripts
def test_dag_fixtures_keep_every_distinct_record(tmp_path):
    """claude-code-log's ``dag_resume`` + ``dag_fork``: one session, shared uuids, some other text."""
    project = tmp_path / ".claude" / "projects" / "-p"
    project.mkdir(parents=True)
    samples = TRANSCRIPTS / "claude-code-log" / "test_data"
    expected = set()
    for name in ("dag_resume.jsonl", "dag_fork.jsonl"):
        shutil.copy(samples / name, project / name)
        for line in (samples / name).read_text().splitlines():
            rec = json.loads(line)
            expected.add((rec["uuid"], rec["message"]["content"][0]["text"]))
    with open_archive(tmp_path) as archive:
        got = set()
        for info in archive.list_sessions():
            got |= {(m.uuid, m.text) for m in archive.iter_session_messages(info.session_id)}
        assert got == expected
        assert sum(s.message_count for s in archive.list_sessions()) == len(expected)
