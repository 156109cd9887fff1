"""Ash sessions (a message tree with branches) and chat logs, from builder-made files.

There are no public Ash transcripts; the builder writes the format that
``core.sources.ash`` documents (Ash v1/v2 ``context.jsonl`` + ``state.json``).
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from core.config import Config
from core.fixtures.ash import AshChat, AshSession
from core.model import COMPACTION_TEXT, Entry
from core.sources.ash import AshSource
from core.sources.base import MAIN, SUBAGENT, SourceFile

SRC = AshSource()


@pytest.fixture
def config(tmp_path: Path) -> Config:
    return Config.from_env({"HOME": str(tmp_path)})


def read(session: AshSession, config: Config, **kw):
    file = SRC.classify(session.context, config)
    assert file is not None and file.session_id == session.key
    return SRC.read(file, **kw)


def messages(entries: list[Entry]) -> list[tuple[str | None, str]]:
    return [
        (e.branch, e.text) for e in entries if e.type == "text" and e.role in ("user", "assistant")
    ]


def once_each(entries: list[Entry]) -> None:
    ids = [e.uuid for e in entries if e.type == "text" and e.uuid and e.role != "system"]
    assert len(ids) == len(set(ids))


def test_v1_session_without_parent_ids_is_one_chain(config: Config) -> None:
    s = AshSession(config.ash_home, "telegram_1", v1=True)
    s.user("what's the weather")
    a = s.assistant("Let me check.", thinking="need a tool")
    s.tool(a, "web_search", {"query": "weather"}, "Sunny, 21C")
    s.assistant("Sunny and 21C.")
    s.user("thanks")
    result = read(s, config)
    assert not (config.ash_home / "sessions" / "telegram_1" / "state.json").exists()
    assert result.replace is True and result.error is None and result.skipped == 0
    assert [(e.role, e.type) for e in result.entries] == [
        ("user", "text"),
        ("assistant", "thinking"),
        ("assistant", "text"),
        ("assistant", "tool_use"),
        ("tool", "tool_result"),
        ("assistant", "text"),
        ("user", "text"),
    ]
    assert all(e.branch is None for e in result.entries)
    assert [e.text for e in result.entries if e.starts_turn] == ["what's the weather", "thanks"]
    assert [e.entry_index for e in result.entries] == [1, 2, 2, 3, 4, 5, 6]
    meta = result.meta
    assert (meta.session_id, meta.version, meta.first_prompt) == (
        "telegram_1",
        "1",
        "what's the weather",
    )
    assert meta.aliases == ("telegram_1-header",)


def build_fork(config: Config) -> tuple[AshSession, dict[str, str]]:
    s = AshSession(config.ash_home)
    ids = {"u1": s.user("plan a trip")}
    ids["a1"] = s.assistant("Where to?")
    ids["u2"] = s.user("Paris")
    ids["a2"] = s.assistant("Paris it is.")
    s.fork(ids["a1"], "b-rome")
    ids["u3"] = s.user("Rome instead")
    ids["a3"] = s.assistant("Rome it is.")
    return s, ids


def test_default_view_is_newest_branch_and_others_follow_marked(config: Config) -> None:
    s, ids = build_fork(config)
    entries = read(s, config).entries
    once_each(entries)
    assert messages(entries) == [
        (None, "plan a trip"),
        (None, "Where to?"),
        (None, "Rome instead"),
        (None, "Rome it is."),
        ("main", "Paris"),
        ("main", "Paris it is."),
    ]
    marker = next(e for e in entries if e.role == "system")
    assert [e.text for e in entries if e.starts_turn] == ["plan a trip", "Rome instead", marker.text]
    assert (marker.branch, marker.parent_uuid, marker.starts_turn) == ("main", ids["a1"], True)
    assert marker.text == f"Branch main forks from message {ids['a1']}"
    # the note opens the branch's own turn, before its prompt (which starts no other turn)
    assert [e.text for e in entries[4:6]] == [marker.text, "Paris"]
    # the older branch gets a new message: it becomes the default view
    s.switch("main")
    s.user("and a hotel?")
    entries = read(s, config).entries
    assert messages(entries)[:5] == [
        (None, "plan a trip"),
        (None, "Where to?"),
        (None, "Paris"),
        (None, "Paris it is."),
        (None, "and a hotel?"),
    ]
    assert messages(entries)[5:] == [("b-rome", "Rome instead"), ("b-rome", "Rome it is.")]


def test_nested_forks_return_every_branch_once(config: Config) -> None:
    s, ids = build_fork(config)
    s.fork(ids["u3"], "b-rome-alt")  # a fork inside the fork
    s.assistant("Rome, but by train.")
    s.fork(ids["u1"], "b-none")  # a fork at the very first message
    s.assistant("No trip then.")
    entries = read(s, config).entries
    once_each(entries)
    stream = [(e.branch, e.text, e.starts_turn) for e in entries if e.role != "system"]
    assert stream == [
        (None, "plan a trip", True),
        (None, "No trip then.", False),
        # branches in order of their first line; one opening with a regenerated answer
        # repeats the question it answers, so every branch's answer has its own turn
        # (a branch's turn is opened by its note, right before these)
        ("b-rome-alt", "plan a trip", False),
        ("b-rome-alt", "Where to?", False),
        ("b-rome-alt", "Rome instead", True),
        ("b-rome-alt", "Rome, but by train.", False),
        ("main", "Paris", False),
        ("main", "Paris it is.", False),
        ("b-rome", "Rome instead", False),
        ("b-rome", "Rome it is.", False),
    ]
    repeated = [e for e in entries if e.role == "user" and e.branch and e.uuid is None]
    assert [(e.parent_uuid, e.entry_index) for e in repeated] == [(ids["u1"], 1), (ids["u3"], 5)]
    markers = [e for e in entries if e.role == "system" and e.type == "text"]
    assert [(m.branch, m.parent_uuid) for m in markers] == [
        ("b-rome-alt", ids["u1"]),
        ("main", ids["a1"]),
        ("b-rome", ids["u3"]),
    ]
    for marker in markers:  # each opens a turn, right before its branch's first message
        after = entries[entries.index(marker) + 1]
        assert marker.starts_turn and (after.branch, after.role) == (marker.branch, "user")


def test_leaves_without_state_become_implicit_branches(config: Config) -> None:
    s = AshSession(config.ash_home, state=False)
    root = s.user("root")
    s.assistant("first answer")
    s.assistant("regenerated answer", parent=root)
    entries = read(s, config).entries
    assert messages(entries)[:2] == [(None, "root"), (None, "regenerated answer")]
    other = [e for e in entries if e.text == "first answer"]
    assert other[0].branch and other[0].branch.startswith("leaf:")


def test_compaction_applies_only_to_its_branch(config: Config) -> None:
    s, _ = build_fork(config)
    s.compaction(branch_id="b-rome")
    s.compaction(branch_id="main")
    s.compaction()  # unscoped: where it was written
    entries = read(s, config).entries
    compactions = [(e.branch, e.text, e.role) for e in entries if e.type == "compaction"]
    assert compactions == [
        (None, COMPACTION_TEXT, "system"),
        (None, COMPACTION_TEXT, "system"),
        ("main", COMPACTION_TEXT, "system"),
    ]
    main_part = [e for e in entries if e.branch == "main"]
    assert main_part[-1].type == "compaction"
    default = [e.type for e in entries if e.branch is None]
    assert default[-2:] == ["compaction", "compaction"]  # b-rome's own and the unscoped one


def test_tool_pairs_stay_on_their_branch(config: Config) -> None:
    s, ids = build_fork(config)
    s.tool(ids["a3"], "search", {"q": "rome hotels"}, "3 hotels")
    s.tool(
        ids["a2"], "search", {"q": "paris hotels"}, "5 hotels"
    )  # written later, on the other branch
    entries = read(s, config).entries
    pairs = [(e.branch, e.type, e.tool_name, e.text) for e in entries if e.tool_name]
    assert pairs == [
        (None, "tool_use", "search", '{"q":"rome hotels"}'),
        (None, "tool_result", "search", "3 hotels"),
        ("main", "tool_use", "search", '{"q":"paris hotels"}'),
        ("main", "tool_result", "search", "5 hotels"),
    ]
    uses = [e for e in entries if e.type == "tool_use"]
    results = [e for e in entries if e.type == "tool_result"]
    assert [r.parent_uuid for r in results] == [u.uuid for u in uses]


def test_malformed_lines_and_partial_tail(config: Config) -> None:
    s = AshSession(config.ash_home)
    s.user("good")
    s.raw('{oops\n["list"]\n42\n\n')
    s.assistant("still good")
    size = s.context.stat().st_size
    s.raw('{"type":"message","id":"m999","role":"user","content":"half')
    result = read(s, config)
    assert result.skipped == 3 and result.offset == size
    assert [e.text for e in result.entries] == ["good", "still good"]
    s.raw('"}\n')
    entries = read(s, config).entries
    assert [e.text for e in entries][-1] == "half"
    # state.json still names the old head: the new message just continues that branch
    assert all(e.branch is None for e in entries)


def test_subagent_entries_are_sidechain(config: Config) -> None:
    s = AshSession(config.ash_home)
    s.user("research python async")
    a = s.assistant("Delegating.")
    tid = s.tool(a, "use_skill", {"skill": "research"}, "Found 3 APIs")
    agent = s.agent_session(tid)
    s.user("find async APIs", agent_session_id=agent)
    s.assistant("Which version?", agent_session_id=agent)
    s.user("3.13 only", agent_session_id=agent)
    s.agent_complete(agent, "Found 3 APIs")
    s.assistant("Here are 3 APIs.")
    entries = read(s, config).entries
    side = [e for e in entries if e.is_sidechain]
    assert [e.text for e in side] == [
        "Subagent skill:research started",
        "find async APIs",
        "Which version?",
        "3.13 only",
        "Subagent finished",
    ]
    # the delegated task is not typed by a person; the reply to the subagent is
    assert [e.text for e in entries if e.starts_turn] == ["research python async", "3.13 only"]
    assert entries[-1].text == "Here are 3 APIs." and not entries[-1].is_sidechain


def test_content_blocks_without_explicit_tool_entries(config: Config) -> None:
    s = AshSession(config.ash_home)
    s.user("run it")
    s.message(
        "assistant",
        [
            {"type": "text", "text": "Running."},
            {"type": "tool_use", "id": "tu1", "name": "bash", "input": {"cmd": "make"}},
        ],
    )
    s.message("user", [{"type": "tool_result", "tool_use_id": "tu1", "content": "built"}])
    explicit = s.message(
        "assistant", [{"type": "tool_use", "id": "tu2", "name": "bash", "input": {"cmd": "x"}}]
    )
    s.raw(
        json.dumps(
            {
                "type": "tool_use",
                "id": "tu2",
                "message_id": explicit,
                "name": "bash",
                "input": {"cmd": "x"},
            }
        )
        + "\n"
    )
    entries = read(s, config).entries
    assert [(e.type, e.tool_name, e.text) for e in entries if e.tool_name] == [
        ("tool_use", "bash", '{"cmd":"make"}'),
        ("tool_result", "bash", "built"),
        ("tool_use", "bash", '{"cmd":"x"}'),
    ]
    assert [e.text for e in entries if e.starts_turn] == [
        "run it"
    ]  # a tool_result-only user message is no prompt


def test_state_variants_and_broken_state(config: Config) -> None:
    s, ids = build_fork(config)
    s.state_path.write_text(
        json.dumps({"branches": {"main": {"head": ids["a2"]}, "b-rome": {"head": ids["a3"]}}})
    )
    assert [b for b, _ in messages(read(s, config).entries)].count("main") == 2
    s.state_path.write_text("{not json")
    entries = read(s, config).entries
    assert {e.branch for e in entries} == {None, f"leaf:{ids['a2']}"}


def test_subagent_files_history_fallback_and_classify(config: Config) -> None:
    s = AshSession(config.ash_home, "api_bob")
    s.user("hello")
    sub = s.dir / "subagents" / "agent_x.jsonl"
    sub.parent.mkdir()
    sub.write_text(
        json.dumps(
            {
                "type": "message",
                "id": "s1",
                "role": "user",
                "content": "task",
                "agent_session_id": "agent_x",
                "created_at": "2026-02-01T10:05:00+00:00",
            }
        )
        + "\n"
    )
    lone = config.ash_home / "sessions" / "cli"
    lone.mkdir()
    (lone / "history.jsonl").write_text(
        json.dumps({"id": "h1", "role": "user", "content": "only history"}) + "\n"
    )
    files = {f.path: f for f in SRC.discover(config)}
    assert files[s.context].kind == MAIN and files[s.context].project_key == "api"
    assert files[sub].kind == SUBAGENT and files[sub].parent_session_id == "api_bob"
    assert all(e.is_sidechain for e in SRC.read(files[sub]).entries)
    assert [e.text for e in SRC.read(files[lone / "history.jsonl"]).entries] == ["only history"]
    assert s.history not in files  # a copy of context.jsonl's messages
    # a change to state.json or history.jsonl re-reads the session's context file
    assert SRC.classify(s.state_path, config).path == s.context
    assert SRC.classify(s.history, config).path == s.context
    assert SRC.classify(config.ash_home / "sessions" / "x" / "notes.txt", config) is None


def test_chat_history_is_its_own_session_read_incrementally(config: Config) -> None:
    chat = AshChat(config.ash_home, "telegram", "-1001")
    chat.say("user", "anyone up?", username="alice")
    chat.say("user", "@ash what time is it", username="bob")
    chat.say("assistant", "It is 9:02.")
    file = SRC.classify(chat.path, config)
    assert (file.session_id, file.kind, file.project_key) == (
        "chat-telegram_-1001",
        MAIN,
        "telegram",
    )
    first = SRC.read(file)
    assert [e.text for e in first.entries if e.starts_turn] == [
        "anyone up?",
        "@ash what time is it",
    ]
    chat.raw("garbage\n")
    chat.say("user", "thanks", username="bob")
    chat.raw('{"id":"h9","role":"user","content":"typing')
    second = SRC.read(file, offset=first.offset, state=first.state)
    assert second.replace is False and second.skipped == 1
    assert [(e.text, e.entry_index) for e in second.entries] == [("thanks", 4)]
    assert second.meta.first_prompt == "anyone up?"


def test_missing_files_never_raise(tmp_path: Path) -> None:
    result = SRC.read(SourceFile(path=tmp_path / "nope" / "context.jsonl", agent="ash"))
    assert result.error and result.entries == []
    counts = Counter(e.type for e in result.entries)
    assert not counts


def test_record_ids_reused_by_two_sessions_do_not_link_them(tmp_path: Path) -> None:
    """Ash numbers its records per session (``m001`` in each): equal ids in two sessions
    are no replay or continuation, so each is a session of its own (issue 24)."""
    from .hostile_support import cli_json

    first = AshSession(tmp_path / ".ash", key="telegram_1_1")
    second = AshSession(tmp_path / ".ash", key="telegram_2_2")
    for session, word in ((first, "alpha"), (second, "beta")):
        session.user(f"plan the {word} rollout")
        session.assistant(f"The {word} rollout is planned.")
    ids = {json.loads(line).get("id") for s in (first, second) for line in s.context.read_text().splitlines()}
    assert {"m001", "m002"} <= ids  # (the same ids in both files: the case under test)
    listed = cli_json(tmp_path, "list")["sessions"]
    assert sorted((s["session_id"], s["chain_length"], s["slug"]) for s in listed) == [
        ("telegram_1_1", 1, None),
        ("telegram_2_2", 1, None),
    ]
    for word, key in (("alpha", "telegram_1_1"), ("beta", "telegram_2_2")):
        assert [h["session_id"] for h in cli_json(tmp_path, "search", word)["results"]] == [key]
