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
from core.sources.jsonl import INVALID_JSON, NOT_OBJECT, TOO_DEEP, WRONG_SHAPE, Skips
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
        {"type": "tool_use", "message_id": "u1"},  # no id: nothing to find it by
        {"type": "note", "parent_id": "u1", "content": [{"type": "tool_use", "id": "tn"}]},  # no message: no call
        {"type": "tool_result", "tool_use_id": "tn"},
        {"type": "tool_result", "tool_use_id": "u2"},  # a message id is no tool id
    )
    assert [(i.index, i.anchor) for i in t.items] == [
        (0, "u1"), (1, "a1"), (2, "u2"), (3, "u2"), (4, "u3"), (5, "a1"), (6, "u2"), (7, "u2"), (8, "u2"),
        (9, "a1"), (10, "a1"), (11, "u1"), (12, "u1"), (13, "u3"), (14, "u3"),
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


# --- the tree: tips, segments, order --------------------------------------------------------


def fork_records() -> list[dict]:
    """plan -> where? -> paris -> paris ok (untimed) | where? -> rome (newest)."""
    return [
        msg("u1", "user", "plan", ts=T1),
        msg("a1", "assistant", "where", parent="u1", ts=T2),
        msg("u2", "user", "paris", parent="a1", ts=T3),
        msg("a2", "assistant", "paris ok", parent="u2"),
        msg("u3", "user", "rome", parent="a1", ts=T4),
    ]


def test_without_heads_every_leaf_is_a_tip_and_the_newest_is_the_default():
    t = tree(*fork_records())
    assert t.segments == [(None, None, ["u1", "a1", "u3"]), ("leaf:a2", "a1", ["u2", "a2"])]
    assert t.labels == {"leaf:u3": None, "leaf:a2": "leaf:a2"}
    assert t.owner == {"u3": None, "a1": None, "u1": None, "a2": "leaf:a2", "u2": "leaf:a2"}


def test_tips_with_the_same_time_go_by_their_line():
    recs = fork_records()
    recs[3]["created_at"] = recs[4]["created_at"]
    assert [s[0] for s in tree(*recs).segments] == [None, "leaf:a2"]
    recs[4]["created_at"] = T1  # older than its own parent: the time decides, not the line
    assert tree(*recs).segments == [(None, None, ["u1", "a1", "u2", "a2"]), ("leaf:u3", "a1", ["u3"])]


def test_heads_name_the_tips_a_stale_head_moves_on_and_unknown_or_repeated_heads_are_dropped():
    heads = [("main", "u2"), ("b", "u3"), ("gone", "zzz"), ("dup", "u3")]
    t = tree(*fork_records(), heads=heads)
    assert t.segments == [(None, None, ["u1", "a1", "u3"]), ("main", "a1", ["u2", "a2"])]
    assert t.labels == {"b": None, "main": "main"}


def test_a_stale_head_stops_at_a_fork_or_a_named_head():
    t = tree(*fork_records(), heads=[("main", "u1"), ("x", "a1")])
    # u1's only child a1 is named, a1 has two: neither head moves, and both lie on the
    # default path, so they own no segment (their labels still map)
    assert t.segments == [(None, None, ["u1", "a1", "u3"]), ("leaf:a2", "a1", ["u2", "a2"])]
    assert t.labels == {"leaf:u3": None, "x": "x", "main": "main", "leaf:a2": "leaf:a2"}


def test_a_cycle_of_parents_ends_the_walk():
    t = tree(msg("a", "assistant", "one", parent="b"), msg("b", "assistant", "two", parent="a"), heads=[("m", "a")])
    assert t.parent == {"a": "b", "b": "a"}
    assert t.segments == [(None, "b", ["a", "b"])]
    assert t.prompt_above("a") is None
    assert tree(msg("a", "assistant", "one", parent="b"), msg("b", "assistant", "two", parent="a")).segments == []


def test_ordered_puts_the_default_first_then_branches_by_first_line():
    recs = [
        {"type": "tool_use", "id": "t0"},  # before any message: the default view
        *fork_records(),
        {"type": "compaction", "id": "c1", "branch_id": "leaf:a2"},
        {"type": "compaction", "id": "c2", "branch_id": "unknown"},
        {"type": "compaction", "id": "c3"},
        {"type": "tool_use", "id": "t1", "message_id": "u2"},
    ]
    t = tree(*recs)
    ordered = [(label, fork, [i.index for i in items]) for label, fork, items in t.ordered()]
    assert ordered == [(None, None, [0, 1, 2, 5, 7, 8]), ("leaf:a2", "a1", [3, 4, 6, 9])]


def test_ordered_sorts_branches_by_their_first_line_not_their_rank():
    recs = [
        msg("u1", "user", "q", ts=T1),
        msg("a1", "assistant", "old", parent="u1", ts=T2),
        msg("a2", "assistant", "newer", parent="u1", ts=T3),
        msg("a3", "assistant", "newest", parent="u1", ts=T4),
    ]
    t = tree(*recs)
    assert [s[0] for s in t.segments] == [None, "leaf:a2", "leaf:a1"]
    assert [(label, [i.index for i in items]) for label, _, items in t.ordered()] == [
        (None, [0, 3]), ("leaf:a1", [1]), ("leaf:a2", [2]),
    ]


def test_ordered_always_has_a_default_segment():
    assert [(k, f, i) for k, f, i in tree().ordered()] == [(None, None, [])]
    only = tree({"type": "note"})
    assert [(k, [i.index for i in items]) for k, _, items in only.ordered()] == [(None, [0])]


def test_a_compaction_scoped_to_a_branch_without_a_segment_gets_its_own():
    t = tree(*fork_records(), {"type": "compaction", "branch_id": "x"}, heads=[("x", "a1")])
    assert [(k, f, [i.index for i in items]) for k, f, items in t.ordered()] == [
        (None, None, [0, 1, 4]), ("leaf:a2", "a1", [2, 3]), ("x", None, [5]),
    ]


def test_prompt_above_finds_the_nearest_prompt():
    t = tree(
        msg("u1", "user", "plan"),
        msg("a1", "assistant", "where", parent="u1"),
        msg("u2", "user", [{"type": "tool_result", "tool_use_id": "t", "content": "x"}], parent="a1"),
        msg("a2", "assistant", "next", parent="u2"),
        msg("u3", "user", "rome", parent="a1"),
    )
    assert t.prompt_above("a2") is t.items[0]  # a tool-result-only message is no prompt
    assert t.prompt_above("u3") is t.items[4]
    assert t.prompt_above("u1") is t.items[0]
    assert t.prompt_above(None) is None
    assert t.prompt_above("nowhere") is None
    assert tree(msg("a1", "assistant", "x"), msg("a2", "assistant", "y")).prompt_above("a2") is None


def test_is_prompt():
    assert is_prompt(item(0, msg("u", "user", "typed")))
    assert is_prompt(item(0, msg("u", "user", [{"type": "image"}])))
    assert not is_prompt(item(0, msg("u", "user", "typed"), sidechain=True))
    assert not is_prompt(item(0, msg("u", "assistant", "typed")))
    assert not is_prompt(item(0, msg("u", "user", "")))
    assert not is_prompt(_Item(0, msg("u", "user", "typed"), "tool_use"))
    assert _Item(3, {}, "note") == _Item(3, {}, "note", None, False, None)


# --- items to entries -------------------------------------------------------------------------


def test_messages_by_role():
    em = emit(
        item(1, msg("u1", "user", "typed", parent="p", ts=T1)),
        item(2, msg("a1", "assistant", "answer", parent="u1", timestamp=T2)),
        item(3, msg("s1", "system", "a note")),
        item(4, msg("n1", None, "no role")),
        item(5, msg("e1", "user", "")),
        item(6, msg("e2", "assistant", [])),
        item(7, {"type": "message", "id": "e3", "role": "user"}),
        item(8, msg("e4", "assistant", None)),
        item(9, msg("n2", "system", 42)),
    )
    assert em.entries == [
        E("user", "text", "typed", 1, timestamp=Z1, uuid="u1", parent_uuid="p", starts_turn=True),
        E("assistant", "text", "answer", 2, timestamp=Z2, uuid="a1", parent_uuid="u1"),
        E("system", "text", "a note", 3, uuid="s1"),
        E("system", "text", "no role", 4, uuid="n1"),
        E("system", "text", "42", 9, uuid="n2"),
    ]
    assert em.unreadable == 0
    labelled = emit(item(1, msg("s1", "system", "a note", parent="u1")), item(2, msg("u2", "user", "q", parent="s1")), label="b")
    assert labelled.entries == [
        E("system", "text", "a note", 1, uuid="s1", parent_uuid="u1", branch="b"),
        E("user", "text", "q", 2, uuid="u2", parent_uuid="s1", starts_turn=True, branch="b"),
    ]


def test_message_blocks_give_thinking_tool_calls_and_results_before_the_text():
    rec = msg("a1", "assistant", [
        {"type": "thinking", "thinking": "hmm"},
        {"type": "thinking", "thinking": ""},
        {"type": "thinking"},
        {"type": "text", "text": "running"},
        {"type": "tool_use", "id": "tb1", "name": "bash", "input": {"cmd": "ls"}},
        {"type": "tool_use", "id": "tb2", "name": "grep", "input": ["a", 1]},
        {"type": "tool_use", "input": None},
        "loose",
        {"type": "image"},
        {"type": "tool_result", "tool_use_id": "tb1", "content": [{"type": "text", "text": "a.txt"}, {"text": "b.txt"}]},
        {"type": "tool_result", "tool_use_id": "other", "content": "x"},
        {"type": "tool_result", "content": None},
    ], parent="u1", ts=T1)
    assert emit(item(7, rec, sidechain=True), label="b").entries == [
        E("assistant", "thinking", "hmm", 7, timestamp=Z1, uuid="a1", is_sidechain=True, branch="b"),
        E("assistant", "tool_use", '{"cmd":"ls"}', 7, timestamp=Z1, uuid="tb1", is_sidechain=True, tool_name="bash",
          tool_input={"cmd": "ls"}, branch="b"),
        E("assistant", "tool_use", '["a",1]', 7, timestamp=Z1, uuid="tb2", is_sidechain=True, tool_name="grep", branch="b"),
        E("assistant", "tool_use", "", 7, timestamp=Z1, is_sidechain=True, branch="b"),
        E("tool", "tool_result", "a.txt\nb.txt", 7, timestamp=Z1, parent_uuid="tb1", is_sidechain=True, tool_name="bash", branch="b"),
        E("tool", "tool_result", "x", 7, timestamp=Z1, parent_uuid="other", is_sidechain=True, branch="b"),
        E("tool", "tool_result", "", 7, timestamp=Z1, is_sidechain=True, branch="b"),
        E("assistant", "text", "running\n[image]", 7, timestamp=Z1, uuid="a1", parent_uuid="u1", is_sidechain=True, branch="b"),
    ]


def test_block_tools_written_again_as_their_own_lines_are_read_from_those_lines():
    call = msg("a1", "assistant", [{"type": "tool_use", "id": "t1", "name": "bash", "input": {"cmd": "make"}}])
    res = msg("u2", "user", [{"type": "tool_result", "tool_use_id": "t1", "content": "from the block"}])
    use = {"type": "tool_use", "id": "t1", "message_id": "a1", "name": "bash", "input": {"cmd": "make"}}
    out = {"type": "tool_result", "tool_use_id": "t1", "output": "from the line"}
    assert emit(item(0, call), item(1, res), item(2, use), item(3, out)).entries == [
        E("assistant", "tool_use", '{"cmd":"make"}', 2, uuid="t1", tool_name="bash", tool_input={"cmd": "make"}),
        E("tool", "tool_result", "from the line", 3, parent_uuid="t1", tool_name="bash"),
    ]
    # without the lines, the blocks are the calls
    assert emit(item(0, call), item(1, res)).entries == [
        E("assistant", "tool_use", '{"cmd":"make"}', 0, uuid="t1", tool_name="bash", tool_input={"cmd": "make"}),
        E("tool", "tool_result", "from the block", 1, parent_uuid="t1", tool_name="bash"),
    ]


def test_tool_lines_results_and_their_names():
    em = emit(
        item(0, {"type": "tool_use", "id": "t1", "name": "bash", "input": {"cmd": "ls"}, "created_at": T1}),
        item(1, {"type": "tool_use", "id": "t2", "input": "raw"}),
        item(2, {"type": "tool_use", "name": "nameless"}),
        item(3, {"type": "tool_result", "tool_use_id": "t1", "output": LONG, "timestamp": T2}),
        item(4, {"type": "tool_result", "tool_use_id": "t2", "output": {"ok": True}}),
        item(5, {"type": "tool_result", "output": ["a", {"text": "b"}]}),
    )
    assert em.tool_names == {"t1": "bash"}
    assert em.entries == [
        E("assistant", "tool_use", '{"cmd":"ls"}', 0, timestamp=Z1, uuid="t1", tool_name="bash", tool_input={"cmd": "ls"}),
        E("assistant", "tool_use", '"raw"', 1, uuid="t2"),
        E("assistant", "tool_use", "", 2, tool_name="nameless"),
        E("tool", "tool_result", bound(LONG, False), 3, timestamp=Z2, parent_uuid="t1", tool_name="bash"),
        E("tool", "tool_result", '{"ok":true}', 4, parent_uuid="t2"),
        E("tool", "tool_result", "a\nb", 5),
    ]


def test_long_tool_payloads_are_bounded_unless_full():
    big = {"cmd": LONG}
    recs = [
        {"type": "tool_use", "id": "t1", "name": "bash", "input": big},
        {"type": "tool_result", "tool_use_id": "t1", "output": LONG},
        msg("a", "assistant", [{"type": "tool_use", "id": "t2", "input": big},
                               {"type": "tool_result", "tool_use_id": "t2", "content": LONG}]),
    ]
    raw = json.dumps(big, separators=(",", ":"))
    short = emit(*(item(i, r) for i, r in enumerate(recs)))
    assert [e.text for e in short.entries] == [bound(raw, False), bound(LONG, False), bound(raw, False), bound(LONG, False)]
    assert bound(raw, False) != raw
    full = emit(*(item(i, r) for i, r in enumerate(recs)), full=True)
    assert [e.text for e in full.entries] == [raw, LONG, raw, LONG]


def test_compactions_and_subagent_notes():
    em = emit(
        item(0, {"type": "compaction", "id": "c1", "summary": "s", "created_at": T1}),
        item(1, {"type": "compaction"}),
        item(2, {"type": "agent_session", "id": "ag1", "parent_tool_use_id": "t1", "agent_type": "skill", "agent_name": "research"}),
        item(3, {"type": "agent_session", "agent_name": "research"}),
        item(4, {"type": "agent_session", "agent_type": "skill", "agent_name": ""}),
        item(5, {"type": "agent_session"}),
        item(6, {"type": "agent_session_complete", "agent_session_id": "ag1", "is_error": True, "created_at": T2}),
        item(7, {"type": "agent_session_complete", "is_error": False}),
        item(8, {"type": "something new", "id": "x", "content": "ignored"}),
    )
    assert em.entries == [
        E("system", "compaction", COMPACTION_TEXT, 0, timestamp=Z1, uuid="c1"),
        E("system", "compaction", COMPACTION_TEXT, 1),
        E("system", "text", "Subagent skill:research started", 2, uuid="ag1", parent_uuid="t1", is_sidechain=True),
        E("system", "text", "Subagent research started", 3, is_sidechain=True),
        E("system", "text", "Subagent skill started", 4, is_sidechain=True),
        E("system", "text", "Subagent ? started", 5, is_sidechain=True),
        E("system", "text", "Subagent failed", 6, timestamp=Z2, parent_uuid="ag1", is_sidechain=True),
        E("system", "text", "Subagent finished", 7, is_sidechain=True),
    ]


def test_subagent_notes_on_a_branch_carry_its_label():
    em = emit(item(0, {"type": "agent_session", "id": "ag1"}), item(1, {"type": "agent_session_complete", "agent_session_id": "ag1"}),
              item(2, {"type": "compaction"}), label="b")
    assert [(e.text, e.branch) for e in em.entries] == [("Subagent ? started", "b"), ("Subagent finished", "b"), (COMPACTION_TEXT, "b")]


def test_a_subagents_first_user_message_is_its_task_and_the_next_are_typed():
    em = emit(
        item(0, msg("s1", "user", "task", agent_session_id="ag1"), sidechain=True),
        item(1, msg("s2", "user", "reply", agent_session_id="ag1"), sidechain=True),
        item(2, msg("s3", "user", "other task", agent_session_id="ag2"), sidechain=True),
        item(3, msg("s4", "assistant", "answer", agent_session_id="ag3"), sidechain=True),
        item(4, msg("s5", "user", "ag3's task", agent_session_id="ag3"), sidechain=True),
    )
    assert [(e.text, e.starts_turn, e.is_sidechain) for e in em.entries] == [
        ("task", False, True), ("reply", True, True), ("other task", False, True), ("answer", False, True), ("ag3's task", False, True),
    ]
    assert em.agents_prompted == {"ag1", "ag2", "ag3"}


def test_a_subagent_file_marks_every_entry_sidechain():
    em = emit(item(0, msg("u1", "user", "task")), item(1, {"type": "compaction"}), side_file=True)
    assert [(e.type, e.is_sidechain, e.starts_turn) for e in em.entries] == [("text", True, True), ("compaction", True, False)]


def test_an_item_that_breaks_costs_itself_only():
    bad = msg("a1", "assistant", [{"type": "thinking", "thinking": "kept?"}, {"type": "tool_use", "id": "t", "input": object()}])
    em = emit(item(0, msg("u1", "user", "before")), item(1, bad), item(2, {"type": "tool_use", "input": object()}),
              item(3, msg("a2", "assistant", "after")))
    assert [(e.text, e.entry_index) for e in em.entries] == [("before", 0), ("after", 3)]
    assert em.unreadable == 2


# --- branch segments --------------------------------------------------------------------------


def fork_tree(*extra: dict) -> _Tree:
    return tree(*fork_records(), *extra)


def test_the_default_segment_is_written_as_it_is():
    t = fork_tree()
    em = _Emitter(False, False, t.items)
    em.segment(None, "ignored", t.items[:2], t)
    assert em.entries == [
        E("user", "text", "plan", 0, timestamp=Z1, uuid="u1", starts_turn=True),
        E("assistant", "text", "where", 1, timestamp=Z2, uuid="a1", parent_uuid="u1"),
    ]
    em.segment("b", "a1", [], t)
    assert len(em.entries) == 2


def test_a_branch_opening_with_a_prompt_gets_a_note_that_opens_its_turn():
    t = fork_tree(
        {"type": "compaction", "id": "c", "created_at": T4},
        msg("u4", "user", "two prompts", parent="u3"),
        msg("a4", "assistant", "ok", parent="u4"),
        msg("u5", "user", "later prompt", parent="a4"),
    )
    em = _Emitter(False, False, t.items)
    em.segment(None, None, t.items[:1], t)
    c, u3, u4, a4, u5 = t.items[5], t.items[4], t.items[6], t.items[7], t.items[8]
    em.segment("b", "a1", [c, u3, u4, a4, u5], t)
    assert em.entries == [
        E("user", "text", "plan", 0, timestamp=Z1, uuid="u1", starts_turn=True),
        E("system", "text", "Branch b forks from message a1", 5, timestamp=Z4, parent_uuid="a1", starts_turn=True, branch="b"),
        E("system", "compaction", COMPACTION_TEXT, 5, timestamp=Z4, uuid="c", branch="b"),
        E("user", "text", "rome", 4, timestamp=Z4, uuid="u3", parent_uuid="a1", branch="b"),
        E("user", "text", "two prompts", 6, uuid="u4", parent_uuid="u3", starts_turn=True, branch="b"),
        E("assistant", "text", "ok", 7, uuid="a4", parent_uuid="u4", branch="b"),
        E("user", "text", "later prompt", 8, uuid="u5", parent_uuid="a4", starts_turn=True, branch="b"),
    ]


def test_a_branch_opening_with_an_answer_repeats_the_question_it_answers():
    t = fork_tree(msg("a5", "assistant", "regenerated", parent="u1"), msg("u6", "user", "more", parent="a5"))
    em = _Emitter(False, False, t.items)
    em.segment("leaf:u6", "u1", t.items[5:], t)
    assert em.entries == [
        E("system", "text", "Branch leaf:u6 forks from message u1", 5, parent_uuid="u1", starts_turn=True, branch="leaf:u6"),
        E("user", "text", "plan", 0, timestamp=Z1, parent_uuid="u1", branch="leaf:u6"),
        E("assistant", "text", "regenerated", 5, uuid="a5", parent_uuid="u1", branch="leaf:u6"),
        E("user", "text", "more", 6, uuid="u6", parent_uuid="a5", starts_turn=True, branch="leaf:u6"),
    ]


def test_a_branch_from_the_start_or_with_no_question_above_repeats_nothing():
    t = tree(msg("a1", "assistant", "hello", ts=T1), msg("a2", "assistant", "hi", parent="a1"))
    em = _Emitter(False, False, t.items)
    em.segment("x", None, [t.items[0]], t)
    em.segment("y", "a1", [t.items[1]], t)
    assert em.entries == [
        E("system", "text", "Branch x forks from the start", 0, timestamp=Z1, starts_turn=True, branch="x"),
        E("assistant", "text", "hello", 0, timestamp=Z1, uuid="a1", branch="x"),
        E("system", "text", "Branch y forks from message a1", 1, parent_uuid="a1", starts_turn=True, branch="y"),
        E("assistant", "text", "hi", 1, uuid="a2", parent_uuid="a1", branch="y"),
    ]


def test_a_branch_looks_past_subagent_lines_for_its_opening_message():
    t = fork_tree(
        {"type": "compaction", "branch_id": "b"},
        msg("s1", "user", "task", agent_session_id="ag"),
        msg("u7", "user", "own prompt", parent="a1"),
    )
    em = _Emitter(False, False, t.items)
    em.segment("b", "a1", t.items[5:], t)
    assert [(e.role, e.text, e.starts_turn, e.is_sidechain) for e in em.entries] == [
        ("system", "Branch b forks from message a1", True, False),
        ("system", COMPACTION_TEXT, False, False),
        ("user", "task", False, True),
        ("user", "own prompt", False, False),
    ]
    # a compaction scoped to a branch that owns no message (its head lies on the
    # default path: ordered() gives it no fork): only its note, and nothing repeated
    em = _Emitter(False, False, t.items)
    em.segment("c", None, [_Item(9, {"type": "compaction"}, "compaction")], t)
    assert [(e.type, e.text, e.starts_turn) for e in em.entries] == [
        ("text", "Branch c forks from the start", True), ("compaction", COMPACTION_TEXT, False),
    ]


# --- state.json ---------------------------------------------------------------------------------


def test_read_heads_from_a_list_of_branches(tmp_path: Path):
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"branches": [
        {"branch_id": "main", "head_message_id": "m2", "id": "not this", "head": "nor this"},
        {"id": "b", "head": "m3"},
        {"branch_id": "", "id": "c", "head_message_id": "", "head": "m4"},
        {"branch_id": "x"},
        {"head_message_id": "m5"},
        "not a branch",
        {"branch_id": 5, "head": "m6"},
        {"branch_id": "y", "head": ["m7"]},
    ]}))
    assert read_heads(path) == [("main", "m2"), ("b", "m3"), ("c", "m4")]


