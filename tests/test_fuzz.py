"""Fuzz: mutated real-shaped records of all four agents never cost more than their line.

Hypothesis mutates the lines of a four-agent corpus (wrong types in any field,
nesting past any limit, invalid UTF-8, truncation, non-objects, garbage, exact
replays and uuid reuse), before the first sync and appended after it, and checks
through ``Archive`` sync and every query that

* no exception escapes (sync, search, list_sessions, get_conversation, read_turn,
  session_messages, get_message_context, stats), and no file becomes an error;
* every word of every line left intact is still found, by search and by reading;
* skipped counts are exact for every reason that has an exact answer (invalid
  JSON, invalid UTF-8, not an object, too deeply nested), a wrong-typed field costs
  at most its line, and no record ever reaches an adapter's last-resort catch
  ("unreadable record": every shape is checked before use).

The normal run is bounded (the ``ci`` profile, derandomized, well under a minute);
``RELAY_FUZZ=long`` selects a long randomized run (see the README).
"""

from __future__ import annotations

import json
import os
import re
import shutil
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from core.api import Archive
from core.fixtures.ash import AshSession
from core.fixtures.codex import CodexRollout
from core.fixtures.gemini import GeminiChat
from core.sources.claude_records import is_ignorable
from core.sources.jsonl import INVALID_JSON, INVALID_UTF8, NOT_OBJECT, TOO_DEEP, UNREADABLE, WRONG_SHAPE

from .support import open_archive, project_dir, transcript

