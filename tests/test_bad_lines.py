"""Issue 11, points 1–3: a bad line costs that line only, for every agent.

Each test appends poison to one file of a four-agent corpus and checks, through
``Archive`` and the CLI, that nothing raises, every good line of every file is
still found (search and the reading paths), and the poison is one skipped line
counted with its reason in ``index --stats``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.api import Archive

from .bad_input_corpus import Corpus, build_corpus, deep_line
from .support import open_archive

SCRIPT = Path(sys.executable).with_name("relay-search")
POISONABLE = ("claude", "claude-sub", "codex", "gemini", "ash")


def assert_all_good_lines_found(archive: Archive, corpus: Corpus) -> None:
    listed = {s.session_id for s in archive.list_sessions(limit=500)}
    for name, words in corpus.words.items():
        sid = corpus.sessions[name]
        assert sid in listed, name
        text = "\n".join(m.text for m in archive.session_messages(sid))
        conversation = archive.get_conversation(sid)
        for turn in conversation.turns:
            archive.read_turn(sid, turn.number)
        for word in words:
            assert sid in {h.session_id for h in archive.search(word, limit=50)}, (name, word)
            assert word in text, (name, word)


def file_skips(archive: Archive, path: Path) -> dict[str, int]:
    entry = next((f for f in archive.stats().to_dict()["files_with_skips"] if f["path"] == str(path)), None)
    return entry["reasons"] if entry else {}


def run_cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "")}
    return subprocess.run([str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("name", POISONABLE)
def test_deeply_nested_line_is_one_skipped_line(tmp_path, name):
    corpus = build_corpus(tmp_path)
    corpus.append(name, deep_line(5000))
    with open_archive(tmp_path) as archive:
        assert_all_good_lines_found(archive, corpus)
        assert file_skips(archive, corpus.files[name]) == {"too deeply nested": 1}
        assert archive.stats().errors == ()


@pytest.mark.parametrize("name", ("codex", "gemini", "ash"))
def test_moderately_deep_line_is_skipped_the_same_way_everywhere(tmp_path, name):
    """Deeper than the limit but shallow enough for the decoder: still one skipped line,
    so indexing and reading (at other stack depths) agree."""
    corpus = build_corpus(tmp_path)
    corpus.append(name, deep_line(400))
    with open_archive(tmp_path) as archive:
        assert_all_good_lines_found(archive, corpus)
        assert file_skips(archive, corpus.files[name]) == {"too deeply nested": 1}


def test_claude_tool_input_nested_past_the_limit_is_dropped_not_rendered(tmp_path):
    """Claude's typed decode never builds a record's unknown parts (so a deep unknown
    record is ignored like any unknown type); a tool input is built, and one nested
    past the limit is dropped from the message rather than handed to a front end."""
    corpus = build_corpus(tmp_path)
    nested: object = 1
    for _ in range(400):
        nested = {"x": nested}
    line = {"type": "assistant", "uuid": "deep-input-1", "sessionId": corpus.sessions["claude"],
            "timestamp": "2026-11-01T09:09:00Z", "message": {"role": "assistant", "content": [
                {"type": "tool_use", "id": "toolu_deep", "name": "Bash", "input": nested}]}}
    import sys as _sys
    limit = _sys.getrecursionlimit()
    _sys.setrecursionlimit(5000)
    try:
        data = json.dumps(line).encode() + b"\n"
    finally:
        _sys.setrecursionlimit(limit)
    corpus.append("claude", data)
    corpus.append("claude", deep_line(400))
    with open_archive(tmp_path) as archive:
        assert_all_good_lines_found(archive, corpus)
        calls = [m for m in archive.session_messages(corpus.sessions["claude"]) if m.uuid == "deep-input-1"]
        assert [(m.tool_name, m.tool_input) for m in calls] == [("Bash", {})]
        assert file_skips(archive, corpus.files["claude"]) == {}


def test_deep_line_does_not_break_cli_commands(tmp_path):
    corpus = build_corpus(tmp_path)
    assert run_cli(tmp_path, "index").returncode == 0  # a good cache first
    corpus.append("claude", deep_line(5000))
    corpus.append("ash", deep_line(5000))
    for args in (("search", "dugong", "--json"), ("list", "--json"), ("show", corpus.sessions["claude"], "--json"),
                 ("index", "--stats")):
        proc = run_cli(tmp_path, *args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert "Traceback" not in proc.stderr and "RecursionError" not in proc.stderr
    hits = json.loads(run_cli(tmp_path, "search", "jacana", "--json").stdout)["results"]
    assert [h["session_id"] for h in hits] == [corpus.sessions["ash"]]


TYPE_CONFUSION = [
    ("codex", b'{"type":"response_item","payload":{"type":{}}}\n'),
    ("codex", b'{"type":[]}\n'),
    ("codex", b'{"timestamp":"2026-01-05T09:00:09.000Z","type":"response_item","payload":{"type":"message","role":[],"id":{},"content":"x"}}\n'),
    ("codex", b'{"timestamp":"2026-01-05T09:00:09.000Z","type":"response_item","payload":{"type":"function_call_output","call_id":{},"output":"x"}}\n'),
    ("codex", b'{"timestamp":"2026-01-05T09:00:09.000Z","type":"event_msg","payload":{"type":["x"]}}\n'),
    ("ash", b'{"type":"message","id":{},"role":"user","content":"x"}\n'),
    ("ash", b'{"type":"tool_result","tool_use_id":[],"output":"x"}\n'),
    ("ash", b'{"type":"tool_use","id":[1],"name":"x","input":{}}\n'),
    ("ash", b'{"type":"message","id":"m900","role":{},"content":"x","parent_id":[]}\n'),
    ("ash", b'{"type":{},"id":"m901"}\n'),
    ("gemini", b'{"id":{},"type":"user","content":"x"}\n'),
    ("gemini", b'{"id":"g-900","type":["user"],"content":"x"}\n'),
    ("gemini", b'{"$rewindTo":{}}\n'),
    ("claude", b'{"type":{},"uuid":"u-900","message":{"role":"user","content":"x"}}\n'),
]


@pytest.mark.parametrize("name,line", TYPE_CONFUSION, ids=[f"{n}-{i}" for i, (n, _) in enumerate(TYPE_CONFUSION)])
def test_wrong_types_are_one_skipped_line(tmp_path, name, line):
    corpus = build_corpus(tmp_path)
    corpus.append(name, line)
    with open_archive(tmp_path) as archive:
        assert_all_good_lines_found(archive, corpus)
        assert file_skips(archive, corpus.files[name]) == {"wrong shape": 1}
        assert archive.stats().errors == ()


def test_wrong_types_do_not_break_a_running_sync(tmp_path):
    """Appended while the archive is open: the incremental read is as safe as the first."""
    corpus = build_corpus(tmp_path)
    with open_archive(tmp_path) as archive:
        for name, line in TYPE_CONFUSION:
            corpus.append(name, line)
            archive.sync()
        assert_all_good_lines_found(archive, corpus)
        counts = {name: sum(file_skips(archive, corpus.files[name]).values()) for name in ("codex", "ash", "gemini", "claude")}
        assert counts == {n: sum(1 for m, _ in TYPE_CONFUSION if m == n) for n in counts}


BAD_UTF8 = {
    "claude": lambda c: b'{"type":"user","uuid":"bad-utf8-1","sessionId":"%s","timestamp":"2026-11-01T09:05:00Z",'
    b'"message":{"role":"user","content":"bad \xff\xfe byte"}}\n' % c.sessions["claude"].encode(),
    "claude-sub": lambda c: b'{"type":"assistant","uuid":"bad-utf8-2","isSidechain":true,"timestamp":"2026-11-01T09:05:00Z",'
    b'"message":{"role":"assistant","content":[{"type":"text","text":"bad \xff byte"}]}}\n',
    "codex": lambda c: b'{"timestamp":"2026-01-05T09:00:09.000Z","type":"response_item","payload":{"type":"message",'
    b'"role":"user","content":[{"type":"input_text","text":"bad \xff byte"}]}}\n',
    "gemini": lambda c: b'{"id":"g-bad","timestamp":"2026-04-23T12:00:09.000Z","type":"user","content":"bad \xc3 byte"}\n',
    "ash": lambda c: b'{"type":"message","id":"m-bad","role":"user","content":"bad \xff byte","created_at":"2026-02-01T11:00:00+00:00"}\n',
}


@pytest.mark.parametrize("name", POISONABLE)
def test_invalid_utf8_costs_one_line_not_the_file(tmp_path, name):
    corpus = build_corpus(tmp_path)
    corpus.append(name, BAD_UTF8[name](corpus))
    with open_archive(tmp_path) as archive:
        assert_all_good_lines_found(archive, corpus)
        assert file_skips(archive, corpus.files[name]) == {"invalid UTF-8": 1}
        assert archive.stats().errors == ()


@pytest.mark.parametrize("name", POISONABLE)
def test_invalid_utf8_appended_to_an_indexed_session(tmp_path, name):
    """The issue's case: the session was indexed, then one bad line arrives."""
    corpus = build_corpus(tmp_path)
    with open_archive(tmp_path) as archive:
        corpus.append(name, BAD_UTF8[name](corpus))
        archive.sync()
        assert_all_good_lines_found(archive, corpus)
        assert file_skips(archive, corpus.files[name]) == {"invalid UTF-8": 1}


