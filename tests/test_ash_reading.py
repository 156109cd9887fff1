"""The Ash adapter in-process, as the indexer calls it: ``state.json``'s heads, classify
and discover, reading a session (branches, subagents) and a chat log (incrementally,
rewritten), and the session's metadata — the exact entries, metadata and skips.
(The records, items and tree one rule at a time: tests/test_ash_adapter.py,
tests/test_ash_tree.py.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from core.config import Config
from core.model import FileMeta
from core.sources.ash import AGENT, CHAT_PREFIX, _meta, read_heads
from core.sources.ash_records import (
    bound,
)
from core.sources.base import MAIN, SUBAGENT, SourceFile
from core.sources.jsonl import INVALID_JSON, NOT_OBJECT

from .ash_support import LONG, SRC, T1, T2, T3, T4, Z1, Z2, Z3, Z4, E, lines, msg


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return Config.from_env({"HOME": str(tmp_path)})


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