def test_read_heads_from_a_map_of_branches(tmp_path: Path):
    path = tmp_path / "state.json"
    path.write_text(json.dumps({"branches": {
        "main": {"head_message_id": "m2"},
        "b": {"head": "m3", "branch_id": "renamed"},
        "skipped": "no object",
        "nohead": {},
    }}))
    assert read_heads(path) == [("main", "m2"), ("renamed", "m3")]


@pytest.mark.parametrize(
    "content",
    [b"{not json", b'["branches"]', b'{"branches": "x"}', b'{"branches": null}', b"{}", b"\xff\xfe", b""],
)
def test_read_heads_of_a_broken_or_empty_state_is_none(tmp_path: Path, content: bytes):
    path = tmp_path / "state.json"
    path.write_bytes(content)
    assert read_heads(path) == []


def test_read_heads_of_a_missing_or_unreadable_state_is_none(tmp_path: Path):
    assert read_heads(tmp_path / "missing.json") == []
    assert read_heads(tmp_path) == []  # a directory: OSError


# --- classify and discover --------------------------------------------------------------------


def test_watch_roots(config: Config):
    assert SRC.watch_roots(config) == [config.ash_home / "sessions", config.ash_home / "chats"]
    other = Config.from_env({"HOME": "/h", "ASH_HOME": "/ash"})
    assert SRC.watch_roots(other) == [Path("/ash/sessions"), Path("/ash/chats")]
    assert (SRC.agent, SRC.append_only, AGENT, CHAT_PREFIX) == ("ash", False, "ash", "chat-")


