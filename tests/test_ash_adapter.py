"""The Ash adapter in-process: lines to ``_decode_lines``, items to ``_Emitter`` (the
entries, the branch notes and repeated questions) and the record helpers, with the
exact entries and skips they give back. The tree (what hangs where,
which tip is the default) is in tests/test_ash_tree.py; classify, discover, read and
meta on small files in tests/test_ash_reading.py.

tests/test_source_ash.py checks the same end to end (builder-made sessions); these
see each rule on its own, so that a mutation tool sees them (bench/MUTATION.md).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config import Config
from core.model import COMPACTION_TEXT
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
from core.sources.ash_tree import _Item, _Tree
from core.sources.jsonl import INVALID_JSON, NOT_OBJECT, TOO_DEEP, WRONG_SHAPE, Skips
from core.sources.tool_text import bounded

from .ash_support import LONG, T1, T2, T4, Z1, Z2, Z4, E, emit, fork_records, item, msg, tree


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
