"""Codex rollouts: the real samples in ../shared/transcripts and builder-made files."""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from pathlib import Path

import pytest

from core.config import Config
from core.fixtures.codex import CodexRollout, codex_id
from core.model import COMPACTION_TEXT, Entry
from core.sources.base import MAIN, SUBAGENT, SourceFile
from core.sources.codex import CodexSource

SHARED = Path(__file__).resolve().parents[2] / "shared" / "transcripts"
SRC = CodexSource()


def counts(entries: list[Entry]) -> dict[str, int]:
    c = Counter(f"{e.role}/{e.type}" for e in entries)
    c["prompts"] = sum(e.starts_turn for e in entries)
    return dict(c)


def read(path: Path, **kw) -> tuple:
    result = SRC.read(SourceFile(path=path, agent="codex"), **kw)
    return result, counts(result.entries)


# --- real samples ---------------------------------------------------------------------

# (prompts, compactions, tool calls, tool results, assistant texts, skipped lines) per file,
# verified by reading the files.
CCUSAGE = "ccusage/apps/ccusage/test/fixtures/codex/sessions/branch-history"
CCLOG = "claude-code-log/test_data/codex"
# fmt: off
REAL = {
    "VibeCodingTracker/at-d6ca31e/examples/test_conversation_oai.jsonl": (1, 0, 18, 18, 9, 0),
    "agent-history/tests/fixtures/real_sessions/codex/session-01.jsonl": (1, 0, 0, 0, 1, 0),
    "agent-history/tests/fixtures/compaction/codex/session_with_compaction.jsonl": (4, 1, 2, 2, 6, 0),
    "agent-sessions/Resources/Fixtures/stage0/agents/codex/small.jsonl": (1, 6, 8, 6, 1, 0),
    "VibeCodingTracker/at-7acc4bc/tests/fixtures/quota/codex_session_rate_limits.jsonl": (0,) * 6,
    f"{CCUSAGE}/2026-05-12T08-00-00-parent.jsonl": (0,) * 6,
    f"{CCUSAGE}/2026-05-12T08-02-00-branch.jsonl": (0,) * 6,
    f"{CCLOG}/malformed/rollout-66666666-6666-4666-8666-666666666666.jsonl": (1, 0, 0, 0, 0, 1),
    f"{CCLOG}/sessions/rollout-44444444-4444-4444-8444-444444444444.jsonl": (1, 0, 0, 0, 1, 0),
}
# fmt: on

needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/transcripts not present")


@needs_shared
@pytest.mark.parametrize("rel", sorted(REAL))
def test_real_rollouts_read_and_pin_counts(rel: str) -> None:
    path = SHARED / rel
    result, c = read(path)
    assert result.error is None
    assert result.offset == path.stat().st_size
    prompts, compactions, calls, outputs, texts, skipped = REAL[rel]
    assert c.get("prompts", 0) == prompts
    assert c.get("system/compaction", 0) == compactions
    assert c.get("assistant/tool_use", 0) == calls
    assert c.get("tool/tool_result", 0) == outputs
    assert c.get("assistant/text", 0) == texts
    assert result.skipped == skipped
    assert all(e.entry_index < 200 for e in result.entries)


@needs_shared
def test_real_vscode_rollout_meta_and_tools() -> None:
    result, c = read(SHARED / "VibeCodingTracker/at-d6ca31e/examples/test_conversation_oai.jsonl")
    meta = result.meta
    assert meta.session_id == "01996135-afde-7911-97f0-d863511eca56"
    assert (meta.cwd, meta.git_branch, meta.version) == (
        "/proj/ds906659/gai/claude-code",
        "main",
        "0.39.0",
    )
    # the IDE wrapper is stripped: the prompt is what was typed
    assert meta.first_prompt.startswith("幫我檢查一下 go.mod")
    assert "system/text" not in c  # the <environment_context> message is machinery: dropped
    # empty encrypted reasoning yields nothing; agent_message events are not counted twice
    assert "assistant/thinking" not in c
    shell = next(e for e in result.entries if e.tool_name == "shell")
    assert shell.tool_input == {"command": ["bash", "-lc", "ls -la"]}
    first_output = next(
        e for e in result.entries if e.type == "tool_result" and e.tool_name == "shell"
    )
    assert first_output.text.startswith(
        "total 124"
    )  # unwrapped from {"output": ..., "metadata": ...}