def test_classify_a_chat_log(config: Config):
    chats = config.ash_home / "chats"
    path = chats / "telegram" / "-100" / "history.jsonl"
    assert SRC.classify(path, config) == SourceFile(
        path=path, agent="ash", kind=MAIN, project_key="telegram", session_id="chat-telegram_-100", order_key="history.jsonl"
    )
    for wrong in (chats / "telegram" / "-100" / "context.jsonl", chats / "telegram" / "history.jsonl",
                  chats / "t" / "c" / "d" / "history.jsonl", chats / "history.jsonl"):
        assert SRC.classify(wrong, config) is None, wrong


def test_classify_a_subagent_file(config: Config):
    sessions = config.ash_home / "sessions"
    path = sessions / "slack_42_7" / "subagents" / "agent_9.jsonl"
    assert SRC.classify(path, config) == SourceFile(
        path=path, agent="ash", kind=SUBAGENT, project_key="slack", session_id="agent_9",
        parent_session_id="slack_42_7", order_key="agent_9.jsonl",
    )
    assert SRC.classify(sessions / "cli" / "subagents" / "a.jsonl", config).project_key == "cli"
    assert SRC.classify(sessions / "slack_1" / "subagents" / "agent_9.json", config) is None
    assert SRC.classify(sessions / "slack_1" / "other" / "agent_9.jsonl", config) is None