def test_index_stats_names_the_reasons(tmp_path):
    corpus = build_corpus(tmp_path)
    corpus.append("claude", b"not json at all\n[1, 2]\n" + deep_line(3000))
    corpus.append("codex", b'{"type":[]}\n{"broken": \n')
    proc = run_cli(tmp_path, "index", "--stats")
    assert proc.returncode == 0, proc.stderr
    claude_line = next(line for line in proc.stdout.splitlines() if str(corpus.files["claude"]) in line)
    assert "3 skipped: 1 invalid JSON, 1 not an object, 1 too deeply nested" in claude_line
    codex_line = next(line for line in proc.stdout.splitlines() if str(corpus.files["codex"]) in line)
    assert "2 skipped: 1 invalid JSON, 1 wrong shape" in codex_line
    data = json.loads(run_cli(tmp_path, "index", "--stats", "--json").stdout)
    by_path = {f["path"]: f for f in data["files_with_skips"]}
    assert by_path[str(corpus.files["claude"])] == {
        "path": str(corpus.files["claude"]), "skipped": 3,
        "reasons": {"invalid JSON": 1, "not an object": 1, "too deeply nested": 1},
    }
    assert by_path[str(corpus.files["codex"])]["reasons"] == {"invalid JSON": 1, "wrong shape": 1}
    assert data["skipped_lines"] == 5


