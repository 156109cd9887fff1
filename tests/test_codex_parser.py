"""The Codex adapter's parsing modules in-process: records fed straight to
``codex_parser._Parser``, lines to ``codex_records._records``, and the helpers of
``codex_records`` and ``codex_session``, with the exact entries, metadata, usage,
skips and state they give back.

tests/test_source_codex.py checks the same end to end (rollouts through the adapter);
these see each rule on its own, so that a mutation tool sees them (bench/MUTATION.md).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from core.model import COMPACTION_TEXT, Entry, FileMeta, Usage
from core.sources import codex_records as records_mod
from core.sources.base import SourceFile
from core.sources.codex_parser import _MAX_CALLS, _Parser
from core.sources.codex_records import (
    _decompress,
    _envelope,
    _json_input,
    _kinds,
    _records,
    _State,
    _well_shaped,
    _zstd,
    bound,
    is_machinery,
    output_text,
    parts_text,
    strip_ide_context,
)
from core.sources.codex_session import (
    _meta,
    locate_rollout,
    parent_of,
    session_id_from_name,
    spawn_parent,
)
from core.sources.jsonl import INVALID_JSON, NOT_OBJECT, UNREADABLE, WRONG_SHAPE, Skips
from core.sources.tool_text import bounded

TS = "2026-11-01T09:00:00Z"


def item(payload: dict, ts: str | None = TS) -> dict:
    return {"timestamp": ts, "type": "response_item", "payload": payload}


def event(payload: dict, ts: str | None = TS) -> dict:
    return {"timestamp": ts, "type": "event_msg", "payload": payload}


def msg(role: str, text, **extra) -> dict:
    return item({"type": "message", "role": role, "content": text, **extra})


def parse(*recs: dict, st: _State | None = None, full: bool = False, sidechain: bool = False, start: int = 0):
    st = st if st is not None else _State()
    parser = _Parser(st, sidechain, full)
    entries = parser.feed([(start + i, rec) for i, rec in enumerate(recs)])
    return parser, entries, st


def E(role: str, type_: str, text: str, index: int, **kw) -> Entry:
    return Entry(role=role, type=type_, text=text, timestamp=kw.pop("timestamp", TS), entry_index=index, **kw)


# --- _Parser: records to entries ------------------------------------------------------------


def test_messages_reasoning_and_compaction_give_exact_entries():
    parser, entries, st = parse(
        msg("user", [{"type": "input_text", "text": "fix it"}], id="m1"),
        msg("assistant", [{"type": "output_text", "text": "done"}], id="m2"),
        item({"type": "reasoning", "summary": [{"type": "summary_text", "text": "think"}], "content": "ignored"}),
        item({"type": "reasoning", "summary": [], "content": [{"type": "reasoning_text", "text": "raw"}]}),
        item({"type": "reasoning", "summary": [], "content": None}),
        msg("developer", "rules"),
        msg("user", ""),
        msg("assistant", ""),
        {"timestamp": TS, "type": "compacted", "payload": {"message": "x"}},
        item({"type": "agent_message", "content": [{"type": "text", "text": "from another agent"}]}),
        item({"type": "agent_message", "content": []}),
        item({"type": "something_new"}),
        {"timestamp": TS, "type": "unknown_kind", "payload": {}},
        start=3,
    )
    assert entries == [
        E("user", "text", "fix it", 3, uuid="m1", starts_turn=True),
        E("assistant", "text", "done", 4, uuid="m2"),
        E("assistant", "thinking", "think", 5),
        E("assistant", "thinking", "raw", 6),
        E("system", "compaction", COMPACTION_TEXT, 11),
        E("system", "text", "from another agent", 12),
    ]
    assert st.meta == {"first_timestamp": TS, "last_timestamp": TS, "first_prompt": "fix it"}
    assert st.fallback == [] and st.calls == {}
    assert parser.skips.counts == {}  # an unknown record type is passed over, not refused


def test_sidechain_and_message_without_id():
    _, entries, _ = parse(msg("user", "hi", id=""), msg("assistant", "yo"), sidechain=True)
    assert entries == [
        E("user", "text", "hi", 0, starts_turn=True, is_sidechain=True),
        E("assistant", "text", "yo", 1, is_sidechain=True),
    ]


def test_machinery_is_dropped_and_the_ide_wrapper_cut():
    ide = "# Context from my IDE setup:\n\n## Active file: a.py\n\n## My request for Codex:\n  rename foo  \n"
    _, entries, st = parse(
        msg("user", "  <ENVIRONMENT_CONTEXT>\n<cwd>/x</cwd>"),
        msg("user", "# AGENTS.md instructions for /x"),
        msg("user", ide),
        msg("user", "second " + "y" * 600),
    )
    assert entries == [
        E("user", "text", "rename foo", 2, starts_turn=True),
        E("user", "text", "second " + "y" * 600, 3, starts_turn=True),
    ]
    assert st.meta["first_prompt"] == "rename foo"
    _, _, st = parse(msg("user", "z" * 600))
    assert st.meta["first_prompt"] == "z" * 500


def test_timestamps_first_and_last():
    _, entries, st = parse(
        {"type": "turn_context", "payload": {}},
        item({"type": "message", "role": "user", "content": "a"}, ts="2026-11-01T10:00:00+02:00"),
        item({"type": "message", "role": "assistant", "content": "b"}, ts="not a time"),
        item({"type": "message", "role": "assistant", "content": "c"}, ts="2026-11-01T09:30:00Z"),
    )
    assert st.meta["first_timestamp"] == "2026-11-01T08:00:00.000Z"
    assert st.meta["last_timestamp"] == "2026-11-01T09:30:00Z"
    assert [e.timestamp for e in entries] == ["2026-11-01T08:00:00.000Z", None, "2026-11-01T09:30:00Z"]
    _, _, st = parse({"type": "turn_context", "payload": {}})
    assert st.meta == {}


def test_session_meta_names_the_session_once():
    meta = {"type": "session_meta", "timestamp": TS, "payload": {
        "id": "s1", "cwd": "/w", "git": {"branch": "dev"}, "cli_version": "0.50.0"}}  # fmt: skip
    other = {"type": "session_meta", "payload": {"id": "s2", "cwd": "/o", "cli_version": "9"}}
    _, entries, st = parse(meta, other)
    assert entries == []
    assert st.meta == {"first_timestamp": TS, "last_timestamp": TS, "session_id": "s1", "cwd": "/w",
                       "git_branch": "dev", "version": "0.50.0"}  # fmt: skip
    _, _, st = parse({"type": "session_meta", "payload": {"session_id": "s3", "git": "main", "id": ""}})
    assert st.meta == {"session_id": "s3", "cwd": None, "git_branch": None, "version": None}


def test_session_meta_parents():
    fork = {"type": "session_meta", "timestamp": TS, "payload": {"id": "s", "forked_from_id": "p1"}}
    _, _, st = parse(msg("user", "x"), fork)
    assert (st.meta["parent"], st.meta["forked"], st.meta["parent_line"], st.meta["parent_ts"]) == ("p1", True, 1, TS)
    spawn = {"type": "session_meta", "payload": {"id": "s", "source": {"subagent": {"thread_spawn": {"parent_thread_id": "p2"}}}}}
    _, _, st = parse(spawn)
    assert (st.meta["parent"], st.meta["forked"], st.meta["parent_line"], st.meta["parent_ts"]) == ("p2", False, 0, None)
    _, _, st = parse({"type": "session_meta", "payload": {"id": "s"}})
    assert "parent" not in st.meta and "forked" not in st.meta


def test_flat_header_and_turn_context():
    _, _, st = parse({"id": "flat", "timestamp": "2026-11-01T09:00:00.000Z"})
    assert st.meta == {"session_id": "flat", "first_timestamp": "2026-11-01T09:00:00.000Z",
                       "last_timestamp": "2026-11-01T09:00:00.000Z"}  # fmt: skip
    _, _, st = parse({"id": "flat", "timestamp": "bad"})
    assert st.meta == {"session_id": "flat"}
    st = _State(meta={"session_id": "known"})
    parse({"id": "flat", "timestamp": "bad"}, st=st)
    assert st.meta == {"session_id": "known"}
    _, _, st = parse(
        {"type": "turn_context", "payload": {"cwd": "", "model": ""}},
        {"type": "turn_context", "payload": {"cwd": "/a", "model": "m1"}},
        {"type": "turn_context", "payload": {"cwd": "/b", "model": "m2"}},
        {"type": "turn_context", "payload": {"cwd": 3, "model": None}},
    )
    assert st.meta == {"cwd": "/a", "model": "m2"}


def test_tool_calls_of_every_kind():
    calls = [
        {"type": "function_call", "call_id": "c1", "name": "shell", "arguments": '{"command": ["ls", "-la"], "timeout": 5}'},
        {"type": "function_call", "call_id": "c2", "name": "read", "arguments": "not json"},
        {"type": "custom_tool_call", "call_id": "c3", "name": "apply_patch", "input": "*** Begin Patch"},
        {"type": "custom_tool_call", "call_id": "c4", "input": '{"path": "a"}'},
        {"type": "local_shell_call", "call_id": "c5", "name": "ignored", "action": {"command": ["git", "status"]}},
        {"type": "web_search_call", "call_id": "c6", "action": {"query": "mutmut"}},
        {"type": "web_search_call", "action": "not a dict"},
        {"type": "tool_search_call", "call_id": "c7", "arguments": {"q": 1}},
        {"type": "image_generation_call", "call_id": "c8", "revised_prompt": "a cat"},
        {"type": "image_generation_call", "call_id": "", "revised_prompt": 42},
        {"type": "function_call", "call_id": "c9", "name": "noargs"},
        {"type": "local_shell_call", "call_id": "c10", "action": {"command": "echo hi"}},
    ]
    _, entries, st = parse(*(item(c) for c in calls))
    assert entries == [
        E("assistant", "tool_use", "ls -la", 0, uuid="c1", tool_name="shell", tool_input={"command": ["ls", "-la"], "timeout": 5}),
        E("assistant", "tool_use", "not json", 1, uuid="c2", tool_name="read", tool_input={"arguments": "not json"}),
        E("assistant", "tool_use", "*** Begin Patch", 2, uuid="c3", tool_name="apply_patch", tool_input={"input": "*** Begin Patch"}),
        E("assistant", "tool_use", '{"path": "a"}', 3, uuid="c4", tool_name="custom_tool", tool_input={"path": "a"}),
        E("assistant", "tool_use", "git status", 4, uuid="c5", tool_name="shell", tool_input={"command": ["git", "status"]}),
        E("assistant", "tool_use", "mutmut", 5, uuid="c6", tool_name="web_search", tool_input={"query": "mutmut"}),
        E("assistant", "tool_use", "", 6, tool_name="web_search", tool_input={}),
        E("assistant", "tool_use", '{"q":1}', 7, uuid="c7", tool_name="tool_search", tool_input={"q": 1}),
        E("assistant", "tool_use", "a cat", 8, uuid="c8", tool_name="image_generation", tool_input=None),
        E("assistant", "tool_use", "42", 9, tool_name="image_generation", tool_input=None),
        E("assistant", "tool_use", "", 10, uuid="c9", tool_name="noargs", tool_input=None),
        E("assistant", "tool_use", "echo hi", 11, uuid="c10", tool_name="shell", tool_input={"command": "echo hi"}),
    ]
    assert st.calls == {"c1": "shell", "c2": "read", "c3": "apply_patch", "c4": "custom_tool", "c5": "shell",
                        "c6": "web_search", "c7": "tool_search", "c8": "image_generation", "c9": "noargs",
                        "c10": "shell"}  # fmt: skip


def test_tool_outputs_are_paired_by_call_id():
    _, entries, st = parse(
        item({"type": "function_call", "call_id": "c1", "name": "shell", "arguments": "{}"}),
        item({"type": "function_call_output", "call_id": "c1", "output": '{"output": "a.txt", "metadata": {}}'}),
        item({"type": "custom_tool_call_output", "call_id": "zz", "output": "orphan"}),
        item({"type": "tool_search_output", "call_id": "c1", "tools": [{"name": "t1"}, "x", {"name": "t2"}, {}, {"name": 7}]}),
        item({"type": "tool_search_output", "output": "plain", "tools": "not a list"}),
        item({"type": "local_shell_call_output", "output": {"content": [{"type": "output_text", "text": "out"}]}}),
        item({"type": "local_shell_call_output", "call_id": "", "output": None}),
    )
    assert entries == [
        E("assistant", "tool_use", "{}", 0, uuid="c1", tool_name="shell", tool_input={}),
        E("tool", "tool_result", "a.txt", 1, parent_uuid="c1", tool_name="shell"),
        E("tool", "tool_result", "orphan", 2, parent_uuid="zz"),
        E("tool", "tool_result", "t1, t2", 3, parent_uuid="c1", tool_name="shell"),
        E("tool", "tool_result", "plain", 4),
        E("tool", "tool_result", "out", 5),
        E("tool", "tool_result", "", 6),
    ]
    st = _State(calls={"": "empty"})
    _, entries, _ = parse(item({"type": "function_call_output", "output": "x"}), st=st)
    assert entries == [E("tool", "tool_result", "x", 0, tool_name="empty")]


def test_long_payloads_are_bounded_unless_full():
    long = "x" * 3000 + "\n" + "m" * 6000 + "\n" + "z" * 1500
    short = bounded(long, 3000, 1000)
    assert short != long
    recs = (
        item({"type": "function_call", "call_id": "c", "name": "n", "arguments": long}),
        item({"type": "function_call_output", "call_id": "c", "output": long}),
        item({"type": "agent_message", "content": long}),
    )
    _, entries, _ = parse(*recs)
    assert [e.text for e in entries] == [short, short, short]
    _, entries, _ = parse(*recs, full=True)
    assert [e.text for e in entries] == [long, long, long]


def test_call_names_kept_are_bounded():
    calls = [item({"type": "function_call", "call_id": f"c{i}", "name": f"t{i}"}) for i in range(_MAX_CALLS + 2)]
    _, _, st = parse(*calls)
    assert len(st.calls) == _MAX_CALLS
    assert list(st.calls)[:2] == ["c2", "c3"] and list(st.calls)[-1] == f"c{_MAX_CALLS + 1}"
    assert _MAX_CALLS == 1000


def test_events_stand_in_only_without_primary_records():
    recs = (
        event({"type": "user_message", "message": "typed", "images": []}),
        event({"type": "user_message", "message": "", "images": ["a.png"]}),
        event({"type": "user_message", "message": "", "images": []}),
        event({"type": "user_message", "message": 5}),
        event({"type": "agent_reasoning", "text": ["not text"]}),
        event({"type": "agent_message", "message": "answer"}),
        event({"type": "agent_message", "message": "", "images": ["a.png"]}),
        event({"type": "agent_reasoning", "text": "pondering", "message": "not this"}),
        event({"type": "agent_reasoning", "text": ""}),
        event({"type": "context_compacted"}),
        event({"type": "user_message", "message": "<environment_context>x"}),
    )
    parser, entries, st = parse(*recs)
    assert entries == [
        E("user", "text", "typed", 0, starts_turn=True),
        E("user", "text", "[image]", 1, starts_turn=True),
        E("assistant", "text", "answer", 5),
        E("assistant", "thinking", "pondering", 7),
        E("system", "compaction", COMPACTION_TEXT, 9),
    ]
    assert parser.skips.counts == {}  # a text that is no string is no text, not a broken record
    assert st.fallback == ["msg", "compact"] and st.meta["first_prompt"] == "typed"
    _, entries, st = parse(*recs, st=_State(primary=["compact", "msg"]))
    assert entries == [] and st.fallback == []
    _, entries, st = parse(event({"type": "context_compacted"}), event({"type": "context_compacted"}),
                           st=_State(primary=["msg"]))  # fmt: skip
    assert entries == [E("system", "compaction", COMPACTION_TEXT, 0), E("system", "compaction", COMPACTION_TEXT, 1)]
    assert st.fallback == ["compact"]


def test_thread_names_and_token_counts():
    usage1 = {"input_tokens": 10, "cached_input_tokens": 4, "output_tokens": 3, "reasoning_output_tokens": 1, "total_tokens": 13}
    total2 = {"input_tokens": 30, "cached_input_tokens": 4, "output_tokens": 5, "reasoning_output_tokens": 1, "total_tokens": 35}
    parser, entries, st = parse(
        {"type": "turn_context", "payload": {"model": "gpt-5"}},
        event({"type": "thread_name_updated", "thread_name": "first title"}),
        event({"type": "thread_name_updated", "name": "second title"}),
        event({"type": "thread_name_updated", "thread_name": ""}),
        event({"type": "token_count", "info": {"last_token_usage": usage1, "total_token_usage": usage1}}),
        event({"type": "token_count", "info": {"total_token_usage": total2}}),
        event({"type": "token_count", "info": None}),
    )
    assert entries == []
    assert st.meta["title"] == "second title" and st.meta["model"] == "gpt-5"
    assert st.meta["token_total"] == total2
    assert parser.usage == [
        Usage(key="codex:10:4:3:1:13", model="gpt-5", timestamp=TS, input_tokens=6, output_tokens=3,
              cache_read_tokens=4),
        Usage(key="codex:30:4:5:1:35", model="gpt-5", timestamp=TS, input_tokens=20, output_tokens=2,
              cache_read_tokens=0),
    ]  # fmt: skip
    _, _, st = parse(event({"type": "thread_name_updated", "thread_name": "named"}))
    assert st.meta == {"first_timestamp": TS, "last_timestamp": TS, "title": "named"}
    _, _, st = parse(event({"type": "thread_name_updated", "thread_name": "new", "name": "old"}))
    assert st.meta["title"] == "new"


def test_a_record_that_breaks_the_parser_costs_that_record_only():
    skips = Skips()
    st = _State()
    parser = _Parser(st, False, False, skips)
    entries = parser.feed([
        (0, msg("user", "kept")),
        (1, item({"type": {}})),  # unhashable: the decoder's shape check refuses it before the parser
        (2, msg("assistant", "after")),
    ])  # fmt: skip
    assert entries == [E("user", "text", "kept", 0, starts_turn=True), E("assistant", "text", "after", 2)]
    assert skips.counts == {UNREADABLE: 1}
    assert _Parser(_State(), False, False).skips.counts == {}


def test_a_record_that_breaks_after_adding_an_entry_leaves_none(monkeypatch):
    parser = _Parser(_State(), False, False)

    def broken(kind: str) -> None:
        raise RuntimeError(kind)

    monkeypatch.setattr(parser, "_fallback", broken)
    entries = parser.feed([(0, msg("user", "kept")), (1, event({"type": "context_compacted"}))])
    assert entries == [E("user", "text", "kept", 0, starts_turn=True)]
    assert parser.skips.counts == {UNREADABLE: 1}


# --- codex_records: lines to records, and the payload helpers ------------------------------


def write(path: Path, *lines: str | dict) -> Path:
    path.write_text("".join((json.dumps(x) if isinstance(x, dict) else x) + "\n" for x in lines))
    return path


def test_records_from_a_file_count_lines_and_skips(tmp_path: Path):
    good = msg("user", "a")
    path = write(tmp_path / "r.jsonl", good, "", "{bad", "[1]", item({"type": "message", "role": []}),
                 {"type": "response_item", "payload": {"type": {}}}, {"type": 5}, "   ", good)  # fmt: skip
    st, skips = _State(), Skips()
    recs, end = _records(path, 0, st, skips)
    assert recs == [(0, good), (8, good)]
    assert end == path.stat().st_size and st.line == 9
    assert skips.counts == {INVALID_JSON: 1, NOT_OBJECT: 1, WRONG_SHAPE: 3}
    # from an offset, the line numbers go on from the state's
    with path.open("a") as fh:
        fh.write(json.dumps(good) + "\n" + '{"partial":')
    recs2, end2 = _records(path, end, st, skips)
    assert recs2 == [(9, good)] and st.line == 10
    assert end2 == path.stat().st_size - len('{"partial":')
    recs3, end3 = _records(path, end2, st, Skips())
    assert recs3 == [] and end3 == end2 and st.line == 10


def test_records_of_a_zstd_stream(tmp_path: Path):
    zstd = pytest.importorskip("zstandard")
    body = (json.dumps(msg("user", "a")) + "\n\n" + json.dumps(msg("assistant", "b"))).encode()  # no last "\n"
    path = tmp_path / "r.jsonl.zst"
    path.write_bytes(zstd.ZstdCompressor().compress(body))
    st = _State(line=4)
    recs, end = _records(path, 123, st, Skips())
    assert recs == [(4, msg("user", "a")), (6, msg("assistant", "b"))]
    assert end == path.stat().st_size and st.line == 7
    assert _decompress(path) == body and _decompress(path, 5) == body[:5]
    assert _zstd() is zstd


def test_missing_zstandard_is_reported(tmp_path: Path, monkeypatch):
    monkeypatch.setitem(sys.modules, "zstandard", None)
    assert _zstd() is None
    with pytest.raises(ImportError) as raised:
        _decompress(tmp_path / "r.jsonl.zst")
    assert str(raised.value) == "zstandard is not installed: cannot read .jsonl.zst"


def test_well_shaped():
    assert _well_shaped({"type": "response_item", "payload": {"type": "message", "role": "user", "id": "i",
                                                              "call_id": "c", "name": "n"}})  # fmt: skip
    assert _well_shaped({"type": "message", "role": "user"})  # a flat item: checked itself
    assert _well_shaped({"payload": "text"})  # (a payload that is no object: the record itself is checked)
    assert not _well_shaped({"payload": "text", "role": 1})
    for field in ("type", "role", "id", "call_id", "name"):
        assert not _well_shaped({"type": "response_item", "payload": {field: 1}})
        assert not _well_shaped({field: ["x"]})
    assert not _well_shaped({"type": 1, "payload": {}})


def test_bound():
    assert bound("a" * 9000, False) == bounded("a" * 9000, 3000, 1000)
    assert bound("a" * 9000, True) == "a" * 9000
    text = "h" * 5000 + "\nerror: boom\n" + "t" * 5000
    assert bound(text, False, limit=400) == bounded(text, 300, 100)
    assert bound(text, False, limit=len(text)) == text
    assert bound(text, False, limit=len(text) - 1) == bounded(text, len(text) - 1 - (len(text) - 1) // 4, (len(text) - 1) // 4)


def test_parts_text():
    assert parts_text("plain") == "plain"
    assert parts_text({"text": "one"}) == "one"
    assert parts_text(["a", {"type": "input_text", "text": "b"}, {"type": "input_image"}, {"type": "image"},
                       {"type": "other"}, {"text": ""}, "", 3, {"text": 4, "type": "x"}]) == "a\nb\n[image]\n[image]"  # fmt: skip
    assert parts_text(None) == "" and parts_text(7) == ""
    assert parts_text([{"type": None}]) == "" and parts_text([{}]) == ""


def test_output_text():
    assert output_text('{"output": "inner", "metadata": {"exit_code": 0}}') == "inner"
    assert output_text('{"output": 3}') == '{"output": 3}'
    assert output_text('{"output": broken') == '{"output": broken'
    assert output_text('{"other": "x"}') == '{"other": "x"}'
    assert output_text(' {"output": "x"}') == ' {"output": "x"}'
    assert output_text('["output"]') == '["output"]'
    assert output_text({"content": [{"text": "p"}], "output": "no"}) == "p"
    assert output_text({"text": "d"}) == "d"
    assert output_text([{"text": "l"}, "m"]) == "l\nm"
    assert output_text(None) == "" and output_text(12) == "12" and output_text(False) == "False"


def test_json_input():
    assert _json_input({"a": 1}, "k") == {"a": 1}
    assert _json_input(None, "k") is None
    assert _json_input('{"a": 1}', "k") == {"a": 1}
    assert _json_input("[1]", "k") == {"k": "[1]"}
    assert _json_input("{bad", "k") == {"k": "{bad"}
    assert _json_input(5, "key") == {"key": 5}


def test_is_machinery_and_ide_context():
    assert is_machinery("  \n<Environment_Context>") and is_machinery("<turn_aborted>")
    assert is_machinery("# AGENTS.md instructions for x") and is_machinery("<permissions instructions>")
    assert not is_machinery("please read <environment_context>")
    assert is_machinery(" \n" * 40 + "<user_instructions>") is True  # (leading blanks stripped first)
    assert strip_ide_context("# Context from my IDE setup:\nx\n## My request for Codex:\n do it \n") == "do it"
    wrapped = "# Context from my IDE setup:\nx\n## My request for Codex:\n  "
    assert strip_ide_context(wrapped) == wrapped
    assert strip_ide_context("# Context from my IDE setup:\nno request") == "# Context from my IDE setup:\nno request"
    assert strip_ide_context("x ## My request for Codex: y") == "x ## My request for Codex: y"
    assert strip_ide_context("# Context from my IDE setup:\n## My request for Codex: a ## My request for Codex: b") == ("a ## My request for Codex: b")


def test_state_load_and_dump():
    st = _State()
    assert st.dump() == {"line": 0, "meta": {}, "primary": [], "fallback": [], "calls": {}, "fork_parent": None,
                         "fork_open": False, "fork_matched": 0}  # fmt: skip
    data = {"line": 3, "meta": {"a": 1}, "primary": ["msg"], "fallback": ["compact"], "calls": {"c": "n"},
            "fork_parent": "p", "fork_open": True, "fork_matched": 2, "stranger": 1}  # fmt: skip
    assert _State.load(data).dump() == {k: v for k, v in data.items() if k != "stranger"}
    assert _State.load({"line": 5}).dump() == {**st.dump(), "line": 5}
    assert _State.load(None) == _State() and _State.load({}) == _State()
    a, b = _State(), _State()
    a.meta["x"] = 1
    a.primary.append("p")
    assert b.meta == {} and b.primary == []


def test_envelope_and_kinds():
    assert _envelope({"type": "event_msg", "payload": {"a": 1}}) == ("event_msg", {"a": 1})
    assert _envelope({"payload": {"a": 1}}) == ("", {"a": 1})
    flat = {"type": "message", "role": "user"}
    assert _envelope(flat) == ("response_item", flat)
    assert _envelope({"type": "function_call_output"})[0] == "response_item"
    assert _envelope({"type": "local_shell_call"})[0] == "response_item"
    header = {"id": "x", "timestamp": "t"}
    assert _envelope(header) == ("flat_header", header)
    assert _envelope({"id": "x", "timestamp": "t", "type": None}) == ("", {})
    assert _envelope({"id": "x"}) == ("", {}) and _envelope({"timestamp": "t"}) == ("", {})
    assert _envelope({"type": "session_meta", "payload": "s"}) == ("", {})
    assert _kinds([]) == set()
    assert _kinds([(0, {"type": "compacted", "payload": {}})]) == {"compact"}
    assert _kinds([(0, msg("user", "x"))]) == {"msg"}
    assert _kinds([(0, item({"type": "reasoning"}))]) == {"msg"}
    assert _kinds([(0, {"type": "message", "role": "assistant"})]) == {"msg"}
    assert _kinds([(0, msg("developer", "x")), (1, item({"type": "function_call"})),
                   (2, event({"type": "user_message"}))]) == set()  # fmt: skip
    assert _kinds([(0, {"type": "compacted", "payload": {}}), (1, msg("user", "x"))]) == {"compact", "msg"}


def test_the_record_module_constants():
    assert records_mod._ITEMS == {"message", "reasoning", "agent_message", "function_call", "custom_tool_call",
                                  "local_shell_call", "web_search_call", "tool_search_call", "image_generation_call",
                                  "function_call_output", "custom_tool_call_output", "tool_search_output",
                                  "local_shell_call_output"}  # fmt: skip
    for head in records_mod.MACHINERY:
        assert is_machinery(head + " rest") and head == head.lower()


# --- codex_session --------------------------------------------------------------------------


def test_session_id_from_name():
    sid = "0199a000-0000-7000-8000-0000000000C1"
    assert session_id_from_name(f"rollout-2026-x-{sid}.jsonl") == sid.lower()
    assert session_id_from_name(f"rollout-{sid}.jsonl.zst") == sid.lower()
    assert session_id_from_name(f"rollout-{sid}.jsonl.bak") is None
    assert session_id_from_name(f"rollout-{sid}.json") is None
    assert session_id_from_name("rollout-nope.jsonl") is None


def test_spawn_parent_and_parent_of():
    spawn = {"source": {"subagent": {"thread_spawn": {"parent_thread_id": "p"}}}}
    assert spawn_parent(spawn) == "p"
    assert spawn_parent({"source": {"subagent": {"thread_spawn": {}}}, "parent_thread_id": "q"}) == "q"
    assert spawn_parent({"source": {"subagent": "review"}, "parent_thread_id": "q"}) == "q"
    assert spawn_parent({"source": {"subagent": "review"}}) is None
    assert spawn_parent({"source": {}, "parent_thread_id": "q"}) is None
    assert spawn_parent({"source": "cli", "parent_thread_id": "q"}) is None
    assert spawn_parent({"parent_thread_id": "q"}) is None
    assert parent_of({"forked_from_id": "f", **spawn}) == ("f", True)
    assert parent_of({"forked_from_id": "", **spawn}) == ("p", False)
    assert parent_of({}) == (None, False)


def test_locate_rollout(tmp_path: Path):
    home = tmp_path / "codex"
    day = home / "sessions" / "2026" / "11" / "01"
    day.mkdir(parents=True)
    near = day / "rollout-a-me.jsonl"
    near.write_text("")
    assert locate_rollout(near, "me") is None  # itself is not its parent
    assert locate_rollout(tmp_path / "x" / "rollout-p.jsonl", "p") is None  # no CODEX_HOME above
    other = home / "sessions" / "2026" / "10" / "30"
    other.mkdir(parents=True)
    (other / "rollout-b-par.jsonl").mkdir()  # a directory of that name is no rollout
    assert locate_rollout(near, "par") is None
    older = other / "rollout-c-par.jsonl.zst"
    older.write_text("")
    assert locate_rollout(near, "par") == older
    assert locate_rollout(home / "archived_sessions" / "rollout-e-arch.jsonl", "par") == older
    sibling = day / "rollout-d-par.jsonl"
    sibling.write_text("")
    assert locate_rollout(near, "par") == sibling  # the same folder first
    archived = home / "archived_sessions"
    archived.mkdir()
    (archived / "rollout-e-arch.jsonl").write_text("")
    assert locate_rollout(near, "arch") == archived / "rollout-e-arch.jsonl"
    (archived / "deep").mkdir()
    (archived / "deep" / "rollout-f-deeper.jsonl").write_text("")
    assert locate_rollout(near, "deeper") is None  # archived_sessions is flat


def test_meta_from_state():
    st = _State(meta={"session_id": "meta-id", "cwd": "/c", "git_branch": "b", "title": "t", "first_prompt": "p",
                      "first_timestamp": "t1", "last_timestamp": "t2", "version": "v"})  # fmt: skip
    file = SourceFile(Path("/x/rollout-name.jsonl"), "codex", session_id="file-id")
    assert _meta(st, file) == FileMeta(session_id="file-id", cwd="/c", git_branch="b", title="t", first_prompt="p",
                                       first_timestamp="t1", last_timestamp="t2", version="v")  # fmt: skip
    assert _meta(st, SourceFile(Path("/x/a.b.jsonl"), "codex")).session_id == "meta-id"
    assert _meta(_State(), SourceFile(Path("/x/a.b.jsonl"), "codex")) == FileMeta(session_id="a")
