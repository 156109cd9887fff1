"""The Gemini adapter (``core/sources/gemini.py``) in-process: messages fed straight
to ``_Builder``, lines to ``replay_jsonl``, a legacy chat to ``_decode_whole``, the
helpers, and ``GeminiSource``'s classify/read/meta on small files, with the exact
entries, metadata, usage and skips they give back.

tests/test_source_gemini.py checks the same end to end (builder-made chats and the
real samples); these see each rule on its own, so that a mutation tool sees them
(bench/MUTATION.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config import Config
from core.model import Entry, FileMeta, Usage
from core.sources import gemini as gemini_mod
from core.sources.base import MAIN, SUBAGENT, SourceFile
from core.sources.gemini import (
    AGENT,
    GeminiSource,
    _Builder,
    _decode_whole,
    _only_function_responses,
    _parts,
    _record_shape,
    _response_text,
    bound,
    parts_text,
    replay_jsonl,
)
from core.sources.jsonl import (
    INVALID_JSON,
    INVALID_UTF8,
    NOT_OBJECT,
    TOO_DEEP,
    UNREADABLE,
    WRONG_SHAPE,
    Skips,
)
from core.sources.tool_text import bounded

TS = "2026-11-01T09:00:00.000Z"
TS2 = "2026-11-01T09:00:05.000Z"
SRC = GeminiSource()
LONG = "".join(f"{i:05d} " for i in range(3000))  # 18000 characters, every cut visible


def E(role: str, type_: str, text: str, index: int = 0, **kw) -> Entry:
    return Entry(role=role, type=type_, text=text, timestamp=kw.pop("timestamp", TS), entry_index=index, **kw)


def build(*msgs: dict, full: bool = False, sidechain: bool = False, start: int = 0) -> _Builder:
    builder = _Builder(full, sidechain)
    for i, msg in enumerate(msgs):
        builder.message(msg, start + i)
    return builder


def fr(call_id, name, response) -> dict:
    return {"functionResponse": {"id": call_id, "name": name, "response": response}}


# --- helpers ------------------------------------------------------------------------------


def test_bound_keeps_short_or_full_text_and_cuts_head_and_tail():
    assert bound("short", False) == "short"
    assert bound(LONG, True) == LONG
    assert bound(LONG[:4000], False) == LONG[:4000]
    assert bound(LONG, False) == bounded(LONG, 3000, 1000)
    assert bound(LONG, False) != LONG
    assert bound(LONG, False, limit=1000) == bounded(LONG, 750, 250)
    assert bound(LONG, False, limit=1000).startswith(LONG[:750] + "\n")
    assert bound(LONG, False, limit=1000).endswith("\n" + LONG[-250:])


def test_parts():
    assert _parts(None) == []
    assert _parts([1, 2]) == [1, 2]
    assert _parts("x") == ["x"]
    assert _parts({"a": 1}) == [{"a": 1}]
    assert _parts([]) == []


def test_parts_text():
    assert parts_text(None) == ""
    assert parts_text("plain") == "plain"
    assert parts_text(["a", {"text": "b"}, "", {"text": ""}, 3, None, {"other": 1}]) == "a\nb"
    assert parts_text({"text": "one"}) == "one"
    assert parts_text([{"text": "hidden", "thought": True}, {"text": "shown", "thought": False}]) == "shown"
    assert parts_text([{"text": 5}]) == ""
    assert parts_text({"inlineData": {"mimeType": "image/png"}}) == "[image]"
    assert parts_text({"inlineData": {"mimeType": "application/pdf"}}) == "[file]"
    assert parts_text({"fileData": {"mimeType": "IMAGE/JPEG"}}) == "[image]"
    assert parts_text({"fileData": {"fileUri": "gs://b/doc.txt"}}) == "[file]"
    assert parts_text([{"text": "see"}, {"fileData": {"fileUri": "x"}}]) == "see\n[file]"


def test_only_function_responses():
    assert _only_function_responses(None) is False
    assert _only_function_responses([]) is False
    assert _only_function_responses([fr("c", "t", {})]) is True
    assert _only_function_responses(fr("c", "t", {})) is True
    assert _only_function_responses([fr("c", "t", {}), fr("d", "u", {})]) is True
    assert _only_function_responses([fr("c", "t", {}), {"text": "x"}]) is False
    assert _only_function_responses(["functionResponse"]) is False
    assert _only_function_responses("text") is False


def test_response_text():
    assert _response_text(None) == ""
    assert _response_text("plain") == "plain"
    assert _response_text(42) == "42"
    assert _response_text([fr("c", "t", {"output": "out", "error": "err"})]) == "out"
    assert _response_text([fr("c", "t", {"error": "err"})]) == "err"
    assert _response_text([fr("c", "t", {"other": [1, "x"]})]) == '{"other":[1,"x"]}'
    assert _response_text([fr("c", "t", {"output": {"n": 1}})]) == '{"n":1}'
    assert _response_text([fr("c", "t", {"output": 7})]) == "7"
    assert _response_text([fr("c", "t", {"output": ""})]) == ""
    assert _response_text([fr("c", "t", None)]) == ""
    assert _response_text([fr("c", "t", "body text")]) == "body text"
    assert _response_text([fr("c", "t", 12)]) == "12"
    assert _response_text([{"functionResponse": "odd", "text": "fallback"}]) == "fallback"
    assert _response_text([{"text": "t1"}, {"text": 3}, {"other": 1}, "s", {"text": "t2"}]) == "t1\ns\nt2"
    assert _response_text([fr("a", "t", {"output": "x"}), fr("b", "t", {"output": "y"})]) == "x\ny"


# --- _Builder: messages to entries ---------------------------------------------------------


def test_user_prompt_display_first_prompt_and_sidechain():
    b = build(
        {"id": "u1", "type": "user", "timestamp": TS, "content": [{"text": "expanded template"}],
         "displayContent": [{"text": "/init"}]},
        {"id": "u2", "type": "user", "timestamp": "2026-11-01T11:00:05+02:00", "content": "second"},
        sidechain=True,
    )
    assert b.entries == [
        E("user", "text", "/init", 0, uuid="u1", starts_turn=True, is_sidechain=True),
        E("user", "text", "second", 1, uuid="u2", starts_turn=True, is_sidechain=True, timestamp=TS2),
    ]
    assert b.first_prompt == "/init"
    assert b.full is False and b.sidechain is True and b.usage == []


def test_user_display_empty_falls_back_to_content_and_first_prompt_is_cut():
    b = build(
        {"id": 5, "type": "user", "content": ""},
        {"type": "user", "timestamp": "bad", "content": "x" * 600, "displayContent": ""},
        {"type": "user", "content": "later"},
    )
    assert b.entries == [
        E("user", "text", "", 0, timestamp=None, starts_turn=True),
        E("user", "text", "x" * 600, 1, timestamp=None, starts_turn=True),
        E("user", "text", "later", 2, timestamp=None, starts_turn=True),
    ]
    assert b.first_prompt == "x" * 500


def test_user_function_responses_become_tool_results():
    b = build(
        {"id": "u1", "type": "user", "timestamp": TS,
         "content": [fr("c1", "read_file", {"output": "body"}), fr("c2", "ls", {"error": "denied"}),
                     {"functionResponse": "odd"}]},
        {"id": "u2", "type": "user", "timestamp": TS, "content": [fr("c3", "cat", {"output": LONG})]},
        {"id": "u3", "type": "user", "timestamp": TS, "content": "typed", "displayContent": [fr("c4", "x", {})]},
    )
    assert b.entries == [
        E("tool", "tool_result", "body", 0, parent_uuid="c1", tool_name="read_file"),
        E("tool", "tool_result", "denied", 0, parent_uuid="c2", tool_name="ls"),
        E("tool", "tool_result", "", 0),
        E("tool", "tool_result", bound(LONG, False), 1, parent_uuid="c3", tool_name="cat"),
    ]
    assert b.first_prompt is None
    full = build({"type": "user", "timestamp": TS, "content": [fr("c3", "cat", {"output": LONG})]}, full=True)
    assert full.entries == [E("tool", "tool_result", LONG, 0, parent_uuid="c3", tool_name="cat")]


def test_gemini_message_thoughts_text_tools_and_usage():
    tokens = {"input": 100, "output": 10, "cached": 30, "thoughts": 5, "tool": 2}
    b = build(
        {"id": "g1", "type": "gemini", "timestamp": TS, "model": "gemini-3-pro", "tokens": tokens,
         "thoughts": [{"subject": "Plan", "description": "list files"}, "junk", {"subject": "", "description": "only"},
                      {"subject": "Sub", "description": 3}, {}],
         "content": "Here.",
         "toolCalls": [{"id": "c1", "name": "ls", "args": {"dir": "."}, "status": "success",
                        "result": [fr("c1", "ls", {"output": "a.txt"})]}, "junk"]},
    )
    assert b.entries == [
        E("assistant", "thinking", "Plan: list files\n\nonly\n\nSub", 0, uuid="g1"),
        E("assistant", "text", "Here.", 0, uuid="g1"),
        E("assistant", "tool_use", '{"dir":"."}', 0, uuid="c1", tool_name="ls", tool_input={"dir": "."}),
        E("tool", "tool_result", "a.txt", 0, parent_uuid="c1", tool_name="ls"),
    ]
    assert b.usage == [
        Usage(key="gemini:g1", model="gemini-3-pro", timestamp=TS, uuid="g1", input_tokens=72,
              output_tokens=15, cache_read_tokens=30)
    ]
    assert b.first_prompt is None


def test_model_and_assistant_types_are_answers_and_blank_thoughts_give_none():
    b = build(
        {"type": "model", "timestamp": TS, "content": [{"text": "m"}], "thoughts": [{}, {"subject": ""}]},
        {"id": "a", "type": "assistant", "timestamp": TS, "content": "", "tokens": {"input": 1}},
        {"type": "gemini", "timestamp": TS, "thoughts": [{}, {"description": "d"}], "tokens": "n/a"},
    )
    assert b.entries == [
        E("assistant", "text", "m", 0),
        E("assistant", "thinking", "d", 2),
    ]
    assert b.usage == [Usage(key="gemini:a", timestamp=TS, uuid="a", input_tokens=1)]


def test_system_and_unknown_types_are_notes():
    b = build(
        {"id": "i1", "type": "info", "timestamp": TS, "content": "Note."},
        {"type": "error", "timestamp": TS, "content": [{"text": "Boom"}]},
        {"type": "warning", "content": ""},
        {"type": None, "content": "untyped"},
        {"type": "gemini_cli_extension", "content": "other"},
    )
    assert b.entries == [
        E("system", "text", "Note.", 0, uuid="i1"),
        E("system", "text", "Boom", 1),
        E("system", "text", "untyped", 3, timestamp=None),
        E("system", "text", "other", 4, timestamp=None),
    ]


def test_tool_calls_inputs_times_outputs_and_statuses():
    calls = [
        {"id": 9, "name": 3, "args": [1, 2], "timestamp": TS2, "status": "executing"},
        {"id": "c2", "name": "edit", "timestamp": "bad", "status": "error"},
        {"id": "c3", "name": "w", "args": {"p": 1}, "status": "cancelled", "resultDisplay": {"diff": 1}},
        {"id": "c4", "name": "r", "args": None, "status": "success"},
        {"id": "c5", "name": "g", "args": "s", "resultDisplay": "shown"},
        {"id": "c6", "name": "h", "args": {}, "result": [fr("c6", "h", {"output": "res"})], "resultDisplay": "disp",
         "status": "error"},
        {"id": "c7", "name": "big", "args": {"t": LONG}, "result": LONG},
    ]
    b = build({"id": "g", "type": "gemini", "timestamp": TS, "toolCalls": calls})
    big_raw = json.dumps({"t": LONG}, separators=(",", ":"))
    assert b.entries == [
        E("assistant", "tool_use", "[1,2]", 0, timestamp=TS2),
        E("assistant", "tool_use", "", 0, uuid="c2", tool_name="edit"),
        E("tool", "tool_result", "[error]", 0, parent_uuid="c2", tool_name="edit"),
        E("assistant", "tool_use", '{"p":1}', 0, uuid="c3", tool_name="w", tool_input={"p": 1}),
        E("tool", "tool_result", "[cancelled]", 0, parent_uuid="c3", tool_name="w"),
        E("assistant", "tool_use", "", 0, uuid="c4", tool_name="r"),
        E("tool", "tool_result", "", 0, parent_uuid="c4", tool_name="r"),
        E("assistant", "tool_use", '"s"', 0, uuid="c5", tool_name="g"),
        E("tool", "tool_result", "shown", 0, parent_uuid="c5", tool_name="g"),
        E("assistant", "tool_use", "{}", 0, uuid="c6", tool_name="h", tool_input={}),
        E("tool", "tool_result", "res", 0, parent_uuid="c6", tool_name="h"),
        E("assistant", "tool_use", bound(big_raw, False), 0, uuid="c7", tool_name="big", tool_input={"t": LONG}),
        E("tool", "tool_result", bound(LONG, False), 0, parent_uuid="c7", tool_name="big"),
    ]
    single = build({"type": "gemini", "timestamp": TS, "toolCalls": {"id": "c", "name": "n", "args": {"t": LONG},
                                                                     "result": LONG}}, full=True)
    assert single.entries == [
        E("assistant", "tool_use", big_raw, 0, uuid="c", tool_name="n", tool_input={"t": LONG}),
        E("tool", "tool_result", LONG, 0, parent_uuid="c", tool_name="n"),
    ]


# --- the record shapes and the .jsonl replay -----------------------------------------------


def test_record_shape():
    assert _record_shape({"$rewindTo": "m1"}) is True
    assert _record_shape({"$rewindTo": 3, "id": "x"}) is False
    assert _record_shape({"$rewindTo": "m1", "id": 3}) is True
    assert _record_shape({"id": "m1"}) is True
    assert _record_shape({"id": "m1", "type": None}) is True
    assert _record_shape({"id": "m1", "type": "user", "$set": 1}) is True
    assert _record_shape({"id": 1, "type": "user"}) is False
    assert _record_shape({"id": "m1", "type": ["user"]}) is False
    assert _record_shape({"$set": {}}) is True
    assert _record_shape({"$set": [], "sessionId": "s"}) is False
    assert _record_shape({"$set": {}, "sessionId": 1}) is True
    assert _record_shape({"sessionId": "s"}) is True
    assert _record_shape({"sessionId": None}) is False
    assert _record_shape({"kind": "unknown"}) is True


def lines(*recs) -> list[bytes]:
    return [r if isinstance(r, bytes) else json.dumps(r).encode() for r in recs]


def test_replay_upserts_sets_and_skips():
    skips = Skips({"earlier": 1})
    meta, resolved, skipped = replay_jsonl(
        lines(
            {"sessionId": "s1", "startTime": TS, "messages": ["dropped"]},
            {"id": "m1", "type": "user", "content": "a"},
            b"   ",
            {"id": "m2", "type": "gemini", "content": "b"},
            {"id": "m1", "type": "user", "content": "a2"},
            {"$set": {"summary": "T", "messages": "not a list"}},
            b"{broken",
            b"[1]",
            {"id": 4},
            {"unknown": True},
            {"$set": {"lastUpdated": TS2}},
            b"",
        ),
        skips,
    )
    assert meta == {"sessionId": "s1", "startTime": TS, "summary": "T", "lastUpdated": TS2}
    assert resolved == [
        (4, {"id": "m1", "type": "user", "content": "a2"}),
        (3, {"id": "m2", "type": "gemini", "content": "b"}),
    ]
    assert skipped == 4
    assert skips.counts == {"earlier": 1, INVALID_JSON: 1, NOT_OBJECT: 1, WRONG_SHAPE: 1}


def test_replay_without_skips_given_counts_its_own():
    assert replay_jsonl(lines(b"{x", {"id": 1}, {"$rewindTo": None})) == ({}, [], 3)
    assert replay_jsonl([]) == ({}, [], 0)


def test_replay_rewind_cuts_from_its_target_or_clears():
    base = [{"id": f"m{i}", "type": "user"} for i in range(4)]
    _, resolved, _ = replay_jsonl(lines(*base, {"$rewindTo": "m2"}, {"id": "m9", "type": "user"}))
    assert resolved == [(0, base[0]), (1, base[1]), (5, {"id": "m9", "type": "user"})]
    _, resolved, _ = replay_jsonl(lines(*base, {"$rewindTo": "m0"}))
    assert resolved == []
    _, resolved, _ = replay_jsonl(lines(*base, {"$rewindTo": "m3"}))
    assert resolved == [(0, base[0]), (1, base[1]), (2, base[2])]
    _, resolved, _ = replay_jsonl(lines(*base, {"$rewindTo": "nope"}, {"id": "m1", "type": "user", "v": 2}))
    assert resolved == [(5, {"id": "m1", "type": "user", "v": 2})]


def test_replay_snapshot_only_without_message_lines():
    snap = {"$set": {"messages": [{"id": "s1", "type": "user"}, "junk", {"id": "s2"}], "summary": "S"}}
    meta, resolved, skipped = replay_jsonl(lines({"sessionId": "s"}, snap))
    assert meta == {"sessionId": "s", "summary": "S"}
    assert resolved == [(1, {"id": "s1", "type": "user"}), (1, {"id": "s2"})]
    assert skipped == 0
    later = {"$set": {"messages": [{"id": "s3"}]}}
    assert replay_jsonl(lines(snap, later))[1] == [(1, {"id": "s3"})]
    assert replay_jsonl(lines(snap, {"id": "m", "type": "user"}))[1] == [(1, {"id": "m", "type": "user"})]
    # a rewind that clears the chat leaves the snapshot
    assert replay_jsonl(lines(snap, {"id": "m"}, {"$rewindTo": "m"}))[1] == [
        (0, {"id": "s1", "type": "user"}), (0, {"id": "s2"})]


# --- a legacy chat read whole --------------------------------------------------------------


def test_decode_whole():
    skips = Skips()
    assert _decode_whole(b'{"a": 1}', skips) == ({"a": 1}, None)
    assert _decode_whole(b'\xef\xbb\xbf{"a": 1}', skips) == ({"a": 1}, None)
    assert _decode_whole(b'{"a": "x\\ud83d"}', skips) == ({"a": "x\ufffd"}, None)
    assert skips.counts == {}
    assert _decode_whole(b'{"a": "bad \xc3 byte"}', skips) == ({"a": "bad \ufffd byte"}, None)
    assert skips.counts == {INVALID_UTF8: 1}
    assert _decode_whole(b'{"a": ', skips) == (None, f"{INVALID_JSON} (the whole chat is one record)")
    assert _decode_whole(b'\xef\xbb\xbf{"a": ', skips) == (None, f"{INVALID_JSON} (the whole chat is one record)")
    assert _decode_whole(b"[1]", skips) == (None, "not a chat record")
    deep = b'{"a": ' + b"[" * 200 + b"]" * 200 + b"}"
    assert _decode_whole(deep, skips) == (None, f"{TOO_DEEP} (the whole chat is one record)")
    deeper = b"[" * 5000 + b"]" * 5000
    assert _decode_whole(deeper, skips) == (None, f"{TOO_DEEP} (the whole chat is one record)")
    assert skips.counts == {INVALID_UTF8: 1}


# --- GeminiSource: classify, discover, read, meta -------------------------------------------


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return Config.from_env({"HOME": str(tmp_path)})


def chats(config: Config, project: str = "proj") -> Path:
    path = config.gemini_home / "tmp" / project / "chats"
    path.mkdir(parents=True, exist_ok=True)
    return path


def test_source_constants_and_roots(config: Config):
    assert AGENT == "gemini" and SRC.agent == "gemini" and SRC.append_only is False
    assert SRC.watch_roots(config) == [config.gemini_home / "tmp"]


def test_classify(config: Config):
    d = chats(config)
    root = config.gemini_home / "tmp"
    assert SRC.classify(d / "session-a.jsonl", config) == SourceFile(
        path=d / "session-a.jsonl", agent="gemini", kind=MAIN, project_key="proj", order_key="session-a.jsonl")
    assert SRC.classify(d / "session-b.json", config) == SourceFile(
        path=d / "session-b.json", agent="gemini", kind=MAIN, project_key="proj", order_key="session-b.json")
    sub = d / "parent-id" / "child-id.jsonl"
    assert SRC.classify(sub, config) == SourceFile(
        path=sub, agent="gemini", kind=SUBAGENT, project_key="proj", session_id="child-id",
        parent_session_id="parent-id", order_key="child-id.jsonl")
    (d / "session-c.jsonl").write_text("")
    assert SRC.classify(d / "session-c.json", config) is None
    assert SRC.classify(d / "session-d.json", config) is not None
    assert SRC.classify(d / "session-e.txt", config) is None
    assert SRC.classify(d / "logs.json", config) is None
    assert SRC.classify(d / "other.jsonl", config) is None
    assert SRC.classify(root / "proj" / "notes" / "session-a.jsonl", config) is None
    assert SRC.classify(root / "proj" / "notes" / "p" / "c.jsonl", config) is None
    assert SRC.classify(d / "p" / "c.json", config) is None
    assert SRC.classify(d / "p" / "q" / "c.jsonl", config) is None
    assert SRC.classify(root / "session-a.jsonl", config) is None
    assert SRC.classify(config.gemini_home / "elsewhere" / "proj" / "chats" / "session-a.jsonl", config) is None


def test_discover_finds_every_kind_sorted(config: Config):
    d = chats(config, "b-proj")
    e = chats(config, "a-proj")
    for p in (d / "session-2.json", d / "session-1.jsonl", e / "session-9.json", d / "par" / "kid.jsonl",
              d / "notes.json", d / "par" / "kid.json"):
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("")
    (e / "session-8.json").write_text("")
    (e / "session-8.jsonl").write_text("")
    found = list(SRC.discover(config))
    assert [f.path for f in found] == [
        e / "session-8.jsonl", e / "session-9.json", d / "par" / "kid.jsonl", d / "session-1.jsonl",
        d / "session-2.json"]
    assert [f.kind for f in found] == [MAIN, MAIN, SUBAGENT, MAIN, MAIN]


def write_jsonl(path: Path, *recs) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"".join((r if isinstance(r, bytes) else json.dumps(r).encode()) + b"\n" for r in recs))
    return path


def test_read_jsonl_exact(config: Config):
    d = chats(config)
    path = write_jsonl(
        d / "session-x.jsonl",
        {"sessionId": "s-1", "startTime": "2026-11-01T08:00:00.000Z", "lastUpdated": TS, "summary": "Sum",
         "directories": ["/w/app", "/w/other"]},
        {"id": "u1", "type": "user", "timestamp": TS, "content": "hello"},
        b"{bad",
        {"id": "g1", "type": "gemini", "timestamp": TS2, "content": "hi", "tokens": {"input": 3}},
    )
    with path.open("ab") as fh:
        fh.write(b'{"id": "partial"')
    file = SRC.classify(path, config)
    result = SRC.read(file)
    assert result.entries == [
        E("user", "text", "hello", 1, uuid="u1", starts_turn=True),
        E("assistant", "text", "hi", 3, uuid="g1", timestamp=TS2),
    ]
    assert result.meta == FileMeta(session_id="s-1", cwd="/w/app", title="Sum", first_prompt="hello",
                                   first_timestamp="2026-11-01T08:00:00.000Z", last_timestamp=TS2)
    assert result.offset == path.stat().st_size - len(b'{"id": "partial"')
    assert (result.skipped, result.reasons, result.replace, result.state) == (1, {INVALID_JSON: 1}, True, {})
    assert result.usage == [Usage(key="gemini:g1", timestamp=TS2, uuid="g1", input_tokens=3)]
    assert result.error is None
    empty = write_jsonl(d / "session-y.jsonl")
    got = SRC.read(SRC.classify(empty, config))
    assert (got.entries, got.offset, got.skipped, got.meta.session_id) == ([], 0, 0, "session-y")


def test_read_legacy_json_exact(config: Config):
    d = chats(config)
    record = {"sessionId": "L-1", "startTime": TS2, "lastUpdated": "2026-11-01T08:00:00.000Z", "summary": 5,
              "messages": [{"id": "u1", "type": "user", "timestamp": TS, "content": "q"}, "junk", 7,
                           {"id": 3, "type": "user"}, {"id": "g1", "type": "gemini", "timestamp": TS2, "content": "a"}]}
    path = d / "session-l.json"
    path.write_text(json.dumps(record))
    result = SRC.read(SRC.classify(path, config))
    assert result.entries == [
        E("user", "text", "q", 0, uuid="u1", starts_turn=True),
        E("assistant", "text", "a", 4, uuid="g1", timestamp=TS2),
    ]
    assert result.meta == FileMeta(session_id="L-1", title=None,
                                   first_prompt="q", first_timestamp=TS, last_timestamp=TS2)
    assert (result.skipped, result.reasons) == (3, {NOT_OBJECT: 2, WRONG_SHAPE: 1})
    assert result.offset == path.stat().st_size and result.replace is True and result.usage == []
    path.write_text(json.dumps({"sessionId": "L-2", "messages": {"not": "a list"}}))
    result = SRC.read(SRC.classify(path, config))
    assert (result.entries, result.skipped, result.reasons, result.meta.session_id) == ([], 0, {}, "L-2")
    path.write_bytes(b'{"sessionId": "L-3", "messages": [{"id": "u", "type": "user", "content": "b\xc3d"}]}')
    result = SRC.read(SRC.classify(path, config))
    assert [e.text for e in result.entries] == ["b\ufffdd"]
    assert (result.skipped, result.reasons) == (1, {INVALID_UTF8: 1})
    path.write_text("[]")
    result = SRC.read(SRC.classify(path, config))
    assert (result.entries, result.offset, result.error) == ([], 0, "not a chat record")
    assert result.meta == FileMeta(session_id=None)


def test_read_error_on_an_unreadable_file(config: Config):
    d = chats(config)
    for name in ("session-gone.jsonl", "session-gone.json"):
        file = SourceFile(path=d / name, agent="gemini", session_id="given")
        result = SRC.read(file)
        assert result.entries == [] and result.offset == 0 and result.meta == FileMeta(session_id="given")
        assert result.error and "session-gone" in result.error
    sub = SourceFile(path=d / "p" / "kid.jsonl", agent="gemini", kind=SUBAGENT, session_id="kid")
    (d / "p" / "kid.jsonl").mkdir(parents=True)
    assert SRC.read(sub).error


def test_read_subagent_is_sidechain_and_a_failing_message_costs_itself_only(config, monkeypatch):
    d = chats(config)
    path = write_jsonl(
        d / "parent" / "kid.jsonl",
        {"sessionId": "ignored"},
        {"id": "u1", "type": "user", "timestamp": TS, "content": "task"},
        {"id": "g1", "type": "gemini", "timestamp": TS, "content": "boom", "thoughts": [{"subject": "s"}],
         "tokens": {"input": 1}},
        {"id": "g2", "type": "gemini", "timestamp": TS2, "content": "ok"},
    )
    real = gemini_mod.gemini_usage

    def failing(tokens, **kw):
        if tokens is not None:
            raise ValueError("unforeseen")
        return real(tokens, **kw)

    monkeypatch.setattr(gemini_mod, "gemini_usage", failing)
    result = SRC.read(SRC.classify(path, config))
    assert result.entries == [
        E("user", "text", "task", 1, uuid="u1", starts_turn=True, is_sidechain=True),
        E("assistant", "text", "ok", 3, uuid="g2", timestamp=TS2, is_sidechain=True),
    ]
    assert (result.skipped, result.reasons) == (1, {UNREADABLE: 1})
    assert (result.meta.session_id, result.meta.cwd) == ("kid", None)


def test_meta_times_titles_and_session_id(config: Config):
    d = chats(config)
    path = write_jsonl(
        d / "session-m.jsonl",
        {"sessionId": 5, "startTime": "2026-11-01T10:00:00.000Z", "lastUpdated": "2026-11-01T08:00:00.000Z",
         "summary": ["no"]},
        {"id": "i", "type": "info", "content": "untimed"},
        {"id": "u1", "type": "user", "timestamp": TS, "content": "q"},
        {"id": "u2", "type": "user", "timestamp": TS2, "content": "r"},
        {"id": "i2", "type": "info", "content": "untimed too"},
    )
    meta = SRC.read(SRC.classify(path, config)).meta
    assert meta == FileMeta(session_id="session-m", title=None, first_prompt="q", first_timestamp=TS,
                            last_timestamp=TS2)
    path = write_jsonl(d / "session-n.jsonl", {"sessionId": "n", "startTime": "2026-11-01T08:00:00Z",
                                               "lastUpdated": "2026-11-01T10:00:00+00:00"},
                       {"id": "u1", "type": "user", "timestamp": TS, "content": "q"})
    meta = SRC.read(SRC.classify(path, config)).meta
    assert (meta.first_timestamp, meta.last_timestamp) == ("2026-11-01T08:00:00Z", "2026-11-01T10:00:00.000Z")
    path = write_jsonl(d / "session-o.jsonl", {"sessionId": "o", "startTime": "bad"})
    meta = SRC.read(SRC.classify(path, config)).meta
    assert (meta.first_timestamp, meta.last_timestamp, meta.first_prompt) == (None, None, None)


def cwd_of(config: Config, project: str, header: dict, *, sub: bool = False) -> str | None:
    d = chats(config, project)
    path = d / "par" / "kid.jsonl" if sub else d / "session-c.jsonl"
    write_jsonl(path, {"sessionId": "c", **header})
    return SRC.read(SRC.classify(path, config)).meta.cwd


def test_cwd_directories_marker_and_registry(config: Config):
    assert cwd_of(config, "p1", {"directories": ["/a", "/b"]}) == "/a"
    assert cwd_of(config, "p1", {"directories": [3, "/b"]}) is None
    assert cwd_of(config, "p1", {"directories": "/a"}) is None
    assert cwd_of(config, "p1", {"directories": []}) is None
    project = config.gemini_home / "tmp" / "p1"
    (project / ".project_root").write_text("  /home/me/p1 \n", encoding="utf-8")
    assert cwd_of(config, "p1", {"directories": [3]}) == "/home/me/p1"
    assert cwd_of(config, "p1", {}, sub=True) == "/home/me/p1"
    registry = config.gemini_home / "projects.json"
    registry.write_text(json.dumps({"projects": {"/srv/x": "other", "/srv/p1": "p1", "/srv/p2": "p2"}}))
    (project / ".project_root").write_text(" \n", encoding="utf-8")
    assert cwd_of(config, "p1", {}) is None  # an empty marker: no cwd, the registry is not asked
    (project / ".project_root").unlink()
    assert cwd_of(config, "p1", {}) == "/srv/p1"
    assert cwd_of(config, "p1", {}, sub=True) == "/srv/p1"
    (config.gemini_home / "tmp" / "p2" / ".project_root").mkdir(parents=True)  # not a file
    assert cwd_of(config, "p2", {}) == "/srv/p2"
    assert cwd_of(config, "p3", {}) is None
    registry.write_text(json.dumps({"projects": ["/srv/p1"]}))
    assert cwd_of(config, "p1", {}) is None
    registry.write_text(json.dumps(["p1"]))
    assert cwd_of(config, "p1", {}) is None
    registry.write_bytes(b"{broken")
    assert cwd_of(config, "p1", {}) is None
    registry.write_bytes(b'{"projects": {"/srv/\xc3": "p1"}}')
    assert cwd_of(config, "p1", {}) is None
    registry.unlink()
    assert cwd_of(config, "p1", {}) is None


def test_read_bounds_tool_text_unless_full_text(config: Config):
    path = write_jsonl(
        chats(config) / "session-f.jsonl",
        {"sessionId": "f"},
        {"id": "g", "type": "gemini", "timestamp": TS, "toolCalls": [{"id": "c", "name": "cat", "result": LONG}]},
    )
    file = SRC.classify(path, config)
    assert [e.text for e in SRC.read(file).entries] == ["", bound(LONG, False)]
    assert [e.text for e in SRC.read(file, full_text=True).entries] == ["", LONG]


def test_read_legacy_error_keeps_the_files_session_id_and_odd_meta(config: Config):
    path = chats(config) / "session-k.json"
    path.write_text("{broken")
    result = SRC.read(SourceFile(path=path, agent="gemini", session_id="given"))
    assert (result.entries, result.offset) == ([], 0)
    assert result.meta == FileMeta(session_id="given")
    assert result.error == f"{INVALID_JSON} (the whole chat is one record)"
    # a legacy record is its own metadata, unchecked: an id that is no string is not used
    path.write_text(json.dumps({"sessionId": 5, "messages": []}))
    assert SRC.read(SRC.classify(path, config)).meta.session_id == "session-k"


def test_read_legacy_with_a_bom_and_an_invalid_byte(config: Config):
    path = chats(config) / "session-b.json"
    path.write_bytes(b'\xef\xbb\xbf{"sessionId": "b", "messages": [{"id": "u", "type": "user", "content": "x\xc3"}]}')
    result = SRC.read(SRC.classify(path, config))
    assert [e.text for e in result.entries] == ["x\ufffd"]
    assert (result.skipped, result.reasons) == (1, {INVALID_UTF8: 1})


def test_meta_times_are_the_earliest_and_latest_of_header_and_entries(config: Config):
    ts3 = "2026-11-01T09:00:09.000Z"
    path = write_jsonl(
        chats(config) / "session-t.jsonl",
        {"sessionId": "t"},
        {"id": "u1", "type": "user", "timestamp": TS2, "content": "a"},
        {"id": "u2", "type": "user", "timestamp": TS, "content": "b"},
        {"id": "u3", "type": "user", "timestamp": ts3, "content": "c"},
        {"id": "u4", "type": "user", "timestamp": TS2, "content": "d"},
    )
    meta = SRC.read(SRC.classify(path, config)).meta
    # (a message in between counts too: the session's time range is every entry's)
    assert (meta.first_timestamp, meta.last_timestamp) == (TS, ts3)
