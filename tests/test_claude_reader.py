"""``core.sources.claude_reader`` in-process: one file's records fed to the reader, and
the exact entries, metadata, usage, skips and carried state it gives back.

tests/test_claude_parser.py checks the same end to end (files through the adapter and
``Archive``); these feed records straight in, so each rule is seen on its own and a
mutation tool sees it (bench/MUTATION.md).
"""

from __future__ import annotations

import json
from pathlib import Path

from core.model import COMPACTION_TEXT
from core.sources.base import MAIN, SUBAGENT, SourceFile
from core.sources.claude_reader import RECENT_UUIDS, _FileReader, _text_id
from core.sources.claude_records import decode_record
from core.sources.claude_text import bound

TS = "2026-11-01T09:00:00Z"


def line(**record) -> bytes:
    return (json.dumps(record) + "\n").encode()


def user(uuid: str, content, **extra) -> bytes:
    return line(type="user", uuid=uuid, timestamp=extra.pop("timestamp", TS), message={"role": "user", "content": content},
                **extra)  # fmt: skip


def assistant(uuid: str, content, **extra) -> bytes:
    message = {"role": "assistant", "content": content, **extra.pop("message", {})}
    return line(type="assistant", uuid=uuid, timestamp=extra.pop("timestamp", TS), message=message, **extra)


def read(lines: list[bytes], *, kind: str = MAIN, session_id: str | None = "sid", parent: str | None = None,
         state=None, full_text: bool = False, path: str = "/p/file-stem.jsonl"):  # fmt: skip
    reader = _FileReader(SourceFile(Path(path), "claude", kind=kind, session_id=session_id, parent_session_id=parent),
                         state, full_text)  # fmt: skip
    for i, raw in enumerate(lines):
        reader.feed(raw, i)
    return reader.result(123, replace=True, lines=len(lines))


def key(raw: bytes) -> str:
    from core.sources.claude_records import content_digest

    record, _ = decode_record(raw)
    assert record is not None
    return f"{record.uuid}@{content_digest(record.message)}"


def rows(result) -> list[tuple]:
    return [(e.role, e.type, e.text, e.entry_index, e.starts_turn, e.uuid, e.parent_uuid, e.call_id) for e in result.entries]


def test_a_conversation_gives_its_entries_in_order():
    lines = [
        user("u1", "hello there", sessionId="sid-a"),
        assistant("u2", [{"type": "thinking", "thinking": "hmm"}, {"type": "thinking", "thinking": "  "},
                         {"type": "text", "text": "answer"}, {"type": "text", "text": " \n"},
                         {"type": "tool_use", "id": "t1", "name": "Bash", "input": {"command": "ls"}},
                         {"type": "server_tool_use", "id": "", "input": "not a dict"}],
                  parentUuid="u1", isSidechain=True),
        user("u3", [{"type": "tool_result", "tool_use_id": "t1", "content": "out"},
                    {"type": "tool_result", "tool_use_id": "", "content": [{"type": "text", "text": "two"}]}],
             parentUuid="u2"),
        assistant("u4", "plain answer"),
        assistant("u5", "   "),
        line(type="system", uuid="u6", subtype="compact_boundary", timestamp=TS),
        user("u7", "the summary", isCompactSummary=True),
        line(type="system", uuid="u8", subtype="other", timestamp=TS),
        line(type="progress", uuid="u9"),
    ]  # fmt: skip
    result = read(lines)
    assert rows(result) == [
        ("user", "text", "hello there", 0, True, "u1", None, None),
        ("assistant", "thinking", "hmm", 1, False, "u2", "u1", None),
        ("assistant", "text", "answer", 1, False, "u2", "u1", None),
        ("assistant", "tool_use", "Bash: ls", 1, False, "u2", "u1", "t1"),
        ("assistant", "tool_use", "tool", 1, False, "u2", "u1", None),
        ("tool", "tool_result", "out", 2, False, "u3", "u2", "t1"),
        ("tool", "tool_result", "two", 2, False, "u3", "u2", None),
        ("assistant", "text", "plain answer", 3, False, "u4", None, None),
        ("system", "compaction", COMPACTION_TEXT, 5, False, "u6", None, None),
        ("system", "summary", "Compaction summary: the summary", 6, False, "u7", None, None),  # issue 34
    ]  # fmt: skip
    uses = [e for e in result.entries if e.type == "tool_use"]
    assert [(e.tool_name, e.tool_input) for e in uses] == [("Bash", {"command": "ls"}), ("tool", {})]
    assert [e.is_sidechain for e in result.entries] == [False, True, True, True, True, False, False, False, False, False]
    assert all(e.timestamp == TS for e in result.entries)
    assert [e.record_key for e in result.entries][:2] == [key(lines[0]), key(lines[1])]
    assert result.uuids == ["u1", "u2", "u3", "u4", "u5", "u6", "u7", "u8"]
    assert result.record_keys == [key(x) for x in lines[:8]]
    assert (result.offset, result.replace, result.skipped, result.reasons) == (123, True, 0, {})