def test_classify_a_session_file_names_its_main_file(config: Config):
    sessions = config.ash_home / "sessions"
    key = sessions / "telegram_1_2"
    key.mkdir(parents=True)
    for name in ("context.jsonl", "history.jsonl", "state.json"):
        assert SRC.classify(key / name, config) is None  # neither file there yet
    (key / "history.jsonl").write_text("")
    main = SourceFile(path=key / "history.jsonl", agent="ash", project_key="telegram", session_id="telegram_1_2",
                      order_key="history.jsonl")
    for name in ("context.jsonl", "history.jsonl", "state.json"):
        assert SRC.classify(key / name, config) == main
    (key / "context.jsonl").write_text("")
    main = SourceFile(path=key / "context.jsonl", agent="ash", project_key="telegram", session_id="telegram_1_2",
                      order_key="context.jsonl")
    for name in ("context.jsonl", "history.jsonl", "state.json"):
        assert SRC.classify(key / name, config) == main
    for wrong in (key / "notes.txt", key, sessions, key / "x" / "context.jsonl", key / "a" / "b" / "context.jsonl",
                  config.ash_home / "context.jsonl", config.home / "elsewhere" / "history.jsonl"):
        assert SRC.classify(wrong, config) is None, wrong


def test_discover_lists_each_session_once_sorted(config: Config):
    home = config.ash_home
    for rel in ("sessions/b_1/context.jsonl", "sessions/b_1/history.jsonl", "sessions/b_1/state.json",
                "sessions/b_1/subagents/ag.jsonl", "sessions/b_1/subagents/notes.txt", "sessions/a_1/history.jsonl",
                "sessions/d_1/context.jsonl",
                "sessions/c/notes.jsonl", "chats/tg/7/history.jsonl", "chats/tg/7/other.jsonl", "chats/tg/history.jsonl"):
        (home / rel).parent.mkdir(parents=True, exist_ok=True)
        (home / rel).write_text("")
    found = list(SRC.discover(config))
    assert [(f.path.relative_to(home).as_posix(), f.kind, f.session_id) for f in found] == [
        ("chats/tg/7/history.jsonl", MAIN, "chat-tg_7"),
        ("sessions/a_1/history.jsonl", MAIN, "a_1"),
        ("sessions/b_1/context.jsonl", MAIN, "b_1"),
        ("sessions/b_1/subagents/ag.jsonl", SUBAGENT, "ag"),
        ("sessions/d_1/context.jsonl", MAIN, "d_1"),
    ]
    assert list(SRC.discover(Config.from_env({"HOME": str(config.home / "nobody")}))) == []