def _wait_for(archive: Archive, word: str, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if archive.search(word):
            return True
        time.sleep(0.05)
    return False


def test_poison_appended_under_a_running_watcher(tmp_path):
    """A watching archive (what `serve`, `mcp` and the app run) meets poison in every
    agent's files; every other session and the poisoned files' good lines stay found."""
    corpus = build_corpus(tmp_path)
    with open_archive(tmp_path) as archive:
        archive.start_watching()  # returns once the roots are watched (Watcher.start)
        try:
            corpus.append("claude", deep_line(5000) + BAD_UTF8["claude"](corpus))
            corpus.append("claude-sub", BAD_UTF8["claude-sub"](corpus))
            corpus.append("codex", b'{"type":"response_item","payload":{"type":{}}}\n' + deep_line(5000))
            corpus.append("gemini", deep_line(5000) + BAD_UTF8["gemini"](corpus))
            corpus.append("ash", b'{"type":"message","id":{},"role":"user","content":"x"}\n' + BAD_UTF8["ash"](corpus))
            # then one more good line in a poisoned file: the watcher must still be alive
            corpus.append("codex", b'{"timestamp":"2026-01-05T09:01:00.000Z","type":"response_item","payload":{"type":"message",'
                                   b'"role":"user","content":[{"type":"input_text","text":"late prompt about the kinkajou"}]}}\n')
            corpus.words["codex"].append("kinkajou")
            assert _wait_for(archive, "kinkajou"), "the watcher stopped indexing after the poison"
            deadline = time.monotonic() + 15
            expected = {"claude": 2, "claude-sub": 1, "codex": 2, "gemini": 2, "ash": 2}
            while time.monotonic() < deadline:
                counts = {n: sum(file_skips(archive, corpus.files[n]).values()) for n in expected}
                if counts == expected:
                    break
                time.sleep(0.05)
            assert counts == expected
            assert_all_good_lines_found(archive, corpus)
            assert archive.stats().errors == ()
        finally:
            archive.stop_watching()


def test_a_parser_failure_nobody_foresaw_costs_that_file_only(tmp_path, monkeypatch):
    """The last line of defence: an adapter that raises on a whole file (fault
    injected here, since every known shape is handled) makes that file an error in
    `index --stats`; the sync finishes and every other file is indexed."""
    from core.sources import codex

    corpus = build_corpus(tmp_path)

    def broken(self, file, **kw):
        raise RuntimeError("unforeseen")

    monkeypatch.setattr(codex.CodexSource, "read", broken)
    with open_archive(tmp_path) as archive:
        errors = dict(archive.stats().errors)
        assert errors == {str(corpus.files["codex"]): "RuntimeError: unforeseen"}
        del corpus.words["codex"]
        assert_all_good_lines_found(archive, corpus)


def test_a_record_failure_nobody_foresaw_costs_that_line_only(tmp_path, monkeypatch):
    """Inside an adapter, one record that fails in a way nobody foresaw is one
    skipped line ("unreadable record"), for the indexer and the reader alike."""
    from core.sources import ash_entries, codex_parser, gemini

    corpus = build_corpus(tmp_path)
    for module in (codex_parser, gemini, ash_entries):
        original = module.parts_text if module is not ash_entries else module.message_text

        def fragile(value, _original=original):
            if "fossa" in str(value) or "hoopoe" in str(value) or "jacana" in str(value):
                raise RuntimeError("unforeseen")
            return _original(value)

        monkeypatch.setattr(module, "parts_text" if module is not ash_entries else "message_text", fragile)
    with open_archive(tmp_path) as archive:
        for name, word in (("codex", "fossa"), ("gemini", "hoopoe"), ("ash", "jacana")):
            corpus.words[name].remove(word)
            assert archive.search(word) == []
            assert file_skips(archive, corpus.files[name]).get("unreadable record", 0) >= 1
        assert_all_good_lines_found(archive, corpus)
        assert archive.stats().errors == ()


def test_a_claude_record_that_fails_halfway_keeps_none_of_its_entries(tmp_path, monkeypatch):
    """A Claude record can yield several entries (a tool result, then the prompt typed
    beside it): when it fails after the first, the entries it already gave are dropped
    with it, so the index never holds half a record."""
    from core.sources import claude_reader

    corpus = build_corpus(tmp_path)
    line = {"type": "user", "uuid": "halfway-1", "parentUuid": None, "sessionId": corpus.sessions["claude"],
            "timestamp": "2026-11-01T09:09:00Z", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "toolu_halfway", "content": "the tarsier report is ready"},
                {"type": "text", "text": "now summarise the serval findings"}]}}  # fmt: skip
    corpus.append("claude", json.dumps(line).encode() + b"\n")
    original = claude_reader.prompt_text

    def fragile(text: str) -> str | None:
        if "serval" in text:
            raise RuntimeError("unforeseen")
        return original(text)

    monkeypatch.setattr(claude_reader, "prompt_text", fragile)
    with open_archive(tmp_path) as archive:
        assert archive.search("tarsier") == []  # the tool result given before the failure is gone too
        assert archive.search("serval") == []
        assert [m for m in archive.session_messages(corpus.sessions["claude"]) if m.uuid == "halfway-1"] == []
        assert file_skips(archive, corpus.files["claude"]) == {"unreadable record": 1}
        assert_all_good_lines_found(archive, corpus)
    monkeypatch.setattr(claude_reader, "prompt_text", original)
    with open_archive(tmp_path) as archive:  # the same line read whole: its words are found
        archive.rebuild()
        assert [h.session_id for h in archive.search("tarsier")] == [corpus.sessions["claude"]]


