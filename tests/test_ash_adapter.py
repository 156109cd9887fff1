"""The Ash adapter in-process: lines to ``_decode_lines``, records to ``_Tree`` (what
hangs where, which tip is the default, which branch owns what), items to
``_Emitter`` (the entries, the branch notes and repeated questions), the helpers,
and ``AshSource``'s classify/discover/read/meta on small files, with the exact
entries, metadata and skips they give back.

tests/test_source_ash.py checks the same end to end (builder-made sessions); these
see each rule on its own, so that a mutation tool sees them (bench/MUTATION.md).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from core.config import Config
from core.model import COMPACTION_TEXT, Entry, FileMeta
from core.sources.ash import AGENT, CHAT_PREFIX, AshSource, _meta, read_heads
from core.sources.ash_entries import _Emitter
from core.sources.ash_records import (
    _decode_lines,
    _read_lines,
    _text,
    _ts,
    _well_shaped,
    bound,
    message_text,
)
from core.sources.ash_tree import _Item, _Tree, is_prompt
from core.sources.base import MAIN, SUBAGENT, SourceFile
from core.sources.jsonl import INVALID_JSON, NOT_OBJECT, TOO_DEEP, UNREADABLE, WRONG_SHAPE, Skips
from core.sources.tool_text import bounded

SRC = AshSource()
T1 = "2026-02-01T10:01:00+00:00"
T2 = "2026-02-01T10:02:00+00:00"
T3 = "2026-02-01T10:03:00+00:00"
T4 = "2026-02-01T10:04:00+00:00"
Z1, Z2, Z3, Z4 = (f"2026-02-01T10:0{n}:00.000Z" for n in (1, 2, 3, 4))
LONG = "".join(f"{i:05d} " for i in range(3000))  # 18000 characters, every cut visible


def E(role: str, type_: str, text: str, index: int = 0, **kw: Any) -> Entry:
    return Entry(role=role, type=type_, text=text, entry_index=index, **kw)


def msg(mid: str | None, role: str, content: Any, parent: str | None = None, ts: str | None = None, **kw: Any) -> dict:
    rec: dict[str, Any] = {"type": "message", "role": role, "content": content, **kw}
    if mid is not None:
        rec["id"] = mid
    if parent is not None:
        rec["parent_id"] = parent
    if ts is not None:
        rec["created_at"] = ts
    return rec


def tree(*recs: dict, heads: list[tuple[str, str]] | None = None) -> _Tree:
    return _Tree(list(enumerate(recs)), heads or [])


def item(index: int, rec: dict, **kw: Any) -> _Item:
    return _Item(index, rec, rec.get("type", "message"), **kw)


def emit(*items: _Item, full: bool = False, side_file: bool = False, label: str | None = None) -> _Emitter:
    emitter = _Emitter(full, side_file, list(items))
    for it in items:
        emitter.item(it, label)
    return emitter


def lines(path: Path, *recs: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        for rec in recs:
            fh.write((rec if isinstance(rec, str) else json.dumps(rec)) + "\n")
    return path


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return Config.from_env({"HOME": str(tmp_path)})


# --- records ------------------------------------------------------------------------------


def test_bound_keeps_short_or_full_text_and_cuts_head_and_tail():
    assert bound("short", False) == "short"
    assert bound(LONG, True) == LONG
    assert bound(LONG[:4000], False) == LONG[:4000]
    assert bound(LONG, False) == bounded(LONG, 3000, 1000) != LONG
    assert bound(LONG, False).startswith(LONG[:3000] + "\n")
    assert bound(LONG, False).endswith("\n" + LONG[-1000:])
    assert bound(LONG, False, limit=1000) == bounded(LONG, 750, 250)


def test_ts_reads_created_at_then_timestamp():
    assert _ts({"created_at": T1, "timestamp": T2}) == Z1
    assert _ts({"timestamp": T2}) == Z2
    assert _ts({"created_at": "", "timestamp": T2}) == Z2
    assert _ts({"created_at": "not a time"}) is None
    assert _ts({}) is None


def test_read_lines_gives_complete_lines_and_the_bytes_they_span(tmp_path: Path):
    path = tmp_path / "c.jsonl"
    path.write_bytes(b'{"a":1}\n\n{"b":2}\n{"c":')
    assert _read_lines(path) == ([b'{"a":1}\n', b"\n", b'{"b":2}\n'], 17)
    assert _read_lines(path, 8) == ([b"\n", b'{"b":2}\n'], 9)
    assert _read_lines(path, 17) == ([], 0)
    empty = tmp_path / "e.jsonl"
    empty.write_bytes(b"")
    assert _read_lines(empty) == ([], 0)
    with pytest.raises(OSError):
        _read_lines(tmp_path / "missing.jsonl")


@pytest.mark.parametrize(
    "field",
    ["type", "id", "parent_id", "role", "message_id", "tool_use_id", "agent_session_id",
     "parent_tool_use_id", "name", "branch_id"],
)
def test_well_shaped_wants_string_ids_in_the_record_and_its_blocks(field: str):
    assert _well_shaped({field: "x"})
    assert _well_shaped({field: None})
    assert not _well_shaped({field: 1})
    assert not _well_shaped({"content": [{"type": "text", "text": "ok"}, {field: ["x"]}]})
    assert _well_shaped({"content": [{field: "x"}, "a string block", 3]})


def test_well_shaped_reads_other_fields_leniently():
    assert _well_shaped({"content": {"id": 1}, "input": {"id": 2}, "created_at": 5})
    assert _well_shaped({"content": "text", "extra": [1, 2]})
    assert _well_shaped({})


def test_decode_lines_numbers_lines_and_counts_each_skip():
    raw = [
        b'{"type":"message","id":"m1"}\n',
        b"\n",
        b"   \n",
        b"{oops\n",
        b"[1]\n",
        b'{"type":"message","id":7}\n',
        b'{"type":"message","content":[{"type":"tool_use","id":{"x":1}}]}\n',
        b'{"a":' * 200 + b"1" + b"}" * 200 + b"\n",
        b'{"type":"tool_result","tool_use_id":"t1"}\n',
    ]
    skips = Skips({"earlier": 2})
    records, total = _decode_lines(raw, 10, skips)
    assert records == [(10, {"type": "message", "id": "m1"}), (18, {"type": "tool_result", "tool_use_id": "t1"})]
    assert skips.counts == {"earlier": 2, INVALID_JSON: 1, NOT_OBJECT: 1, WRONG_SHAPE: 2, TOO_DEEP: 1}
    assert total == 7
    assert _decode_lines(raw) == ([(0, {"type": "message", "id": "m1"}), (8, {"type": "tool_result", "tool_use_id": "t1"})], 5)
    assert _decode_lines([]) == ([], 0)


def test_message_text_joins_text_blocks_and_marks_images():
    assert message_text({"content": "plain"}) == "plain"
    assert message_text({}) == ""
    assert message_text({"content": {"k": 1}}) == '{"k":1}'
    assert message_text({"content": 42}) == "42"
    content = [
        {"type": "text", "text": "one"},
        {"type": "thinking", "thinking": "hidden"},
        {"type": "image", "source": {}},
        {"type": "text", "text": ""},
        {"type": "text", "text": 5},
        "loose string",
        {"type": "image_url", "image_url": "u"},
        {"type": "tool_use", "text": "not text"},
        {"text": "untyped"},
        {"type": "text", "text": "two"},
    ]
    assert message_text({"content": content}) == "one\n[image]\n[image]\ntwo"
    assert message_text({"content": []}) == ""
    assert message_text({"content": [{"type": "tool_result", "content": "x"}]}) == ""


def test_text_of_any_value():
    assert _text("  as is  ") == "  as is  "
    assert _text(None) == ""
    assert _text(0) == "0"
    assert _text(False) == "false"
    assert _text({"a": [1, "b"]}) == '{"a":[1,"b"]}'
    assert _text([{"text": " one "}, "two", {"no": "text"}, ["three", {"text": "four"}], None]) == "one \ntwo\n\nthree\nfour"
    assert _text([" padded ", {"text": "end "}]) == "padded \nend"
    assert _text([]) == ""


# --- the tree: what hangs where -------------------------------------------------------------


def anchors(t: _Tree) -> list[tuple[int, str, str | None, bool, str | None]]:
    return [(i.index, i.kind, i.anchor, i.sidechain, i.branch) for i in t.items]


def test_messages_without_parent_follow_the_previous_one_and_keep_their_order():
    t = tree(
        {"type": "session", "id": "h1", "version": "1"},
        msg("u1", "user", "q", ts=T1),
        msg("a1", "assistant", "a"),
        msg("u2", "user", "again", ts=T3),
    )
    assert t.header == {"type": "session", "id": "h1", "version": "1"}
    assert t.parent == {"u1": None, "a1": "u1", "u2": "a1"}
    assert t.line == {"u1": 1, "a1": 2, "u2": 3}
    assert t.stamp == {"u1": Z1, "u2": Z3}
    assert list(t.nodes) == ["u1", "a1", "u2"] and t.nodes["a1"] is t.items[1]
    assert anchors(t) == [(1, "message", "u1", False, None), (2, "message", "a1", False, None), (3, "message", "u2", False, None)]
    assert t.segments == [(None, None, ["u1", "a1", "u2"])]
    assert t.labels == {"leaf:u2": None}
    assert t.owner == {"u1": None, "a1": None, "u2": None}


def test_a_message_without_an_id_is_named_by_its_line_and_the_chain_goes_on():
    """A v1 file (no parent ids) with one message that lacks an id is still one chain:
    the id-less message must not make every parent-less message a root."""
    t = tree(msg("u1", "user", "q"), msg(None, "assistant", "a"), msg("u2", "user", "q2"))
    assert t.parent == {"u1": None, "line-1": "u1", "u2": "line-1"}
    assert t.items[1].rec == {"type": "message", "role": "assistant", "content": "a", "id": "line-1"}
    assert t.segments == [(None, None, ["u1", "line-1", "u2"])]


def test_explicit_parents_count_only_when_they_name_another_main_message():
    t = tree(
        {"type": "session", "id": "first"},
        msg("u1", "user", "q"),
        msg("a1", "assistant", "a"),
        msg("u1", "user", "same id again", parent="u1"),  # a repeated id: named by its line
        msg("s1", "user", "task", agent_session_id="ag"),  # a subagent's: no node
        msg("a2", "assistant", "b", parent="s1"),  # a subagent's message is no parent
        msg("a3", "assistant", "c", parent="a3"),  # itself is no parent
        msg("a4", "assistant", "d", parent="nowhere"),
        msg("a5", "assistant", "e", parent="u1"),
        msg("a6", "assistant", "f", parent="a7"),  # a later message may be the parent
        msg("a7", "assistant", "g", parent="a1"),
        {"type": "session", "id": "second"},
    )
    assert t.header == {"type": "session", "id": "first"}
    assert t.parent == {
        "u1": None, "a1": "u1", "line-3": "u1", "a2": "line-3", "a3": "a2", "a4": "a3",
        "a5": "u1", "a6": "a7", "a7": "a1",
    }
    assert "s1" not in t.nodes and t.items[3].sidechain is True
    assert t.items[2].rec["id"] == "line-3" and t.nodes["line-3"] is t.items[2]


def test_each_kind_hangs_on_its_message_tool_use_or_agent():
    t = tree(
        {"type": "session", "id": "h"},
        {"id": "no type"},
        msg("u1", "user", "q"),
        msg("a1", "assistant", [{"type": "text", "text": "a"}, {"type": "tool_use", "id": "tb1", "name": "bash"},
                                 {"type": "tool_use", "name": "no id"}, "loose"], parent="u1"),
        {"type": "tool_use", "id": "t1", "message_id": "u1"},
        {"type": "tool_use", "id": "t2", "parent_id": "u1"},
        {"type": "tool_use", "id": "t3", "message_id": "nowhere", "parent_id": "u1"},
        {"type": "tool_result", "tool_use_id": "t1"},
        {"type": "tool_result", "tool_use_id": "tb1"},
        {"type": "tool_result", "tool_use_id": "unknown"},
        {"type": "tool_result"},
        msg("u2", "user", "next", parent="a1"),
        {"type": "agent_session", "id": "ag1", "parent_tool_use_id": "t1"},
        msg("s1", "user", "task", agent_session_id="ag1"),
        {"type": "tool_use", "id": "t4", "agent_session_id": "ag1"},
        {"type": "tool_result", "tool_use_id": "t4"},
        {"type": "agent_session_complete", "agent_session_id": "ag1"},
        msg("s2", "user", "lost", agent_session_id="unknown agent"),
        {"type": "agent_session", "id": "ag2", "parent_tool_use_id": "nowhere"},
        {"type": "agent_session_complete", "parent_id": "u1"},
        {"type": "compaction", "id": "c1", "branch_id": "b"},
        {"type": "compaction", "id": "c2", "parent_id": "u1"},
        {"type": "note", "parent_id": "u1"},
        {"type": "note", "parent_id": "nowhere"},
        {"type": "note", "parent_id": "s1"},
    )
    assert anchors(t) == [
        (2, "message", "u1", False, None),
        (3, "message", "a1", False, None),
        (4, "tool_use", "u1", False, None),
        (5, "tool_use", "u1", False, None),
        (6, "tool_use", "a1", False, None),
        (7, "tool_result", "u1", False, None),
        (8, "tool_result", "a1", False, None),
        (9, "tool_result", "a1", False, None),
        (10, "tool_result", "a1", False, None),
        (11, "message", "u2", False, None),
        (12, "agent_session", "u1", False, None),
        (13, "message", "u1", True, None),
        (14, "tool_use", "u1", True, None),
        (15, "tool_result", "u1", False, None),
        (16, "agent_session_complete", "u1", True, None),
        (17, "message", "u2", True, None),
        (18, "agent_session", "u2", False, None),
        (19, "agent_session_complete", "u2", False, None),
        (20, "compaction", "u2", False, "b"),
        (21, "compaction", "u2", False, None),
        (22, "note", "u1", False, None),
        (23, "note", "u2", False, None),
        (24, "note", "u2", False, None),
    ]


def test_tool_results_and_agents_follow_the_anchor_of_their_tool_use():
    t = tree(
        msg("u1", "user", "q"),
        msg("a1", "assistant", [{"type": "tool_use", "id": "tb", "name": "x"}]),
        msg("u2", "user", "q2", parent="u1"),
        {"type": "tool_use", "id": "t1", "message_id": "u2"},
        msg("u3", "user", "q3", parent="a1"),
        {"type": "tool_result", "tool_use_id": "tb"},
        {"type": "tool_result", "tool_use_id": "t1"},
        {"type": "agent_session", "parent_tool_use_id": "t1"},  # no id: kept under ""
        {"type": "agent_session_complete"},  # no agent id: the "" one
        {"type": "agent_session", "id": "ag", "parent_tool_use_id": "tb"},
        msg("s1", "user", "task", agent_session_id="ag"),
    )
    assert [(i.index, i.anchor) for i in t.items] == [
        (0, "u1"), (1, "a1"), (2, "u2"), (3, "u2"), (4, "u3"), (5, "a1"), (6, "u2"), (7, "u2"), (8, "u2"),
        (9, "a1"), (10, "a1"),
    ]


def test_only_timed_messages_have_a_stamp():
    t = tree(msg("u1", "user", "q", ts="bad"), msg("a1", "assistant", "a", timestamp=T2), msg("a2", "assistant", "b"))
    assert t.stamp == {"a1": Z2}


def test_a_v1_session_with_a_message_without_an_id_reads_as_one_chain(config: Config):
    path = lines(
        config.ash_home / "sessions" / "telegram_5" / "context.jsonl",
        {"type": "session", "version": "1", "id": "telegram_5"},
        msg("u1", "user", "first question", ts=T1),
        msg(None, "assistant", "an answer without an id", ts=T2),
        msg("u2", "user", "second question", ts=T3),
    )
    result = SRC.read(SRC.classify(path, config))
    assert result.entries == [
        E("user", "text", "first question", 1, timestamp=Z1, uuid="u1", starts_turn=True),
        E("assistant", "text", "an answer without an id", 2, timestamp=Z2, uuid="line-2"),
        E("user", "text", "second question", 3, timestamp=Z3, uuid="u2", starts_turn=True),
    ]
