"""Token usage: the adapters' numbers against an independent count of the real
transcripts, the report's grouping and estimate, and the CLI/MCP surfaces.

The independent count reads ``../shared/transcripts`` with nothing but ``json``:
Claude Code ``message.usage`` on assistant records, one API response per
(``message.id``, ``requestId``) with each field's maximum (the records of one
response repeat its usage as it streamed); Codex ``token_count`` events, one per
running total; Gemini messages' ``tokens``, one per message id.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.api import Archive
from core.config import Config
from core.model import Usage
from core.outputs.pricing import cost, price_for

SHARED = Path(__file__).resolve().parents[2] / "shared" / "transcripts"
needs_shared = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/transcripts not present")
FIELDS = ("input", "output", "cache_creation", "cache_read")


def _listed(kind: str) -> list[Path]:
    index = (SHARED / "INDEX.md").read_text(encoding="utf-8")
    found = re.findall(rf"### `([^`]+)`\n(?:- [^\n]*\n)*?- size: [\d,]+ bytes; lines: \d+; format: {kind}", index)
    return [SHARED / rel for rel in found]


def _link(src: Path, dst: Path) -> None:
    dst.parent.mkdir(parents=True, exist_ok=True)
    dst.symlink_to(src)


def real_home(tmp: Path) -> tuple[Path, list[Path], list[Path], list[Path]]:
    """A HOME whose agent dirs link to the real files (nothing is written near them)."""
    claude, codex, gemini = [], [], []
    projects = tmp / ".claude" / "projects"
    for path in _listed("Claude Code"):
        if path.name.startswith("agent-acompact") or path.suffix != ".jsonl":
            continue  # (compaction summarizers: counted by tests/test_usage_views.py)
        rel = path.relative_to(SHARED)
        if path.parent.name == "subagents":
            project = "-".join(rel.parts[:-3]) or "root"
            _link(path, projects / project / rel.parts[-3] / "subagents" / path.name)
        else:
            project = "-".join(rel.parts[:-1]) or "root"
            _link(path, projects / project / path.name)
        claude.append(path)
    for n, path in enumerate(_listed("Codex CLI rollout")):
        _link(path, tmp / ".codex" / "sessions" / "2026" / "01" / f"{n:02d}" / f"rollout-{n:02d}.jsonl")
        codex.append(path)
    for n, path in enumerate(_listed("Gemini CLI")):
        if path.suffix in (".json", ".jsonl"):
            _link(path, tmp / ".gemini" / "tmp" / f"project{n:02d}" / "chats" / f"session-{n:02d}{path.suffix}")
            gemini.append(path)
    return tmp, claude, codex, gemini


def _int(v) -> int:
    return v if isinstance(v, int) and not isinstance(v, bool) and v > 0 else 0


def _lines(path: Path):
    for line in path.read_bytes().splitlines():
        try:
            yield json.loads(line)
        except ValueError:
            continue


def independent_count(claude: list[Path], codex: list[Path], gemini: list[Path]) -> dict[str, list[int]]:
    """Per agent: [input, output, cache_creation, cache_read, responses]."""
    out: dict[str, list[int]] = {}
    responses: dict[tuple, list[int]] = {}
    for path in claude:
        for r in _lines(path):
            m = r.get("message") if isinstance(r, dict) and r.get("type") == "assistant" else None
            if not isinstance(m, dict) or not isinstance(m.get("usage"), dict):
                continue
            u = m["usage"]
            got = [_int(u.get("input_tokens")), _int(u.get("output_tokens")),
                   _int(u.get("cache_creation_input_tokens")), _int(u.get("cache_read_input_tokens"))]
            key = (m.get("id"), r.get("requestId"))
            responses[key] = [max(a, b) for a, b in zip(responses.get(key, got), got)]
    out["claude"] = [sum(col) for col in zip(*responses.values())] + [len(responses)]
    events: dict[tuple, list[int]] = {}
    for path in codex:
        before: dict = {}  # the running total of the file's previous event
        for r in _lines(path):
            p = r.get("payload") if isinstance(r, dict) else None
            info = p.get("info") if isinstance(p, dict) and p.get("type") == "token_count" else None
            if not isinstance(info, dict):
                continue
            total = info.get("total_token_usage") if isinstance(info.get("total_token_usage"), dict) else {}
            last = info.get("last_token_usage")
            if not isinstance(last, dict):  # older rollouts: only the running total, count its growth
                last = {k: max(0, _int(v) - _int(before.get(k))) for k, v in total.items()}
                if not total or not any(last.values()):
                    before = total or before
                    continue
            before = total or before
            key = tuple(_int(total.get(k)) for k in ("input_tokens", "cached_input_tokens", "output_tokens", "reasoning_output_tokens", "total_tokens"))
            cached = _int(last.get("cached_input_tokens"))
            events[key] = [max(0, _int(last.get("input_tokens")) - cached), _int(last.get("output_tokens")), 0, cached]
    out["codex"] = [sum(col) for col in zip(*events.values())] + [len(events)]
    messages: dict[str, list[int]] = {}
    for path in gemini:
        records = _lines(path) if path.suffix == ".jsonl" else json.loads(path.read_text())["messages"]
        for m in records:
            if isinstance(m, dict) and m.get("type") == "gemini" and isinstance(m.get("tokens"), dict):
                t = m["tokens"]
                cached = _int(t.get("cached"))
                messages[m["id"]] = [max(0, _int(t.get("input")) - cached) + _int(t.get("tool")),
                                     _int(t.get("output")) + _int(t.get("thoughts")), 0, cached]
    out["gemini"] = [sum(col) for col in zip(*messages.values())] + [len(messages)]
    return out


@needs_shared
def test_usage_totals_equal_an_independent_count_of_the_real_transcripts(tmp_path: Path) -> None:
    home, claude, codex, gemini = real_home(tmp_path / "home")
    expected = independent_count(claude, codex, gemini)
    assert expected["claude"][4] > 1000 and expected["codex"][4] > 0 and expected["gemini"][4] > 0
    config = Config.from_env({"HOME": str(home), "USER": "t", "XDG_CACHE_HOME": str(tmp_path / "cache")})
    with Archive.open(config) as archive:
        report = archive.usage_report(by="agent")
        got = {name: [t.input, t.output, t.cache_creation, t.cache_read, t.responses] for name, t in report.rows}
        assert got == expected
        # one session's usage (read for that session alone) agrees with the whole report
        by_ref = {label: t.to_dict() for label, t in archive.usage_report(by="session").rows}
        sessions = archive.list_sessions(limit=500)
        per_session = archive.sessions_usage([s.session_id for s in sessions])
        for s in sessions:
            got = per_session[s.session_id].to_dict()
            assert got == by_ref.get(s.ref or s.session_id, {**got, "responses": 0} if not got["responses"] else None), s.ref
        # a second sync over unchanged files changes nothing
        archive.sync()
        assert {n: t.total for n, t in archive.usage_report(by="agent").rows} == {n: sum(v[:4]) for n, v in expected.items()}


# --- one response written on several records; unknown models; grouping --------------------

SCRIPT = Path(sys.executable).with_name("relay-search")
SID = "dddddddd-1111-4222-8333-444444444444"


def _claude_record(n: int, *, out: int, mid: str = "msg_1", rid: str = "req_1", model: str = "claude-sonnet-4-5-20250929", day: int = 1) -> str:
    return json.dumps({
        "type": "assistant", "uuid": f"u{n}", "parentUuid": f"u{n - 1}" if n else None, "sessionId": SID,
        "timestamp": f"2026-10-{day:02d}T10:00:0{n}.000Z", "cwd": "/home/t/work/usage", "requestId": rid,
        "message": {"id": mid, "role": "assistant", "model": model, "content": [{"type": "text", "text": f"part {n}"}],
                    "usage": {"input_tokens": 10, "output_tokens": out, "cache_creation_input_tokens": 1000,
                              "cache_read_input_tokens": 20000}},
    })  # fmt: skip


@pytest.fixture
def small(tmp_path: Path) -> Path:
    """One Claude session (a response on three records, output growing as it streamed,
    then a second response a month later) and a Codex session on a model with no price."""
    from core.fixtures.codex import CodexRollout, codex_id

    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-home-t-work-usage"
    project.mkdir(parents=True)
    prompt = json.dumps({"type": "user", "uuid": "p0", "sessionId": SID, "timestamp": "2026-10-01T09:59:59.000Z",
                         "cwd": "/home/t/work/usage", "message": {"role": "user", "content": "count my tokens"}})
    lines = [prompt, _claude_record(1, out=8), _claude_record(2, out=167), _claude_record(3, out=40),
             _claude_record(4, out=5, mid="msg_2", rid="req_2", day=31)]
    (project / f"{SID}.jsonl").write_text("\n".join(lines) + "\nnot json at all\n")
    rollout = CodexRollout(home / ".codex", codex_id(9), cwd="/home/t/work/other")
    rollout.user("hi").assistant("hello").turn_context(model="mystery-model-1")
    rollout.event({"type": "token_count", "info": {
        "total_token_usage": {"input_tokens": 500, "cached_input_tokens": 200, "output_tokens": 50, "total_tokens": 550},
        "last_token_usage": {"input_tokens": 500, "cached_input_tokens": 200, "output_tokens": 50, "total_tokens": 550}}})
    rollout.event({"type": "token_count", "info": {  # Codex repeats an event with unchanged totals
        "total_token_usage": {"input_tokens": 500, "cached_input_tokens": 200, "output_tokens": 50, "total_tokens": 550},
        "last_token_usage": {"input_tokens": 500, "cached_input_tokens": 200, "output_tokens": 50, "total_tokens": 550}}})
    return home


def cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    proc = subprocess.run([str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def test_a_response_on_several_records_counts_once_with_its_final_output(small: Path) -> None:
    proc = cli(small, "usage", "--by", "model", "--json")
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    rows = {r["group"]: r for r in data["rows"]}
    sonnet = rows["claude-sonnet-4-5-20250929"]
    assert (sonnet["responses"], sonnet["output_tokens"], sonnet["input_tokens"]) == (2, 167 + 5, 20)
    assert sonnet["cache_creation_tokens"] == 2000 and sonnet["cache_read_tokens"] == 40000
    want = cost("claude-sonnet-4-5-20250929", 20, 172, 2000, 40000)
    assert want is not None and sonnet["estimated_cost_usd"] == round(want, 4)
    # no price for this model: its tokens are shown, with no cost
    mystery = rows["mystery-model-1"]
    assert (mystery["input_tokens"], mystery["cache_read_tokens"], mystery["output_tokens"]) == (300, 200, 50)
    assert mystery["responses"] == 1 and mystery["estimated_cost_usd"] is None
    assert data["total"]["unpriced_models"] == ["mystery-model-1"]
    assert data["total"]["estimated_cost_usd"] == round(want, 4)
    assert "estimate" in data["note"] and data["prices_as_of"]


def test_usage_groups_by_day_week_month_project_and_session_with_date_filters(small: Path) -> None:
    def groups(*args: str) -> dict[str, int]:
        proc = cli(small, "usage", *args, "--json")
        assert proc.returncode == 0, proc.stderr
        return {r["group"]: r["total_tokens"] for r in json.loads(proc.stdout)["rows"]}

    first, second = 10 + 167 + 21000, 10 + 5 + 21000
    codex_day = groups("--by", "day", "--agent", "codex")
    assert list(codex_day.values()) == [550]
    assert groups("--by", "day", "--agent", "claude") == {"2026-10-01": first, "2026-10-31": second}
    assert groups("--by", "month", "--agent", "claude") == {"2026-10": first + second}
    assert groups("--by", "week", "--agent", "claude") == {"2026-W40": first, "2026-W44": second}
    assert groups("--by", "day", "--agent", "claude", "--from", "2026-10-02") == {"2026-10-31": second}
    assert groups("--by", "day", "--agent", "claude", "--to", "2026-10-01") == {"2026-10-01": first}
    assert groups("--by", "project") == {"usage": first + second, "other": 550}
    assert groups("--by", "session", "--agent", "claude") == {SID: first + second}
    bad = cli(small, "usage", "--from", "last tuesday")
    assert bad.returncode == 1 and bad.stderr.count("\n") == 1


def test_usage_table_labels_the_cost_an_estimate_and_names_unpriced_models(small: Path) -> None:
    proc = cli(small, "usage", "--by", "model")
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split()[:2] == ["model", "input"] and "est. cost" in lines[0]
    mystery = next(line for line in lines if line.startswith("mystery-model-1"))
    assert mystery.rstrip().endswith("—")
    assert any(line.startswith("TOTAL") for line in lines)
    assert "an estimate, not a bill" in proc.stdout and "No price known for: mystery-model-1" in proc.stdout


def test_list_json_and_session_statistics_carry_the_session_usage(small: Path) -> None:
    proc = cli(small, "list", "--json")
    sessions = {s["session_id"]: s for s in json.loads(proc.stdout)["sessions"]}
    assert sessions[SID]["usage"]["total_tokens"] == 10 + 167 + 21000 + 10 + 5 + 21000
    assert sessions[SID]["usage"]["responses"] == 2


async def test_get_session_statistics_returns_tokens_and_estimated_cost(small: Path) -> None:
    from mcp.client import Client

    from core.front.mcp import build_server

    from .support import open_archive

    archive = open_archive(small)
    try:
        async with Client(build_server(archive), raise_exceptions=True) as c:
            result = await c.call_tool("get_session_statistics", {"session_id": SID[:8]})
        stats = result.structured_content
        assert stats["usage"]["total_tokens"] == 42192 and stats["usage"]["responses"] == 2
        assert stats["usage"]["estimated_cost_usd"] == round(cost("claude-sonnet-4-5-20250929", 20, 172, 2000, 40000), 4)
    finally:
        archive.close()


def test_price_table_matches_families_and_dated_ids_but_not_unknown_versions() -> None:
    assert price_for("claude-sonnet-4-5-20250929") == price_for("claude-sonnet-4")
    assert price_for("claude-opus-4-1-20250805").input == 15.0 and price_for("claude-opus-4-6").input == 5.0
    assert price_for("gpt-5.5") is None and price_for("aide-gpt-5") is None and price_for(None) is None
    assert cost("mystery", 1, 1, 1, 1) is None


def test_a_forked_codex_session_counts_the_copied_responses_once(tmp_path: Path) -> None:
    from core.fixtures.codex import CodexRollout, codex_id

    from .support import open_archive

    home = tmp_path / "home"

    def spend(rollout: CodexRollout, running: int, last: int) -> None:
        rollout.event({"type": "token_count", "info": {
            "total_token_usage": {"input_tokens": running, "output_tokens": 10, "total_tokens": running + 10},
            "last_token_usage": {"input_tokens": last, "output_tokens": 10, "total_tokens": last + 10}}})

    parent = CodexRollout(home / ".codex", codex_id(20))
    parent.user("first").assistant("one")
    spend(parent, 100, 100)
    parent.user("second").assistant("two")
    spend(parent, 250, 150)
    fork = CodexRollout(home / ".codex", codex_id(21), forked_from=codex_id(20))
    fork.copy_history(parent).user("mine").assistant("three")  # the parent's events come along
    spend(fork, 450, 200)
    with open_archive(home) as archive:
        report = archive.usage_report(by="session")
        assert report.total.responses == 3 and report.total.input == 450
        per_session = archive.sessions_usage([codex_id(20), codex_id(21)])
        assert per_session[codex_id(20)].input == 250 and per_session[codex_id(21)].input == 200


def test_codex_events_with_only_the_running_total_count_its_growth(tmp_path: Path) -> None:
    from core.fixtures.codex import CodexRollout, codex_id

    from .support import open_archive

    home = tmp_path / "home"
    rollout = CodexRollout(home / ".codex", codex_id(30))

    def running(inp: int, cached: int, out: int) -> None:
        rollout.event({"type": "token_count", "info": {"total_token_usage": {
            "input_tokens": inp, "cached_input_tokens": cached, "output_tokens": out, "total_tokens": inp + out}}})

    rollout.user("one").assistant("1")
    running(1000, 0, 50)
    rollout.user("two").assistant("2")
    running(2500, 900, 80)
    running(2500, 900, 80)  # repeated: nothing new
    with open_archive(home) as archive:
        totals = archive.session_usage(codex_id(30))
    assert (totals.responses, totals.input, totals.cache_read, totals.output) == (2, 1600, 900, 80)


def test_hostile_usage_values_count_nothing_and_break_nothing(tmp_path: Path) -> None:
    from core.sources.base import SourceFile
    from core.sources.claude import ClaudeSource

    path = tmp_path / f"{SID}.jsonl"
    good = json.loads(_claude_record(1, out=7))
    odd = []
    for n, usage in enumerate(["lots", None, [1, 2], {"input_tokens": "12", "output_tokens": True, "cache_read_input_tokens": -5}], start=2):
        rec = json.loads(_claude_record(n, out=1, mid=f"msg_{n}", rid=f"req_{n}"))
        rec["message"]["usage"] = usage
        odd.append(json.dumps(rec))
    path.write_text("\n".join([json.dumps(good), *odd]) + "\n")
    result = ClaudeSource().read(SourceFile(path, "claude"))
    assert result.skipped == 0 and len(result.entries) == 5  # every message still read
    assert [(u.key, u.input_tokens, u.output_tokens, u.cache_read_tokens) for u in result.usage] == [
        ("claude:msg_1:req_1", 10, 7, 20000), ("claude:msg_5:req_5", 0, 0, 0)]


def test_a_response_finished_by_appended_records_is_updated_not_added(tmp_path: Path) -> None:
    from .support import open_archive

    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-home-t-work-usage"
    project.mkdir(parents=True)
    path = project / f"{SID}.jsonl"
    prompt = json.dumps({"type": "user", "uuid": "u0", "sessionId": SID, "timestamp": "2026-10-01T09:59:59.000Z",
                         "cwd": "/home/t/work/usage", "message": {"role": "user", "content": "go"}})
    path.write_text(prompt + "\n" + _claude_record(1, out=8) + "\n")
    with open_archive(home) as archive:
        assert archive.session_usage(SID).output == 8
        with path.open("a") as fh:  # the rest of the same response, then the next one
            fh.write(_claude_record(2, out=300) + "\n" + _claude_record(3, out=4, mid="msg_9", rid="req_9") + "\n")
        result = archive.sync()
        assert result.bytes_read < path.stat().st_size  # read from where it stopped
        totals = archive.session_usage(SID)
        assert (totals.responses, totals.output) == (2, 304)


_usage_rows = st.lists(
    st.builds(
        Usage,
        key=st.sampled_from(["k1", "k2", "k3"]),
        model=st.sampled_from([None, "", "claude-opus-4-6", "claude-haiku-4-5"]),
        timestamp=st.sampled_from([None, "", "2026-10-01T10:00:00Z", "2026-10-01T11:00:00Z"]),
        input_tokens=st.integers(0, 50), output_tokens=st.integers(0, 50),
        cache_creation_tokens=st.integers(0, 50), cache_read_tokens=st.integers(0, 50),
    ),
    max_size=12,
)


@settings(max_examples=200, deadline=None)
@given(before=_usage_rows, rows=_usage_rows)
def test_merging_a_files_usage_before_storing_leaves_the_catalog_as_storing_each_record(before, rows) -> None:
    """Workers send merged usage (one row per response, core.archive.usage_records.merge): the catalog's
    rows must be what upserting every record's usage gives, also over rows stored by
    an earlier read of the file (an append)."""
    import sqlite3

    from core.archive import usage_records as usage

    def stored(batch: list[Usage]) -> list[tuple]:
        db = sqlite3.connect(":memory:")
        db.executescript(usage.CATALOG_SCHEMA)
        usage.store(db, 1, before, replace=False)
        usage.store(db, 1, batch, replace=False)
        return db.execute("SELECT * FROM usage ORDER BY key").fetchall()

    assert stored(usage.merge(rows)) == stored(rows)


def test_a_parse_workers_output_reaches_the_writer_with_its_usage_merged_and_whole(tmp_path: Path) -> None:
    """The pool pickles each file's output (its usage as one msgpack blob): the writer
    gets one row per response, each field's maximum, and every other field as sent."""
    import pickle

    from core.archive.ingest import Job, run_job
    from core.sources.base import SourceFile

    path = tmp_path / f"{SID}.jsonl"
    path.write_text("\n".join([_claude_record(1, out=8), _claude_record(2, out=167),
                               _claude_record(3, out=4, mid="msg_2", rid="req_2")]) + "\n")
    out = run_job(Job(SourceFile(path, "claude"), 7))
    back = pickle.loads(pickle.dumps(out, protocol=5))
    assert [(u.key, u.output_tokens, u.model) for u in back.usage] == [
        ("claude:msg_1:req_1", 167, "claude-sonnet-4-5-20250929"), ("claude:msg_2:req_2", 4, "claude-sonnet-4-5-20250929")]
    assert back.usage == out.usage
    for name in out.__slots__:
        if name not in ("usage", "hashes", "record_hashes", "postings", "doc_ids"):
            assert getattr(back, name) == getattr(out, name), name
    assert (back.hashes == out.hashes).all() and (back.record_hashes == out.record_hashes).all()
