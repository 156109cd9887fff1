"""Gemini CLI recordings: the real samples in ../shared/transcripts and builder-made files."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from core.config import Config
from core.fixtures.gemini import GeminiChat
from core.model import Entry
from core.sources.base import MAIN, SUBAGENT, SourceFile
from core.sources.gemini import GeminiSource

SHARED = Path(__file__).resolve().parents[2] / "shared" / "transcripts"
SRC = GeminiSource()
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/transcripts not present")


def counts(entries: list[Entry]) -> dict[str, int]:
    c = Counter(f"{e.role}/{e.type}" for e in entries)
    c["prompts"] = sum(e.starts_turn for e in entries)
    return dict(c)


# (prompts, tool calls, tool results, thinking, assistant texts, system notes) per file,
# verified by reading the files.
REAL = {
    "VibeCodingTracker/at-7acc4bc/tests/fixtures/sessions/gemini.jsonl": (2, 12, 12, 5, 2, 2),
    "VibeCodingTracker/at-894772f/examples/test_conversation_gemini.json": (1, 7, 7, 3, 1, 0),
    "VibeCodingTracker/at-b36a8d3/examples/test_conversation_gemini.json": (1, 0, 0, 17, 18, 0),
    "VibeCodingTracker/at-f1f04cc/examples/test_conversation_gemini.json": (1, 0, 0, 13, 13, 0),
    "agent-sessions/Resources/Fixtures/stage0/agents/gemini/small.json": (1, 0, 0, 1, 1, 0),
    "agent-sessions/Resources/Fixtures/stage0/agents/gemini/jsonl_v040.jsonl": (1, 1, 1, 0, 1, 0),
}


@needs_shared
@pytest.mark.parametrize("rel", sorted(REAL))
def test_real_recordings_read_and_pin_counts(rel: str) -> None:
    path = SHARED / rel
    result = SRC.read(SourceFile(path=path, agent="gemini"))
    assert result.error is None and result.skipped == 0 and result.replace is True
    assert result.offset == path.stat().st_size
    c = counts(result.entries)
    prompts, calls, outputs, thinking, texts, system = REAL[rel]
    assert (c.get("prompts", 0), c.get("assistant/tool_use", 0), c.get("tool/tool_result", 0)) == (
        prompts,
        calls,
        outputs,
    )
    assert (c.get("assistant/thinking", 0), c.get("assistant/text", 0)) == (thinking, texts)
    assert c.get("system/text", 0) == system
    assert result.meta.session_id and result.meta.first_timestamp


@needs_shared
def test_real_jsonl_upserts_slash_command_and_auto_continue() -> None:
    result = SRC.read(SourceFile(path=SHARED / REAL_JSONL, agent="gemini"))
    assert result.meta.session_id == "0ab84937-9fe7-4284-986a-33c832af0b6a"
    prompts = [e for e in result.entries if e.starts_turn]
    assert [p.text for p in prompts] == [
        "/init",
        "幫我做一個小修改 請幫我將上面確保執行時要透過 uv run 來執行 避免環境有問題",
    ]
    assert [p.entry_index for p in prompts] == [3, 21]
    system = [e.text for e in result.entries if e.role == "system"]
    assert system == [
        "Empty GEMINI.md created. Now analyzing the project to populate it.",
        "Request cancelled.",
    ]
    assert not any("Please continue" in e.text for e in result.entries)  # the CLI's own, dropped
    calls = [e for e in result.entries if e.type == "tool_use"]
    assert (
        len({c.uuid for c in calls}) == 12
    )  # each call once, though its message was written twice
    read_file = next(c for c in calls if c.tool_name == "read_file")
    assert read_file.entry_index == 7  # the line of the upsert in effect
    assert result.meta.last_timestamp == "2026-04-23T12:58:35.591Z"  # from the final $set


REAL_JSONL = "VibeCodingTracker/at-7acc4bc/tests/fixtures/sessions/gemini.jsonl"


# --- builder-made files ---------------------------------------------------------------


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return Config.from_env({"HOME": str(tmp_path)})


def read(chat: GeminiChat, config: Config):
    file = SRC.classify(chat.path, config)
    assert file is not None
    return SRC.read(file)


def test_upsert_keeps_first_position_and_latest_content(config: Config) -> None:
    chat = GeminiChat(config.gemini_home)
    chat.user("list the files")
    running = chat.tool("run_shell_command", {"command": "ls"}, None, call_id="c1")
    answer = chat.gemini("", thoughts=["Plan: list files"], tools=[running])
    chat.user("thanks")
    done = chat.tool("run_shell_command", {"command": "ls"}, "a.txt", call_id="c1")
    chat.gemini("Here they are.", thoughts=["Plan: list files"], tools=[done], message_id=answer)
    result = read(chat, config)
    assert [(e.role, e.type) for e in result.entries] == [
        ("user", "text"),
        ("assistant", "thinking"),
        ("assistant", "text"),
        ("assistant", "tool_use"),
        ("tool", "tool_result"),
        ("user", "text"),
    ]
    use, output = result.entries[3], result.entries[4]
    assert (use.tool_name, use.tool_input, output.text, output.parent_uuid) == (
        "run_shell_command",
        {"command": "ls"},
        "a.txt",
        "c1",
    )
    assert use.entry_index == 7  # header, user, $set, gemini, $set, user, $set, upsert
    lines = chat.path.read_text().splitlines()
    assert json.loads(lines[use.entry_index])["id"] == answer


def test_set_updates_metadata(config: Config) -> None:
    chat = GeminiChat(config.gemini_home, directories=["/work/app"])
    chat.user("hi")
    chat.set(summary="Greeting the model", lastUpdated="2026-04-23T13:00:00.000Z")
    meta = read(chat, config).meta
    assert meta.title == "Greeting the model"
    assert meta.last_timestamp == "2026-04-23T13:00:00.000Z"
    assert meta.cwd == "/work/app" and meta.session_id == chat.session_id


def test_rewind_truncates_from_the_target(config: Config) -> None:
    chat = GeminiChat(config.gemini_home)
    chat.user("first")
    chat.gemini("one")
    second = chat.user("second")
    chat.gemini("two")
    chat.rewind(second)
    chat.user("second, edited")
    result = read(chat, config)
    assert [e.text for e in result.entries] == ["first", "one", "second, edited"]
    assert result.replace is True
    chat.write(json.dumps({"$rewindTo": "no-such-id"}) + "\n")
    assert read(chat, config).entries == []  # unknown target clears, as gemini-cli does


def test_info_and_auto_continue_are_not_prompts(config: Config) -> None:
    chat = GeminiChat(config.gemini_home)
    chat.info("Empty GEMINI.md created.")
    chat.user("You are an AI agent that analyzes the directory ...", display="/init")
    chat.gemini("Working.", tools=[chat.tool("update_topic", {"summary": "x"}, "ok", call_id="t1")])
    chat.auto_continue("t1", "update_topic", "ok")
    entries = read(chat, config).entries
    assert [e.text for e in entries if e.starts_turn] == ["/init"]
    assert [e.text for e in entries if e.role == "system"] == ["Empty GEMINI.md created."]
    assert not any(e.text == "System: Please continue." for e in entries)


def test_legacy_json_is_rewritten_whole_and_indexed_by_message(config: Config) -> None:
    chat = GeminiChat(config.gemini_home, legacy=True)
    chat.user("legacy prompt", parts=False)
    chat.gemini("legacy answer", thoughts=["Thinking: hard"])
    result = read(chat, config)
    assert result.replace is True and result.offset == chat.path.stat().st_size
    assert [(e.entry_index, e.type) for e in result.entries] == [
        (0, "text"),
        (1, "thinking"),
        (1, "text"),
    ]
    assert result.entries[1].text == "Thinking: Thinking: hard"
    chat.path.write_text(chat.path.read_text()[:-20])  # caught mid-rewrite
    broken = read(chat, config)
    assert broken.error and broken.entries == [] and broken.offset == 0


def test_migrated_legacy_json_is_skipped_for_its_jsonl(config: Config) -> None:
    legacy = GeminiChat(config.gemini_home, legacy=True)
    legacy.user("old")
    migrated = legacy.path.with_suffix(".jsonl")
    migrated.write_text("")
    assert SRC.classify(legacy.path, config) is None
    assert [f.path for f in SRC.discover(config)] == [migrated]


def test_malformed_lines_and_partial_tail(config: Config) -> None:
    chat = GeminiChat(config.gemini_home)
    chat.user("ok")
    chat.write("{broken\n[1,2]\n\n")
    chat.gemini("fine")
    size = chat.path.stat().st_size
    chat.write('{"id":"late","type":"user","content":"half')
    result = read(chat, config)
    assert result.skipped == 2 and result.offset == size
    assert [e.text for e in result.entries] == ["ok", "fine"]
    chat.write('"}\n')
    assert [e.text for e in read(chat, config).entries] == ["ok", "fine", "half"]


def test_discover_main_and_subagent_files(config: Config) -> None:
    main = GeminiChat(
        config.gemini_home, project="site", session_id="aaaaaaaa-1111-4000-8000-000000000000"
    )
    sub = GeminiChat(
        config.gemini_home,
        project="site",
        session_id="bbbbbbbb-2222-4000-8000-000000000000",
        parent_session_id=main.session_id,
    )
    sub.user("delegated task")
    files = {f.path: f for f in SRC.discover(config)}
    assert files[main.path].kind == MAIN and files[main.path].project_key == "site"
    assert files[main.path].session_id is None  # read from the header: the name holds 8 chars only
    assert files[sub.path].kind == SUBAGENT and files[sub.path].parent_session_id == main.session_id
    entries = SRC.read(files[sub.path]).entries
    assert entries and all(e.is_sidechain for e in entries)
    assert SRC.classify(config.gemini_home / "tmp" / "site" / "logs.json", config) is None


def test_cwd_from_project_root_marker_or_registry(config: Config) -> None:
    chat = GeminiChat(config.gemini_home, project="webapp", project_root="/home/dev/webapp")
    chat.user("x")
    assert read(chat, config).meta.cwd == "/home/dev/webapp"
    other = GeminiChat(config.gemini_home, project="api", project_root=None)
    other.user("y")
    assert read(other, config).meta.cwd is None
    (config.gemini_home / "projects.json").write_text(json.dumps({"projects": {"/srv/api": "api"}}))
    assert read(other, config).meta.cwd == "/srv/api"


def test_set_messages_snapshot_only_without_message_lines(config: Config) -> None:
    chat = GeminiChat(config.gemini_home)
    chat.write(
        json.dumps(
            {"$set": {"messages": [{"id": "s1", "type": "user", "content": "from snapshot"}]}}
        )
        + "\n"
    )
    assert [e.text for e in read(chat, config).entries] == ["from snapshot"]
    chat.user("a real line")
    assert [e.text for e in read(chat, config).entries] == ["a real line"]


def test_tool_error_and_cancelled_calls(config: Config) -> None:
    chat = GeminiChat(config.gemini_home)
    chat.user("go")
    failed = chat.tool("read_file", {"file_path": "x"}, "File not found: x", status="error")
    cancelled = chat.tool("write_file", {"file_path": "y"}, None)
    cancelled["status"] = "cancelled"
    chat.gemini("", tools=[failed, cancelled])
    entries = read(chat, config).entries
    assert [(e.type, e.text) for e in entries if e.type == "tool_result"] == [
        ("tool_result", "File not found: x"),
        ("tool_result", "[cancelled]"),
    ]
