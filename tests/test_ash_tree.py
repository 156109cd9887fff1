"""The Ash adapter's tree in-process: records to ``_Tree`` — what hangs where, the
tips and which is the default, the branch segments and their order, the prompt above
a point (see tests/test_ash_adapter.py for the rest of the adapter)."""

from __future__ import annotations

from pathlib import Path

import pytest

from core.config import Config
from core.sources.ash_tree import _Item, _Tree, is_prompt

from .ash_support import SRC, T1, T2, T3, T4, Z1, Z2, Z3, E, fork_records, item, lines, msg, tree


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return Config.from_env({"HOME": str(tmp_path)})


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