@needs_shared
def test_real_exec_rollout_developer_and_environment_are_not_prompts() -> None:
    result, _ = read(SHARED / "agent-history/tests/fixtures/real_sessions/codex/session-01.jsonl")
    assert [(e.role, e.text) for e in result.entries] == [
        ("user", "[REDACTED_PROMPT]"),
        ("assistant", "[REDACTED_ASSISTANT_TEXT]"),
    ]
    assert result.entries[0].starts_turn and result.entries[0].entry_index == 5
    assert result.meta.version == "0.135.0" and result.meta.git_branch is None


@needs_shared
def test_real_rollout_read_incrementally_matches_full_read(tmp_path: Path) -> None:
    source = SHARED / "VibeCodingTracker/at-d6ca31e/examples/test_conversation_oai.jsonl"
    data = source.read_bytes()
    cut = data.index(b"\n", len(data) // 2) + 1
    target = tmp_path / "rollout.jsonl"
    target.write_bytes(data[: cut + 40])  # half the file plus a partial line
    file = SourceFile(path=target, agent="codex")
    first = SRC.read(file)
    assert first.offset == cut
    with target.open("ab") as fh:
        fh.write(data[cut + 40 :])
    second = SRC.read(file, offset=first.offset, state=first.state)
    assert second.replace is False
    full = SRC.read(file)
    assert first.entries + second.entries == full.entries
    assert second.meta == full.meta


# --- builder-made files ---------------------------------------------------------------


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return Config.from_env({"HOME": str(tmp_path)})


def file_of(rollout: CodexRollout, config: Config) -> SourceFile:
    file = SRC.classify(rollout.path, config)
    assert file is not None
    return file


def test_event_twins_are_not_counted_twice(config: Config) -> None:
    r = CodexRollout(config.codex_home, codex_id(1))
    r.developer().environment()
    r.turn("fix the failing test", "Fixed it.", tool=("shell", {"command": ["pytest"]}, "1 passed"))
    r.turn("now add docs", "Docs added.")
    result = SRC.read(file_of(r, config))
    c = counts(result.entries)
    assert c["prompts"] == 2 and c["user/text"] == 2
    assert c["assistant/text"] == 2 and c["assistant/thinking"] == 2
    assert "system/text" not in c  # developer + environment machinery: never a prompt, dropped
    assert [e.text for e in result.entries if e.starts_turn] == [
        "fix the failing test",
        "now add docs",
    ]
    assert result.meta.session_id == codex_id(1) and result.meta.cwd == "/home/dev/project"
    assert [e.entry_index for e in result.entries] == sorted(e.entry_index for e in result.entries)


def test_machinery_mid_session_and_ide_wrapper(config: Config) -> None:
    r = CodexRollout(config.codex_home, codex_id(8))
    r.turn("first", "one")
    r.environment()  # re-injected when the cwd changes: inside a turn, still not a prompt
    r.item(
        {
            "type": "message",
            "role": "user",
            "content": [
                {"type": "input_text", "text": "<user_instructions>be brief</user_instructions>"}
            ],
        }
    )
    r.user(
        "# Context from my IDE setup:\n\n## Active file: app.py\n\n"
        "## My request for Codex:\nrename foo to bar"
    )
    entries = SRC.read(file_of(r, config)).entries
    assert [e.text for e in entries if e.starts_turn] == ["first", "rename foo to bar"]
    assert not any(
        "environment_context" in e.text or "user_instructions" in e.text for e in entries
    )


def test_tool_calls_pair_and_parse_inputs(config: Config) -> None:
    r = CodexRollout(config.codex_home, codex_id(2))
    r.user("patch it")
    r.call("shell", {"command": ["ls", "-la"]}, "a.txt\nb.txt")
    r.call("apply_patch", {"input": "*** Begin Patch\n*** End Patch"}, "Done!", custom=True)
    entries = SRC.read(file_of(r, config)).entries
    uses = [e for e in entries if e.type == "tool_use"]
    results = [e for e in entries if e.type == "tool_result"]
    assert [(u.tool_name, u.tool_input) for u in uses] == [
        ("shell", {"command": ["ls", "-la"]}),
        ("apply_patch", {"input": "*** Begin Patch\n*** End Patch"}),
    ]
    assert [(x.tool_name, x.text, x.parent_uuid) for x in results] == [
        ("shell", "a.txt\nb.txt", uses[0].uuid),
        ("apply_patch", "Done!", uses[1].uuid),
    ]


def test_compaction_counted_once(config: Config) -> None:
    r = CodexRollout(config.codex_home, codex_id(3))
    r.turn("one", "1").compact().turn("two", "2")
    entries = SRC.read(file_of(r, config)).entries
    compactions = [e for e in entries if e.type == "compaction"]
    assert (
        len(compactions) == 1
        and compactions[0].text == COMPACTION_TEXT
        and compactions[0].role == "system"
    )


def test_incremental_append_continues_from_offset(config: Config) -> None:
    r = CodexRollout(config.codex_home, codex_id(4))
    r.turn("first", "one")
    file = file_of(r, config)
    first = SRC.read(file)
    assert first.replace is True and first.offset == r.path.stat().st_size
    again = SRC.read(file, offset=first.offset, state=first.state)
    assert again.entries == [] and again.replace is False and again.offset == first.offset
    r.turn("second", "two", tool=("shell", {"command": ["make"]}, "ok"))
    second = SRC.read(file, offset=first.offset, state=first.state)
    assert second.replace is False
    assert [e.text for e in second.entries if e.starts_turn] == ["second"]
    assert min(e.entry_index for e in second.entries) > max(e.entry_index for e in first.entries)
    assert any(e.tool_name == "shell" for e in second.entries)
    assert first.entries + second.entries == SRC.read(file).entries
    assert second.meta.first_prompt == "first"


def test_partial_last_line_is_not_consumed(config: Config) -> None:
    r = CodexRollout(config.codex_home, codex_id(5))
    r.user("complete line")
    size = r.path.stat().st_size
    r.write(
        '{"timestamp":"2026-01-05T09:00:09.000Z","type":"response_item","payload":{"type":"message","role":"as'
    )
    file = file_of(r, config)
    first = SRC.read(file)
    assert first.offset == size and first.skipped == 0
    assert [e.role for e in first.entries] == ["user"]
    r.write('sistant","content":[{"type":"output_text","text":"now whole"}]}}\n')
    second = SRC.read(file, offset=first.offset, state=first.state)
    assert [(e.role, e.text) for e in second.entries] == [("assistant", "now whole")]
    assert second.offset == r.path.stat().st_size


def test_malformed_and_non_object_lines_are_skipped_and_counted(config: Config) -> None:
    r = CodexRollout(config.codex_home, codex_id(6))
    r.user("before")
    r.write("{not json\n").write("[1, 2, 3]\n").write('"a string"\n').write("\n").write("null\n")
    r.write('{"type":"response_item","payload":"not a dict"}\n{"unknown":"record"}\n')
    r.assistant("after")
    result = SRC.read(file_of(r, config))
    assert result.error is None and result.skipped == 4
    assert [e.text for e in result.entries] == ["before", "after"]


def test_event_only_file_falls_back_then_rereads_when_response_items_appear(config: Config) -> None:
    r = CodexRollout(config.codex_home, codex_id(7), responses=False)
    r.user("typed in an old cli").assistant("old answer")
    file = file_of(r, config)
    first = SRC.read(file)
    assert [e.text for e in first.entries if e.starts_turn] == ["typed in an old cli"]
    assert counts(first.entries)["assistant/text"] == 1
    r.responses = True
    r.user("new prompt")  # writes the response item and its event twin
    second = SRC.read(file, offset=first.offset, state=first.state)
    assert second.replace is True  # the fallback had to be undone: whole-file re-read
    assert [e.text for e in second.entries if e.starts_turn] == ["new prompt"]


def test_fork_keeps_copied_history_once(config: Config) -> None:
    parent = CodexRollout(config.codex_home, codex_id(10))
    parent.turn("design the api", "Here is a design.", tool=("shell", {"command": ["ls"]}, "src"))
    parent.turn("add auth", "Auth added.")
    fork = CodexRollout(config.codex_home, codex_id(11), forked_from=codex_id(10))
    fork.copy_history(parent)  # copied in, re-stamped, parent session_meta included
    fork.turn("use oauth instead", "Switched to OAuth.")
    result = SRC.read(file_of(fork, config))
    assert result.entries[0].text == f"Forked from session {codex_id(10)}"
    assert [e.text for e in result.entries if e.starts_turn] == ["use oauth instead"]
    assert result.meta.session_id == codex_id(11)
    assert result.meta.first_prompt == "use oauth instead"  # its own, not the copied one
    assert not any(e.text == "Here is a design." for e in result.entries)
    # the parent itself still has everything
    assert counts(SRC.read(file_of(parent, config)).entries)["prompts"] == 2


def test_fork_of_a_fork_and_incremental_fork_reads(config: Config) -> None:
    root = CodexRollout(config.codex_home, codex_id(20))
    root.turn("a", "A")
    child = CodexRollout(config.codex_home, codex_id(21), forked_from=codex_id(20))
    child.copy_history(root, restamp=False).turn("b", "B")
    grandchild = CodexRollout(config.codex_home, codex_id(22), forked_from=codex_id(21))
    grandchild.copy_history(child)
    file = file_of(grandchild, config)
    first = SRC.read(file)
    assert [e.role for e in first.entries] == ["system"]  # only the marker: all copied
    assert first.meta.first_prompt is None
    assert first.state["fork_open"] is True
    grandchild.turn("c", "C")
    second = SRC.read(file, offset=first.offset, state=first.state)
    assert [e.text for e in second.entries if e.starts_turn] == ["c"]
    assert second.meta.first_prompt == "c"
    assert second.state["fork_open"] is False
    assert [e.text for e in SRC.read(file_of(child, config)).entries if e.starts_turn] == ["b"]


def test_fork_without_parent_file_keeps_everything(config: Config) -> None:
    donor = CodexRollout(config.codex_home / "elsewhere", codex_id(30))
    donor.turn("lost parent prompt", "answer")
    fork = CodexRollout(config.codex_home, codex_id(31), forked_from=codex_id(30))
    fork.copy_history(donor).turn("mine", "ok")
    entries = SRC.read(file_of(fork, config)).entries
    assert [e.text for e in entries if e.starts_turn] == ["lost parent prompt", "mine"]


def test_spawned_subagent_is_attached_to_its_parent(config: Config) -> None:
    parent = CodexRollout(config.codex_home, codex_id(40))
    parent.turn("delegate research", "Spawned a helper.")
    sub = CodexRollout(config.codex_home, codex_id(41), spawned_by=codex_id(40))
    sub.turn("research task", "findings")
    files = {f.session_id: f for f in SRC.discover(config)}
    assert files[codex_id(41)].kind == SUBAGENT and files[
        codex_id(41)
    ].parent_session_id == codex_id(40)
    assert files[codex_id(40)].kind == MAIN
    entries = SRC.read(files[codex_id(41)]).entries
    assert entries and all(e.is_sidechain for e in entries)


def test_discover_archived_and_classify(config: Config, tmp_path: Path) -> None:
    live = CodexRollout(config.codex_home, codex_id(50))
    old = CodexRollout(config.codex_home, codex_id(51), archived=True)
    (config.codex_home / "sessions" / "notes.txt").write_text("x")
    files = {f.session_id: f for f in SRC.discover(config)}
    assert {k: f.path for k, f in files.items()} == {
        codex_id(50): live.path,
        codex_id(51): old.path,
    }
    assert files[codex_id(50)].project_key == "/home/dev/project"  # projects are keyed by cwd
    assert SRC.classify(tmp_path / "rollout-x.jsonl", config) is None
    assert SRC.classify(config.codex_home / "sessions" / "history.jsonl", config) is None
    other = Config.from_env({"HOME": str(tmp_path), "CODEX_HOME": str(tmp_path / "custom")})
    assert SRC.watch_roots(other)[0] == tmp_path / "custom" / "sessions"


def test_zstd_rollout_is_read_and_missing_zstandard_is_reported(
    config: Config, monkeypatch
) -> None:
    pytest.importorskip("zstandard")
    r = CodexRollout(config.codex_home, codex_id(60))
    r.turn("compressed prompt", "compressed answer")
    plain = SRC.read(file_of(r, config)).entries
    r.compress()
    file = file_of(r, config)
    assert file.path.name.endswith(".jsonl.zst")
    result = SRC.read(file)
    assert (
        result.error is None and result.entries == plain and result.offset == r.path.stat().st_size
    )
    unchanged = SRC.read(file, offset=result.offset, state=result.state)
    assert unchanged.entries == [] and unchanged.replace is False
    assert any(f.path == r.path for f in SRC.discover(config))
    monkeypatch.setitem(sys.modules, "zstandard", None)
    missing = SRC.read(file)
    assert missing.entries == [] and missing.error and "zstandard" in missing.error


def test_unreadable_or_shrunk_files_never_raise(config: Config, tmp_path: Path) -> None:
    gone = SRC.read(SourceFile(path=tmp_path / "rollout-nope.jsonl", agent="codex"))
    assert gone.error and gone.entries == []
    r = CodexRollout(config.codex_home, codex_id(70))
    r.turn("x", "y")
    file = file_of(r, config)
    first = SRC.read(file)
    shutil.copy(r.path, tmp_path / "backup")
    r.path.write_text("")  # rewritten shorter than the stored offset: start over
    CodexRollout(config.codex_home, codex_id(70)).turn("fresh", "start")
    again = SRC.read(file, offset=first.offset * 10, state=first.state)
    assert again.replace is True and [e.text for e in again.entries if e.starts_turn] == ["fresh"]