# --- reading a session ----------------------------------------------------------------------------


def forked_session(config: Config, state: bool = True) -> Path:
    key = config.ash_home / "sessions" / "telegram_1_2"
    path = lines(
        key / "context.jsonl",
        {"type": "session", "version": 2, "id": "hdr", "cwd": "/w", "created_at": T1},
        msg("u1", "user", "plan", ts=T1),
        "{oops",
        msg("a1", "assistant", "where", parent="u1", ts=T2),
        msg("u2", "user", "paris", parent="a1", ts=T3),
        {"type": "tool_use", "id": "t1", "message_id": "u2", "name": "bash", "input": {"cmd": LONG}},
        msg("u3", "user", "rome", parent="a1", ts=T4),
        "",
        [1],
    )
    if state:
        (key / "state.json").write_text(json.dumps({"branches": [
            {"branch_id": "main", "head_message_id": "u2"}, {"branch_id": "b-rome", "head_message_id": "u3"},
        ]}))
    return path


def test_read_a_session_with_branches(config: Config):
    path = forked_session(config)
    size = path.stat().st_size
    with path.open("a") as fh:
        fh.write('{"type":"message"')
    result = SRC.read(SRC.classify(path, config))
    raw = json.dumps({"cmd": LONG}, separators=(",", ":"))
    assert result.entries == [
        E("user", "text", "plan", 1, timestamp=Z1, uuid="u1", starts_turn=True),
        E("assistant", "text", "where", 3, timestamp=Z2, uuid="a1", parent_uuid="u1"),
        E("user", "text", "rome", 6, timestamp=Z4, uuid="u3", parent_uuid="a1", starts_turn=True),
        E("system", "text", "Branch main forks from message a1", 4, timestamp=Z3, parent_uuid="a1", starts_turn=True, branch="main"),
        E("user", "text", "paris", 4, timestamp=Z3, uuid="u2", parent_uuid="a1", branch="main"),
        E("assistant", "tool_use", bound(raw, False), 5, uuid="t1", tool_name="bash", tool_input={"cmd": LONG}, branch="main"),
    ]
    assert result.meta == FileMeta(session_id="telegram_1_2", cwd="/w", first_prompt="plan", first_timestamp=Z1,
                                   last_timestamp=Z4, version="2", aliases=("hdr",))
    assert (result.offset, result.skipped, result.reasons) == (size, 2, {INVALID_JSON: 1, NOT_OBJECT: 1})
    assert (result.replace, result.state, result.error) == (True, {}, None)
    full = SRC.read(SRC.classify(path, config), full_text=True)
    assert full.entries[-1].text == raw