def test_prompts_shell_output_and_images():
    lines = [
        user("u1", "<bash-stdout>  done\n</bash-stdout><bash-stderr></bash-stderr>"),
        user("u2", "   "),
        user("u3", [{"type": "text", "text": "look at"}, {"type": "image"}, {"type": "document"},
                    {"type": "text", "text": "these"}]),
        user("u4", [{"type": "image"}, {"type": "image"}]),
        user("u5", [{"type": "text", "text": "<bash-stdout>x</bash-stdout><bash-stderr></bash-stderr>"}]),
        user("u6", [{"type": "text", "text": ""}, {"type": "image"}]),
        user("u7", [{"type": "text", "text": "only text"}]),
    ]  # fmt: skip
    assert [(e.role, e.type, e.text, e.starts_turn, e.entry_index) for e in read(lines).entries] == [
        ("tool", "tool_result", "done", False, 0),
        ("user", "text", "look at\n\nthese\n[image] [image]", True, 2),
        ("user", "text", "[image] [image]", True, 3),
        ("tool", "tool_result", "x", False, 4),
        ("user", "text", "[image]", True, 5),
        ("user", "text", "only text", True, 6),
    ]  # fmt: skip


def test_long_outputs_are_bounded_unless_the_full_text_is_read():
    long = "line\n" * 20000
    lines = [user("u1", [{"type": "tool_result", "tool_use_id": "t", "content": long}]),
             user("u2", f"<bash-stdout>{long}</bash-stdout><bash-stderr></bash-stderr>")]  # fmt: skip
    assert [e.text for e in read(lines).entries] == [bound(long), bound(long.strip())]
    assert bound(long) != long
    assert [e.text for e in read(lines, full_text=True).entries] == [long, long.strip()]