def test_a_bad_header_line_costs_that_line_not_the_session(tmp_path):
    """Gemini's metadata header and Codex's session_meta name the session; when that
    one line is bad the session is still listed (named by its file) and found."""
    corpus = build_corpus(tmp_path)
    for name, key in (("gemini", "sessionId"), ("codex", "payload")):
        path = corpus.files[name]
        lines = path.read_bytes().split(b"\n")
        record = json.loads(lines[0])
        if key == "payload":
            record["payload"]["id"] = {"not": "a string"}
        else:
            record[key] = {"not": "a string"}
        lines[0] = json.dumps(record).encode()
        path.write_bytes(b"\n".join(lines))
    with open_archive(tmp_path) as archive:
        by_path = {r["path"]: r["session_id"] for r in archive.catalog.files(("path", "session_id"))}
        for name in ("gemini", "codex"):
            corpus.sessions[name] = by_path[str(corpus.files[name])]
            assert corpus.sessions[name], name
            assert file_skips(archive, corpus.files[name]) == {"wrong shape": 1}
        assert corpus.sessions["codex"] == "0199a000-0000-7000-8000-0000000000c1"  # from the file name
        assert_all_good_lines_found(archive, corpus)


def test_legacy_gemini_json_with_an_invalid_byte_is_read_with_the_byte_replaced(tmp_path):
    """A legacy .json chat is one record: a bad byte in it is replaced and counted
    once, instead of the whole chat vanishing."""
    from core.fixtures.gemini import GeminiChat

    chat = GeminiChat(tmp_path / ".gemini", project="legacy", session_id="6e551011-0000-4000-8000-0000000000f1", legacy=True)
    chat.user("a legacy prompt about the lorikeet build")
    chat.gemini("The lorikeet build is green.")
    data = chat.path.read_bytes().replace(b"green", b"gr\xffeen")
    chat.path.write_bytes(data)
    with open_archive(tmp_path) as archive:
        assert [h.session_id for h in archive.search("lorikeet")] == [chat.session_id]
        text = "\n".join(m.text for m in archive.session_messages(chat.session_id))
        assert "gr\ufffdeen" in text
        assert file_skips(archive, chat.path) == {"invalid UTF-8": 1}
        assert archive.stats().errors == ()