def test_read_a_session_without_state_names_its_leaves(config: Config):
    path = forked_session(config, state=False)
    result = SRC.read(SRC.classify(path, config))
    assert [(e.branch, e.text) for e in result.entries if e.role != "assistant"] == [
        (None, "plan"), (None, "rome"), ("leaf:u2", "Branch leaf:u2 forks from message a1"), ("leaf:u2", "paris"),
    ]


def test_read_a_subagent_file(config: Config):
    path = lines(
        config.ash_home / "sessions" / "api_bob" / "subagents" / "agent_x.jsonl",
        msg("s1", "user", "task", ts=T1, agent_session_id="agent_x"),
        msg("s2", "assistant", "done", ts=T2, agent_session_id="agent_x"),
    )
    lines(path.parent / "state.json", {"branches": [{"branch_id": "b", "head_message_id": "s1"}]})  # not its state
    result = SRC.read(SRC.classify(path, config))
    assert result.entries == [
        E("user", "text", "task", 0, timestamp=Z1, uuid="s1", is_sidechain=True),
        E("assistant", "text", "done", 1, timestamp=Z2, uuid="s2", is_sidechain=True),
    ]
    assert result.meta == FileMeta(session_id="agent_x", first_timestamp=Z1, last_timestamp=Z2)


def test_a_subagent_file_is_sidechain_and_takes_no_heads(config: Config):
    """Its own lines need no agent id to be sidechain, and the state.json beside it
    (in ``subagents/``) is not its state: its branches are its leaves."""
    path = lines(
        config.ash_home / "sessions" / "api_bob" / "subagents" / "agent_y.jsonl",
        msg("s1", "user", "task", ts=T1),
        msg("s2", "assistant", "first try", parent="s1", ts=T2),
        msg("s3", "assistant", "second try", parent="s1", ts=T3),
    )
    lines(path.parent / "state.json", {"branches": [{"branch_id": "b", "head_message_id": "s2"}]})
    result = SRC.read(SRC.classify(path, config))
    assert [(e.text, e.branch, e.is_sidechain) for e in result.entries] == [
        ("task", None, True),
        ("second try", None, True),
        ("Branch leaf:s2 forks from message s1", "leaf:s2", True),
        ("task", "leaf:s2", True),
        ("first try", "leaf:s2", True),
    ]