settings.register_profile(
    "ci", max_examples=12, derandomize=True, deadline=None, phases=[Phase.explicit, Phase.reuse, Phase.generate],
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "long", max_examples=int(os.environ.get("RELAY_FUZZ_EXAMPLES", "1500")), deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
PROFILE = "long" if os.environ.get("RELAY_FUZZ") == "long" else "ci"

WORD = re.compile(rb"\b(w[a-z]{2,}zz)\b")  # every message of the corpus carries such words
FILES = ("claude", "claude-sub", "codex", "gemini", "ash")


def _build(home: Path) -> dict[str, Path]:
    """The corpus: each agent's conversation with prompts, answers and tool calls."""
    files: dict[str, Path] = {}
    claude = transcript("11111111-1111-4111-8111-111111111111", slug="fuzz-claude")
    claude.user("first prompt about waardvarkzz and wbisonzz")
    claude.assistant("The waardvarkzz ledger balances.")
    claude.tool("Bash", {"command": "ls wcougarzz"}, "wcougarzz.txt")
    child = claude.subagent("a1b2c3d4", "subagent task about wdingozz")
    child.assistant("The wdingozz cache is warm.")
    claude.user("second prompt about wechidnazz")
    claude.assistant("The wechidnazz queue drains.")
    files["claude"] = claude.write(project_dir(home))
    files["claude-sub"] = project_dir(home) / child.relpath

    codex = CodexRollout(home / ".codex", "0199a000-0000-7000-8000-0000000000c1")
    codex.user("a codex prompt about wferretzz")
    codex.call("shell", {"command": ["ls", "wgibbonzz"]}, "whyenazz.txt")
    codex.assistant("The wferretzz parser is done.")
    codex.user("another codex prompt about wibexzz")
    codex.assistant("The wibexzz router routes.")
    files["codex"] = codex.path

    gemini = GeminiChat(home / ".gemini", session_id="5e551011-0000-4000-8000-0000000000e1")
    gemini.user("a gemini prompt about wjackalzz")
    call = gemini.tool("read_file", {"path": "wkoalazz.py"}, "wlemurzz contents")
    gemini.gemini("The wjackalzz schema validates.", tools=[call])
    gemini.user("a gemini prompt about wmarmotzz")
    gemini.gemini("The wmarmotzz index is sorted.")
    files["gemini"] = gemini.path

    ash = AshSession(home / ".ash", "telegram_9_9")
    ash.user("an ash prompt about wnarwhalzz")
    mid = ash.assistant("Looking at wocelotzz.", thinking="think about wocelotzz")
    ash.tool(mid, "bash", {"command": "ls wpumazz"}, "wquokkazz.txt")
    ash.user("an ash prompt about wravenzz")
    ash.assistant("The wravenzz mailer sent it.")
    files["ash"] = ash.context
    return files


@pytest.fixture(scope="module")
def template(tmp_path_factory) -> tuple[Path, dict[str, str]]:
    home = tmp_path_factory.mktemp("fuzz-template")
    files = _build(home)
    return home, {name: str(path.relative_to(home)) for name, path in files.items()}


# --- mutations -------------------------------------------------------------------------

WRONG_VALUES = st.sampled_from([
    {}, [], 0, -1, 1.5, True, False, None, "", "x", [[]], {"a": {}}, ["x", 1], {"type": {}},
    2**63, 2**64, -(2**63) - 1, 10**30, 1e308, "\ud83d", "\ufeff", "9999-12-31T23:59:59-23:59",  # (issue 24)
])


def _deep(depth: int) -> str:
    return '{"x":' * depth + "1" + "}" * depth


def _paths(value, prefix=()):
    """Every (path) to a value inside a decoded record, containers included."""
    yield prefix
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _paths(item, (*prefix, i))


def _set(record, path, value):
    if not path:
        return value
    target = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    return record


@dataclass
class Plan:
    """What was done to one file, and what the archive must therefore report."""

    exact: dict[str, int] = field(default_factory=dict)  # reason -> lines
    loose: int = 0  # lines that may be skipped as a wrong shape, or kept
    loose_utf8: int = 0  # lines that may be skipped as invalid UTF-8, or kept
    spoiled: set[bytes] = field(default_factory=set)  # words of lines not left intact
    extra: set[bytes] = field(default_factory=set)  # words of added lines that must be found

    def expect(self, reason: str | None) -> None:
        if reason:
            self.exact[reason] = self.exact.get(reason, 0) + 1


@st.composite
def poison_line(draw, agent: str) -> tuple[bytes, str]:
    """A bad line on its own and the reason it must be skipped for."""
    kind = draw(st.sampled_from(["deep", "bad-utf8", "non-object", "garbage", "truncated"]))
    if kind == "deep":
        line = ('{"deep":' + _deep(draw(st.integers(5000, 8000))) + ',"type":"user"}').encode()
        return line, TOO_DEEP
    if kind == "bad-utf8":
        bad = draw(st.sampled_from([b"\xff", b"\xfe\xff", b"\xc3", b"\xed\xa0\x80", b"\xe2\x82"]))
        return b'{"type":"user","uuid":"bad ' + bad + b' byte","timestamp":"2026-11-01T09:00:00Z"}', INVALID_UTF8
    if kind == "non-object":
        return draw(st.sampled_from([b"[1, 2]", b'"text"', b"42", b"null", b"true", b"[]"])), NOT_OBJECT
    if kind == "truncated":
        return b'{"type":"user","message":{"role":"user","content":"cut', INVALID_JSON
    junk = draw(st.text(min_size=1, max_size=40).filter(
        lambda t: "\n" not in t and "\r" not in t and t.strip() and t.strip()[0] not in '{["-0123456789'
        and t.strip() not in ("true", "false", "null")))
    return junk.encode(), INVALID_JSON


def _claude_text_has_words(record: dict) -> bool:
    content = (record.get("message") or {}).get("content")
    texts = [content] if isinstance(content, str) else [
        b.get("text", "") for b in content or () if isinstance(b, dict) and b.get("type") == "text"]
    return any(WORD.search(t.encode()) for t in texts if isinstance(t, str))


@st.composite
def mutate(draw, agent: str, line: bytes, plan: Plan) -> list[bytes]:
    """One line of a file, mutated; returns the line(s) that replace it."""
    words = set(WORD.findall(line))
    kind = draw(st.sampled_from(
        ["wrong-type", "deep", "bad-utf8", "truncate", "non-object", "replay", "reuse-id", "cut-emoji", "bom"]))
    record = json.loads(line)
    ignorable = agent.startswith("claude") and is_ignorable(line)
    if kind == "replay":
        return [line, line]  # a record written twice (resume): still found, never skipped
    if kind == "cut-emoji":  # Node's JSON.stringify of a string cut mid-emoji: a lone surrogate
        escape = draw(st.sampled_from([rb"\ud83d", rb"\uDC00", rb"\ud83d\ude00 \ud83d"]))
        return [WORD.sub(lambda m: m.group(1) + b" " + escape, line, count=1)]  # read, half character replaced
    if kind == "bom":
        return [b"\xef\xbb\xbf" + line]  # a byte-order mark (an editor's): costs nothing
    if kind == "reuse-id":
        if agent == "gemini" or not words:  # Gemini upserts by id: a new text replaces the old
            return [line]
        if agent.startswith("claude") and not _claude_text_has_words(record):
            return [line]  # the same uuid and tool call id is the same record (a replay)
        if agent == "codex" and record.get("type") != "response_item":
            return [line]  # UI events only stand in for missing response items
        fresh = b"wzebra" + str(draw(st.integers(0, 999))).encode() + b"zz"
        plan.extra.add(fresh)
        return [line, WORD.sub(fresh, line)]
    plan.spoiled |= words
    if kind == "wrong-type":
        paths = [p for p in _paths(record) if p]
        path = draw(st.sampled_from(paths))
        plan.loose += 1
        return [json.dumps(_set(record, path, draw(WRONG_VALUES))).encode()]
    if kind == "deep":
        deep = json.loads(_deep(10))  # a placeholder, swapped for the deep text below
        out = json.dumps({"deep": deep, **record}, separators=(",", ":")).replace(
            _deep(10), _deep(draw(st.integers(5000, 8000))), 1).encode()
        plan.expect(None if agent.startswith("claude") and is_ignorable(out) else TOO_DEEP)
        return [out]
    if kind == "bad-utf8":
        bad = draw(st.sampled_from([b"\xff", b"\xc3(", b"\xed\xa0\x80", b"\xf0\x28\x8c\x28", b"\xc0\xaf"]))
        if words:  # inside message text, which every adapter reads
            out = WORD.sub(lambda m: m.group(1)[:-1] + bad + b"z", line)
        else:
            out = b'{"bad":"x' + bad + b'y",' + line[1:]
        if agent.startswith("claude"):
            # Claude's typed decode reads text fields as strings, keeps tool inputs and
            # results raw (read later, bad bytes replaced), and skips the rest unread
            if _claude_text_has_words(record) and not ignorable:
                plan.expect(INVALID_UTF8)
            elif not ignorable:
                plan.loose_utf8 += 1
        else:
            plan.expect(INVALID_UTF8)
        return [out]
    if kind == "truncate":
        text = line.decode()
        cut = draw(st.integers(1, len(text) - 1))
        out = text[:cut].encode()
        plan.expect(None if agent.startswith("claude") and is_ignorable(out) else INVALID_JSON)
        return [out]
    plan.expect(NOT_OBJECT)
    return [json.dumps(draw(st.sampled_from([[record], "text", 7, None]))).encode()]


@st.composite
def scenarios(draw, names: tuple[str, ...]) -> dict[str, tuple[dict[int, int], int]]:
    """Per file: {line index: mutation seed count} before the first sync, and how many
    poison lines to append after it."""
    chosen = draw(st.lists(st.sampled_from(names), min_size=1, max_size=len(names), unique=True))
    return {name: draw(st.tuples(st.integers(0, 3), st.integers(0, 2))) for name in chosen}


# --- the oracle ----------------------------------------------------------------------------


def _sessions_by_file(archive: Archive) -> dict[str, str]:
    return {r["path"]: r["session_id"] for r in archive.catalog.files(("path", "session_id"))}


def check(archive: Archive, home: Path, files: dict[str, Path], plans: dict[str, Plan]) -> None:
    stats = archive.stats()
    assert stats.errors == ()
    sessions = _sessions_by_file(archive)
    listed = {s.session_id for s in archive.list_sessions(limit=500)}
    by_path = {f["path"]: f for f in stats.to_dict()["files_with_skips"]}
    for name, path in files.items():
        plan = plans[name]
        reasons = by_path.get(str(path), {}).get("reasons", {})
        got = {r: reasons.get(r, 0) for r in (INVALID_JSON, INVALID_UTF8, NOT_OBJECT, TOO_DEEP)}
        want = {r: plan.exact.get(r, 0) for r in got}
        assert want[INVALID_UTF8] <= got[INVALID_UTF8] <= want[INVALID_UTF8] + plan.loose_utf8, (name, reasons, plan)
        got[INVALID_UTF8] = want[INVALID_UTF8] = 0
        assert got == want, (name, reasons, plan)
        assert reasons.get(WRONG_SHAPE, 0) <= plan.loose, (name, reasons, plan)
        assert reasons.get(UNREADABLE, 0) == 0, (name, reasons, plan)
        sid = sessions[str(path)]
        assert sid in listed, name
        messages = archive.session_messages(sid)
        conversation = archive.get_conversation(sid)
        for turn in conversation.turns:
            archive.read_turn(sid, turn.number)
        for message in messages[:3]:
            archive.get_message_context(sid, message.sequence)
        words = (set(WORD.findall(path.read_bytes())) - plan.spoiled) | plan.extra
        for word in sorted(words):
            holders = [m for m in messages if word.decode() in m.text]
            assert holders, (name, word, plan)  # every intact line reads back
            if any(m.turn is not None for m in holders):  # (messages before the first prompt
                # belong to no turn, so a bad first prompt leaves them out of search)
                hits = {h.session_id for h in archive.search(word.decode(), limit=50)}
                assert sid in hits, (name, word, plan)


# --- the property ---------------------------------------------------------------------------


@settings(settings.get_profile(PROFILE))
@given(data=st.data())
def test_bad_records_cost_their_line_only(template, tmp_path_factory, data):
    source, rel = template
    home = tmp_path_factory.mktemp("fuzz")
    shutil.copytree(source, home, dirs_exist_ok=True)
    files = {name: home / r for name, r in rel.items()}
    plans = {name: Plan() for name in files}
    scenario = data.draw(scenarios(FILES), label="scenario")
    for name, (n_mutations, _) in scenario.items():
        lines = files[name].read_bytes().split(b"\n")
        body = [line for line in lines if line.strip()]
        targets = data.draw(st.lists(st.integers(0, len(body) - 1), max_size=n_mutations, unique=True), label=f"{name} lines")
        out: list[bytes] = []
        for i, line in enumerate(body):
            out.extend(data.draw(mutate(name, line, plans[name]), label=f"{name}:{i}") if i in targets else [line])
        files[name].write_bytes(b"\n".join(out) + b"\n")

    with open_archive(home) as archive:
        check(archive, home, files, plans)
        for name, (_, n_appended) in scenario.items():
            for _ in range(n_appended):
                line, reason = data.draw(poison_line(name), label=f"{name} appended")
                with open(files[name], "ab") as handle:
                    handle.write(line + b"\n")
                plans[name].expect(reason)
        archive.sync()
        check(archive, home, files, plans)

    # a fresh build of the same files agrees with the incremental one
    shutil.rmtree(home / ".cache", ignore_errors=True)
    with open_archive(home) as archive:
        check(archive, home, files, plans)