def test_metadata_titles_summaries_and_usage():
    lines = [
        line(type="summary", summary="S", leafUuid="u9"),
        line(type="summary", summary=""),
        line(type="summary", summary="no leaf"),
        line(type="ai-title", aiTitle="AI"),
        line(type="custom-title", customTitle="Mine"),
        line(type="ai-title", aiTitle="AI2"),
        user("u1", "p" * 600, sessionId="sid-a", cwd="/w", gitBranch="main", slug="s1", version="2.1",
             timestamp="2026-11-01T09:00:00Z"),
        assistant("u2", "a", sessionId="sid-b", cwd="/other", gitBranch="dev", slug="s2", version="2.2",
                  timestamp="2026-11-01T08:00:00Z", requestId="req1",
                  message={"id": "m1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 5, "output_tokens": 7}}),
        user("u3", "second prompt", sessionId="sid-a", timestamp="2026-11-01T10:00:00Z"),
        user("u4", "copied caveat", isMeta=True, sessionId="sid-c", timestamp="2025-01-01T00:00:00Z"),
        line(type="system", uuid="u5", subtype="other", timestamp="2026-11-01T09:30:00Z"),  # earlier than the last
    ]  # fmt: skip
    result = read(lines, session_id=None)
    meta = result.meta
    assert (meta.session_id, meta.cwd, meta.git_branch, meta.slug, meta.version, meta.title) == (
        "sid-a", "/w", "dev", "s2", "2.2", "Mine")
    assert (meta.first_prompt, meta.first_timestamp, meta.last_timestamp) == (
        "p" * 500, "2026-11-01T08:00:00Z", "2026-11-01T10:00:00Z")  # the caveat's time is another session's
    assert meta.aliases == ("sid-a", "sid-b", "sid-c")
    assert result.summaries == [("u9", "S"), ("", "no leaf")]
    assert result.uuids == ["u1", "u2", "u3", "u5"]  # a meta record's uuid does not link sessions
    assert len(result.record_keys) == 4 and len(result.state["recent"]) == 5
    assert [(u.key, u.model, u.timestamp, u.uuid, u.input_tokens, u.output_tokens) for u in result.usage] == [
        ("claude:m1:req1", "claude-sonnet-4-5", "2026-11-01T08:00:00Z", "u2", 5, 7)]
    assert [e.text for e in result.entries] == ["p" * 600, "a", "second prompt"]
    assert result.state == {"recent": [key(x) for x in lines[6:]], "lines": 11, "meta": {
        "title": "Mine", "custom_title": True, "cwd": "/w", "git_branch": "dev", "slug": "s2", "version": "2.2",
        "first_timestamp": "2026-11-01T08:00:00Z", "last_timestamp": "2026-11-01T10:00:00Z", "first_prompt": "p" * 500,
        "aliases": ["sid-a", "sid-b", "sid-c"]}}  # fmt: skip
    assert read([line(type="ai-title", aiTitle="AI")]).meta.title == "AI"
    assert read([line(type="ai-title", aiTitle="AI"), line(type="custom-title", customTitle="C")]).meta.title == "C"
    assert read([line(type="ai-title", aiTitle="A1"), line(type="ai-title", aiTitle="A2")]).meta.title == "A2"
    assert read([line(type="custom-title", customTitle="C1"), line(type="custom-title", customTitle="C2")]).meta.title == "C2"


def test_usage_comes_from_assistant_records_only():
    usage = {"id": "m1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 5, "output_tokens": 7}}
    lines = [line(type="user", uuid="u1", timestamp=TS, requestId="r", message={"role": "user", "content": "hi", **usage})]
    assert read(lines).usage == []


def test_the_result_says_whether_it_replaces_the_file():
    reader = _FileReader(SourceFile(Path("/p/x.jsonl"), "claude", session_id="sid"), None, False)
    assert reader.result(5, replace=False, lines=0).replace is False


def test_reading_the_full_text_skips_metadata_and_usage():
    lines = [assistant("u2", "a", sessionId="sid-b", cwd="/w", timestamp=TS, requestId="r",
                       message={"id": "m1", "model": "claude-sonnet-4-5", "usage": {"input_tokens": 5}})]  # fmt: skip
    result = read(lines, full_text=True, session_id=None)
    assert (result.meta.cwd, result.meta.first_timestamp, result.meta.aliases, result.usage) == (None, None, (), [])
    assert result.meta.session_id == "file-stem"  # no record said: the file's name
    assert [e.text for e in result.entries] == ["a"]


def test_a_replayed_record_counts_once_in_a_file_and_across_reads():
    first = user("u1", "hello")
    replay = user("u1", "hello", timestamp="2026-11-02T00:00:00Z")
    changed = user("u1", "a different message")  # the same uuid on another message: a writer's bug, both kept
    result = read([first, replay, changed])
    assert [e.text for e in result.entries] == ["hello", "a different message"]
    assert result.uuids == ["u1", "u1"]
    again = read([replay, user("u2", "new")], state=result.state)
    assert [e.text for e in again.entries] == ["new"]
    assert again.state["recent"] == [key(first), key(changed), key(user("u2", "new"))]


def test_the_remembered_keys_are_the_last_sixty_four():
    result = read([user(f"u{i}", f"prompt {i}") for i in range(70)])
    assert RECENT_UUIDS == 64
    assert result.state["recent"] == [key(user(f"u{i}", f"prompt {i}")) for i in range(6, 70)]


def test_state_carries_metadata_and_aliases():
    first = read([user("u1", "hi", sessionId="sid-a", cwd="/w")], session_id=None)
    later = read([user("u2", "more", sessionId="sid-b", cwd="/x")], session_id=None, state=first.state)
    assert (later.meta.session_id, later.meta.cwd, later.meta.aliases) == ("sid-a", "/w", ("sid-a", "sid-b"))
    assert later.meta.first_prompt == "hi"


def test_bad_records_are_skipped_with_their_reason():
    lines = [b"not json\n", b"\n", b"   \n", line(type="user", uuid="u1", timestamp=TS),
             line(type="user", uuid="u2", timestamp=TS, message={"role": "user"}), user("u3", "fine")]  # fmt: skip
    result = read(lines)
    assert [e.text for e in result.entries] == ["fine"]
    assert (result.skipped, result.reasons) == (3, {"invalid JSON": 1, "wrong shape": 2})


def test_a_subagent_file_opens_a_turn_and_takes_its_parents_id():
    lines = [assistant("u1", "working", sessionId="child"), assistant("u2", "done", sessionId="child")]
    result = read(lines, kind=SUBAGENT, session_id="agent-x", parent="parent-sid")
    assert [(e.text, e.starts_turn) for e in result.entries] == [("working", True), ("done", False)]
    assert result.meta.session_id == "parent-sid" and result.state["meta"]["opened"] is True
    assert read(lines, kind=SUBAGENT, session_id="agent-x").meta.session_id == "child"
    assert read([], kind=SUBAGENT, session_id="agent-x").meta.session_id is None
    later = read([assistant("u3", "more")], kind=SUBAGENT, parent="p", state=result.state)
    assert [(e.text, e.starts_turn) for e in later.entries] == [("more", False)]  # opened already
    opened = read([assistant("u1", "working"), user("u2", "go on")], kind=SUBAGENT, parent="p")
    assert [(e.text, e.starts_turn) for e in opened.entries] == [("working", True), ("go on", True)]
    main = read(lines, session_id="main-sid")
    assert main.meta.session_id == "main-sid" and [e.starts_turn for e in main.entries] == [False, False]


def test_text_ids_are_non_empty_strings():
    assert (_text_id("t1"), _text_id(""), _text_id(7), _text_id(None)) == ("t1", None, None, None)


def test_a_record_without_a_uuid_has_no_key():
    result = read([line(type="user", timestamp=TS, message={"role": "user", "content": "no uuid here"})])
    assert [(e.text, e.uuid, e.record_key) for e in result.entries] == [("no uuid here", None, None)]
    assert (result.uuids, result.record_keys, result.state["recent"]) == ([], [], [])