def test_read_a_missing_file_gives_its_error(tmp_path: Path):
    for name in ("context.jsonl", "history.jsonl"):
        path = tmp_path / "gone" / name
        result = SRC.read(SourceFile(path=path, agent="ash", session_id="k"))
        assert (result.entries, result.meta, result.offset) == ([], FileMeta(session_id="k"), 0)
        assert result.error == f"[Errno 2] No such file or directory: '{path}'"


def test_read_an_empty_session(config: Config):
    path = lines(config.ash_home / "sessions" / "k" / "context.jsonl")
    result = SRC.read(SRC.classify(path, config))
    assert (result.entries, result.meta, result.offset, result.skipped, result.reasons) == ([], FileMeta(session_id="k"), 0, 0, {})


# --- reading a chat log ---------------------------------------------------------------------------


def test_a_chat_log_is_read_incrementally(config: Config):
    path = lines(
        config.ash_home / "chats" / "tg" / "7" / "history.jsonl",
        {"id": "h1", "role": "user", "content": "anyone?", "created_at": T1, "type": "tool_use"},
        "",
        {"id": "h2", "role": "assistant", "created_at": T2,
         "content": [{"type": "tool_result", "tool_use_id": "t", "content": LONG}]},
    )
    file = SRC.classify(path, config)
    first = SRC.read(file)
    assert first.entries == [
        E("user", "text", "anyone?", 0, timestamp=Z1, uuid="h1", starts_turn=True),
        E("tool", "tool_result", bound(LONG, False), 2, timestamp=Z2, parent_uuid="t"),
    ]
    assert first.meta == FileMeta(session_id="chat-tg_7", first_prompt="anyone?", first_timestamp=Z1, last_timestamp=Z2)
    assert (first.offset, first.skipped, first.replace) == (path.stat().st_size, 0, True)
    assert first.state == {"line": 3, "first_prompt": "anyone?", "first_timestamp": Z1, "last_timestamp": Z2}
    assert SRC.read(file, full_text=True).entries[1].text == LONG

    lines(path, "{bad", {"id": "h3", "role": "user", "content": "again", "created_at": T3})
    with path.open("a") as fh:
        fh.write('{"id":"h4"')
    second = SRC.read(file, offset=first.offset, state=first.state)
    assert second.entries == [E("user", "text", "again", 4, timestamp=Z3, uuid="h3", starts_turn=True)]
    assert second.meta == FileMeta(session_id="chat-tg_7", first_prompt="anyone?", first_timestamp=Z1, last_timestamp=Z3)
    assert (second.offset, second.skipped, second.reasons, second.replace) == (
        path.stat().st_size - len('{"id":"h4"'), 1, {INVALID_JSON: 1}, False)
    assert second.state == {"line": 5, "first_prompt": "anyone?", "first_timestamp": Z1, "last_timestamp": Z3}

    third = SRC.read(file, offset=second.offset, state=second.state)
    assert (third.entries, third.offset, third.replace, third.skipped) == ([], second.offset, False, 0)
    assert third.meta == FileMeta(session_id="chat-tg_7", first_prompt="anyone?", first_timestamp=Z1, last_timestamp=Z3)
    assert third.state == second.state

    # an offset without state: lines are counted from there; a state without an offset: from the start
    assert [(e.text, e.entry_index) for e in SRC.read(file, offset=first.offset).entries] == [("again", 1)]
    whole = SRC.read(file, state=second.state)
    assert [(e.text, e.entry_index) for e in whole.entries] == [("anyone?", 0), (bound(LONG, False), 2), ("again", 4)]
    assert (whole.replace, whole.state["line"]) == (True, 5)