async def test_mcp_server_over_stdio_indexes_around_poison_and_keeps_watching(tmp_path):
    """The issue's case: `relay-search mcp` on a fresh cache with a deeply nested line
    answered [] for everything. Now it indexes every other line, and poison appended
    while it runs leaves every session searchable."""
    import anyio
    from mcp import Client

    from .test_mcp import ok, relay_search_mcp

    corpus = build_corpus(tmp_path)
    corpus.append("claude", deep_line(5000))
    corpus.append("ash", deep_line(5000))

    async def found(client, word: str, sid: str, timeout: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            results = (await ok(client, "search_history", query=word, limit=50))["results"]
            if sid in {r["session_id"] for r in results}:
                return True
            await anyio.sleep(0.1)
        return False

    async with Client(relay_search_mcp(tmp_path), raise_exceptions=True, read_timeout_seconds=60) as client:
        for name, words in corpus.words.items():
            for word in words:
                assert await found(client, word, corpus.sessions[name]), (name, word)
        corpus.append("codex", b'{"type":"response_item","payload":{"type":{}}}\n' + BAD_UTF8["codex"](corpus))
        corpus.append("gemini", deep_line(5000))
        corpus.append("codex", b'{"timestamp":"2026-01-05T09:01:00.000Z","type":"response_item","payload":{"type":"message",'
                               b'"role":"user","content":[{"type":"input_text","text":"late prompt about the kinkajou"}]}}\n')
        assert await found(client, "kinkajou", corpus.sessions["codex"])
        for name, words in corpus.words.items():
            for word in words:
                assert await found(client, word, corpus.sessions[name], timeout=5), (name, word)
        conversation = await ok(client, "get_conversation", session_id_or_slug=corpus.sessions["ash"])
        assert conversation["turns"]


def test_claude_tool_input_with_an_invalid_byte_is_kept_with_it_replaced(tmp_path):
    corpus = build_corpus(tmp_path)
    corpus.append("claude", b'{"type":"assistant","uuid":"bad-input-1","sessionId":"%s","timestamp":"2026-11-01T09:09:00Z",'
                  b'"message":{"role":"assistant","content":[{"type":"tool_use","id":"toolu_bad","name":"Bash",'
                  b'"input":{"command":"ls /tmp/mar\xffmot"}}]}}\n' % corpus.sessions["claude"].encode())
    with open_archive(tmp_path) as archive:
        assert_all_good_lines_found(archive, corpus)
        calls = [m for m in archive.session_messages(corpus.sessions["claude"]) if m.uuid == "bad-input-1"]
        assert [m.tool_input for m in calls] == [{"command": "ls /tmp/mar\ufffdmot"}]
        assert file_skips(archive, corpus.files["claude"]) == {}


def test_claude_line_cut_short_inside_tool_use_result_is_skipped(tmp_path):
    """(Found by the fuzz suite.) The shortcut that decodes a record without its bulky
    toolUseResult copy must not accept a line cut short inside that copy."""
    corpus = build_corpus(tmp_path)
    line = (b'{"type":"user","uuid":"cut-1","sessionId":"%s","timestamp":"2026-11-01T09:09:00Z",'
            b'"message":{"role":"user","content":"a prompt about the manatee"},"toolUseResult":{"stdout":"x'
            % corpus.sessions["claude"].encode())
    corpus.append("claude", line + b"\n")
    with open_archive(tmp_path) as archive:
        assert_all_good_lines_found(archive, corpus)
        assert file_skips(archive, corpus.files["claude"]) == {"invalid JSON": 1}
        assert archive.search("manatee") == []


def _depth(value) -> int:
    if isinstance(value, dict):
        return 1 + max(map(_depth, value.values()), default=0)
    if isinstance(value, list):
        return 1 + max(map(_depth, value), default=0)
    return 0


_JSON = st.recursive(
    st.none() | st.integers() | st.text(alphabet="ab{[", max_size=4),
    lambda inner: st.lists(inner, max_size=80) | st.dictionaries(st.text(alphabet="k{", max_size=3), inner, max_size=6),
    max_leaves=200,
)


@settings(max_examples=300, deadline=None)
@given(value=_JSON, limit=st.integers(0, 8))
def test_too_deep_is_the_nesting_depth_over_the_limit(value, limit) -> None:
    """too_deep walks a few containers first and asks the raw bytes past that: either
    way the answer is the value's nesting depth against the limit."""
    import msgspec

    from core.sources.jsonl import too_deep

    raw = msgspec.json.encode(value)
    expected = _depth(value) > limit
    assert too_deep(value, raw, limit) == expected
    assert too_deep(value, msgspec.Raw(raw), limit) == expected
    assert too_deep(value, None, limit) == expected


def test_too_deep_on_values_of_many_containers() -> None:
    import msgspec

    from core.sources.jsonl import too_deep

    wide = [{} for _ in range(70)]
    deep: list = []
    for _ in range(9):
        deep = [deep]
    # (the walk takes the last child first: the wide list's containers come before the deep one)
    for value, limit, expected in ((wide, 1, True), (wide, 2, False), ([deep, wide], 8, True), ([deep, wide], 11, False)):
        assert too_deep(value, msgspec.json.encode(value), limit) is expected