def test_a_chat_log_read_from_its_start_takes_what_the_new_lines_say(config: Config):
    path = lines(config.ash_home / "chats" / "tg" / "8" / "history.jsonl",
                 {"id": "h1", "role": "assistant", "content": "hello"})
    file = SRC.classify(path, config)
    first = SRC.read(file)
    assert first.state == {"line": 1, "first_prompt": None, "first_timestamp": None, "last_timestamp": None}
    lines(path, {"id": "h2", "role": "user", "content": "hi", "created_at": T2})
    second = SRC.read(file, offset=first.offset, state=first.state)
    assert second.meta == FileMeta(session_id="chat-tg_8", first_prompt="hi", first_timestamp=Z2, last_timestamp=Z2)


def test_a_chat_log_shorter_than_the_offset_is_read_again_whole(config: Config):
    path = lines(config.ash_home / "chats" / "tg" / "9" / "history.jsonl",
                 {"id": "h1", "role": "user", "content": "old", "created_at": T1},
                 {"id": "h2", "role": "user", "content": "older", "created_at": T2})
    file = SRC.classify(path, config)
    first = SRC.read(file)
    path.write_text(json.dumps({"id": "h9", "role": "user", "content": "new", "created_at": T3}) + "\n")
    again = SRC.read(file, offset=first.offset, state=first.state)
    assert again.entries == [E("user", "text", "new", 0, timestamp=Z3, uuid="h9", starts_turn=True)]
    assert again.meta == FileMeta(session_id="chat-tg_9", first_prompt="new", first_timestamp=Z3, last_timestamp=Z3)
    assert (again.offset, again.replace) == (path.stat().st_size, True)
    assert again.state == {"line": 1, "first_prompt": "new", "first_timestamp": Z3, "last_timestamp": Z3}
    # at exactly the file's size: nothing new, not a rewrite
    same = SRC.read(file, offset=again.offset, state=again.state)
    assert (same.entries, same.replace, same.offset) == ([], False, again.offset)


# --- the session's metadata -------------------------------------------------------------------------


def test_meta_times_prompt_version_and_aliases():
    file = SourceFile(path=Path("/x/context.jsonl"), agent="ash", session_id="k")
    entries = [
        E("system", "text", "note", timestamp=Z3, starts_turn=True, branch="b"),
        E("user", "text", "side", timestamp=None, starts_turn=True, is_sidechain=True),
        E("user", "text", "not a turn", timestamp=Z2),
        E("user", "text", "x" * 600, timestamp=Z4, starts_turn=True),
        E("user", "text", "second prompt", timestamp=Z1, starts_turn=True),
    ]
    header = {"version": 0, "id": "hdr", "cwd": "/w", "created_at": "2026-01-01T00:00:00Z"}
    assert _meta(file, entries, header) == FileMeta(
        session_id="k", cwd="/w", first_prompt="x" * 500, first_timestamp=Z1, last_timestamp=Z4, version="0", aliases=("hdr",)
    )
    assert _meta(file, [], header) == FileMeta(
        session_id="k", cwd="/w", first_timestamp="2026-01-01T00:00:00Z", last_timestamp="2026-01-01T00:00:00Z",
        version="0", aliases=("hdr",),
    )
    assert _meta(file, [], {"id": "k", "cwd": 5, "timestamp": T1}) == FileMeta(
        session_id="k", first_timestamp=Z1, last_timestamp=Z1
    )
    assert _meta(file, [E("user", "text", "", starts_turn=True)], {"id": ["k"], "version": None}) == FileMeta(session_id="k")
