"""The fixture builders must write what Claude Code writes, or every parser test lies.

Record shapes are checked against real transcripts in ``../shared/transcripts`` (those
comparisons skip when the samples are absent); layout, determinism and the demo
corpus's promised features are checked directly.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from datetime import datetime, timedelta, timezone
from functools import cache
from pathlib import Path
from typing import Any

import pytest

from core.fixtures.claude import ClaudeTranscript, project_dir_name
from core.fixtures.demo import write_demo_corpus

SHARED = Path(__file__).resolve().parents[2] / "shared" / "transcripts"
SPOTTER = SHARED / "spotter"
CCL = SHARED / "claude-code-log" / "test_data" / "real_projects"
START = datetime(2026, 2, 11, 20, 30, tzinfo=timezone.utc)
TS = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$")

needs_samples = pytest.mark.skipif(not SPOTTER.is_dir(), reason="../shared/transcripts not present")


# -- classify records the same way for real and built files ---------------------------


def kind(rec: dict[str, Any]) -> str | None:
    t = rec.get("type")
    if t in ("summary", "file-history-snapshot", "custom-title", "ai-title"):
        return t
    if t == "progress":
        return f"progress:{(rec.get('data') or {}).get('type')}"
    if t == "system":
        return f"system:{rec.get('subtype')}"
    content = (rec.get("message") or {}).get("content")
    if t == "assistant":
        return "assistant"
    if t != "user":
        return None
    if rec.get("isCompactSummary"):
        return "compact-summary"
    if rec.get("isMeta"):
        return "caveat" if isinstance(content, str) and "Caveat:" in content else None
    if isinstance(content, list) and any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content):
        return "tool-result"
    text = content if isinstance(content, str) else ""
    if text.startswith("<command-name>"):
        return "command"
    if text.startswith("<local-command-stdout>"):
        return "stdout"
    if text.startswith(("<", "[Request interrupted")):
        return None
    return "prompt"


def shapes(records: list[dict[str, Any]]) -> dict[str, set[tuple[str, ...]]]:
    """Per kind: top-level key sets, plus nested shapes that parsers also rely on."""
    out: dict[str, set[tuple[str, ...]]] = defaultdict(set)
    tools: dict[str, str] = {}
    for rec in records:
        k = kind(rec)
        if k is None:
            continue
        k = f"side:{k}" if rec.get("isSidechain") else k
        out[k].add(tuple(sorted(rec)))
        msg = rec.get("message") or {}
        if k.endswith("assistant"):
            out["assistant.message(order)"].add(tuple(msg))
            out["assistant.usage"].add(tuple(sorted(k2 for k2 in msg.get("usage", {}) if k2 != "server_tool_use")))
            for b in msg.get("content", []):
                out[f"block:{b.get('type')}"].add(tuple(sorted(b)))
                if b.get("type") == "tool_use":
                    tools[b["id"]] = b["name"]
        if k.endswith("tool-result"):
            for b in msg["content"]:
                name = tools.get(b.get("tool_use_id"), "?")
                tur = rec.get("toolUseResult")
                if name == "?":
                    continue
                out[f"block:tool_result:{'error' if b.get('is_error') else name}"].add(tuple(b))
                if isinstance(tur, dict):
                    extra = f":{tur.get('mode')}" if name == "Grep" else ""
                    out[f"toolUseResult:{name}{extra}"].add(tuple(sorted(tur)))
        if k.startswith("progress:"):
            out[f"{k}.data"].add(tuple(sorted(rec["data"])))
        if k == "system:compact_boundary":
            out["compactMetadata"].add(tuple(sorted(rec["compactMetadata"])))
    return out


def load(*paths: Path) -> list[dict[str, Any]]:
    recs = []
    for p in paths:
        for line in p.read_text(encoding="utf-8").splitlines():
            rec = json.loads(line)
            if isinstance(rec, dict):
                recs.append(rec)
    return recs


@cache
def real_shapes(dialect: str) -> dict[str, set[tuple[str, ...]]]:
    if dialect == "2.1":
        mains = [SPOTTER / f"{s}.jsonl" for s in ("258c7280-ae70-4798-800f-63464d01a85d",
                                                    "4d5611e5-241a-462a-8d15-5122611a9569",
                                                    "ae4a77f8-aedd-4bc1-888f-c94edc91af04")]
        subs = [p for p in SPOTTER.glob("*/subagents/agent-a*.jsonl") if "acompact" not in p.name]
        return shapes(load(*mains, *subs))
    if dialect == "2.0":
        rabbit = CCL / "-Users-dain-workspace-coderabbit-review-helper"
        return shapes(load(*CCL.glob("-src-deep-manifest/*.jsonl"), rabbit / "agent-668b5ac2.jsonl",
                           rabbit / "cb2e607c-c758-415a-8b45-c49e4631906a.jsonl"))
    return shapes(load(*(CCL / "-Users-dain-workspace-claude-code-log-sample" / f for f in (
        "326189cf-5676-4237-8cde-1ce80aae4a9f.jsonl", "07f2e15c-a38b-454b-9148-60edc06de401.jsonl"))))


# -- builders exercising every event -------------------------------------------------


def build(version: str, *, layout: str = "new", git_branch: str | None = "main",
          slug: str | None = "modular-petting-thompson") -> ClaudeTranscript:
    """Every event once. 1.0.x had neither slugs nor subagent files, so those are left out there."""
    t = ClaudeTranscript("0b1f7c39-9a55-4c1e-8f0e-3f6f1d2a9e11", cwd="/home/u/work/x", slug=slug,
                         version=version, start=START, git_branch=git_branch, hooks=("$HOME/.claude/hooks/a.sh",))
    t.user("Implement the annotation schema")
    t.thinking("Look at the schema first.")
    t.assistant("Let me look at the schema.")
    t.tool("Bash", {"command": "ls", "description": "List files"}, "a.py\nb.py")
    t.tool("Bash", {"command": "false"}, "Exit code 1", is_error=True)
    t.tool("Read", {"file_path": "/home/u/work/x/a.py"}, "import os\n")
    t.tool("Write", {"file_path": "/home/u/work/x/c.py", "content": "x = 1\n"})
    t.tool("Edit", {"file_path": "/home/u/work/x/c.py", "old_string": "x = 1", "new_string": "x = 2",
                    "replace_all": False})
    t.tool("Grep", {"pattern": "x", "output_mode": "content"}, "c.py:1:x = 2")
    t.tool("Grep", {"pattern": "x"}, "Found 1 file\nc.py")
    t.tool("Glob", {"pattern": "**/*.py"}, "/home/u/work/x/a.py")
    t.progress()
    t.progress("bash_progress", output="running")
    if not version.startswith("1."):
        agent = "a881341" if layout == "new" else "c8d9b115"
        sub = t.subagent(agent, "Explore the schema", layout="new" if layout == "new" else "old")
        sub.tool("Glob", {"pattern": "**/*.ex"}, "No files found")
        sub.assistant("There are no Elixir files.")
    t.command("compact", "Compacted", args="and continue")
    t.compact("Analysis: the user asked for X.")
    t.user("continue", as_blocks=True, ide_file="/home/u/work/x/a.py", images=1)
    t.assistant("Continuing.")
    return t


# (version, dialect, subagent layout, git branch, slug): the 2.0 samples with subagents predate slugs.
DIALECTS = [("2.1.39", "2.1", "new", "main", "modular-petting-thompson"), ("2.0.37", "2.0", "old", "master", None),
            ("1.0.51", "1.0", "old", None, None)]


@needs_samples
@pytest.mark.parametrize(("version", "dialect", "layout", "branch", "slug"), DIALECTS)
def test_records_have_the_real_shapes(
    version: str, dialect: str, layout: str, branch: str | None, slug: str | None
) -> None:
    t = build(version, layout=layout, git_branch=branch, slug=slug)
    built = shapes([json.loads(x) for f in (t, *t.subagents) for x in f.lines()])
    real = real_shapes(dialect)
    compared = set()
    for k, ours in built.items():
        if k not in real:
            continue
        compared.add(k)
        for shape in ours:
            assert shape in real[k], f"{version} {k}: {shape} not among real shapes {sorted(real[k])}"
    must = {"prompt", "assistant", "assistant.message(order)", "assistant.usage", "tool-result",
            "block:tool_use", "block:text", "toolUseResult:Bash", "block:tool_result:Bash"}
    if dialect != "1.0":
        must |= {"file-history-snapshot", "caveat", "command", "stdout", "toolUseResult:Read", "toolUseResult:Glob",
                 "toolUseResult:Task", "block:thinking", "toolUseResult:Edit", "toolUseResult:Write"}
    if dialect != "1.0":
        must |= {"side:prompt", "side:assistant", "side:tool-result"}
    if dialect == "2.1":
        must |= {"progress:hook_progress", "progress:hook_progress.data", "progress:bash_progress.data",
                 "progress:agent_progress", "system:compact_boundary", "compact-summary", "compactMetadata",
                 "toolUseResult:Grep:content", "toolUseResult:Grep:files_with_matches", "block:tool_result:error"}
    assert must <= compared, f"not compared: {sorted(must - compared)}"


@needs_samples
def test_summary_record_matches_1_0() -> None:
    t = build("1.0.51", git_branch=None)
    t.summary("Ruff Linting Fixes", t.last_uuid or "")
    first = json.loads(t.lines()[0])
    assert tuple(sorted(first)) in real_shapes("1.0")["summary"]


def test_lines_are_json_objects_with_ms_utc_timestamps() -> None:
    for version, *_ in DIALECTS:
        t = build(version)
        for line in [x for f in (t, *t.subagents) for x in f.lines()]:
            rec = json.loads(line)
            assert isinstance(rec, dict)
            assert ": " not in line[:40] and ", " not in line[:40]  # compact separators like the CLI
            if "timestamp" in rec:
                assert TS.match(rec["timestamp"]), rec["timestamp"]


def test_parent_chain_links_like_claude_code() -> None:
    t = build("2.1.39")
    recs = [json.loads(x) for x in t.lines()]
    seen: set[str] = set()
    uses: dict[str, str] = {}
    for rec in recs:
        if "uuid" not in rec:
            continue
        parent = rec["parentUuid"]
        if rec.get("subtype") == "compact_boundary":
            assert parent is None and rec["logicalParentUuid"] in seen
        elif parent is not None:
            assert parent in seen
        else:
            assert not seen  # only the very first record starts the chain
        content = (rec.get("message") or {}).get("content")
        for b in content if isinstance(content, list) else []:
            if b.get("type") == "tool_use":
                uses[b["id"]] = rec["uuid"]
            if b.get("type") == "tool_result":
                assert parent == uses[b["tool_use_id"]] == rec["sourceToolAssistantUUID"]
        seen.add(rec["uuid"])
    assert "slug" not in next(r for r in recs if r.get("type") == "user")  # first prompt predates the slug
    assert recs[-1]["slug"] == "modular-petting-thompson"


def test_write_lays_out_both_subagent_layouts(tmp_path: Path) -> None:
    new = build("2.1.39", layout="new")
    main = new.write(tmp_path / "p")
    sub_file = tmp_path / "p" / new.session_id / "subagents" / "agent-a881341.jsonl"
    assert main == tmp_path / "p" / f"{new.session_id}.jsonl" and sub_file.is_file()
    old = build("2.0.37", layout="old")
    old.write(tmp_path / "q")
    old_file = tmp_path / "q" / "agent-c8d9b115.jsonl"
    assert old_file.is_file() and not (tmp_path / "q" / old.session_id).exists()
    for path, parent in ((sub_file, new), (old_file, old)):
        recs = [json.loads(x) for x in path.read_text().splitlines()]
        assert recs[0]["parentUuid"] is None and recs[0]["type"] == "user"
        assert all(r["isSidechain"] and r["sessionId"] == parent.session_id and "agentId" in r for r in recs)
    parent_recs = [json.loads(x) for x in main.read_text().splitlines()]
    task = next(r for r in parent_recs
                if isinstance(r.get("toolUseResult"), dict) and r["toolUseResult"].get("agentId"))
    blocks = task["message"]["content"][0]["content"]
    assert blocks[0]["text"] == "There are no Elixir files." and blocks[1]["text"].startswith("agentId: a881341")
    assert main.read_text().endswith("\n")


def test_titles_raw_and_summary_placement() -> None:
    t = ClaudeTranscript("s", cwd="/x", start=START, version="1.0.51")
    t.user("hi")
    leaf = t.assistant("hello")
    t.title("Mine")
    t.title("Generated", kind="ai-title")
    t.raw('{"type":"user","message":')
    t.summary("A summary", leaf)
    lines = t.lines()
    assert json.loads(lines[0]) == {"type": "summary", "summary": "A summary", "leafUuid": leaf}
    assert json.loads(lines[-3]) == {"type": "custom-title", "customTitle": "Mine", "sessionId": "s"}
    assert json.loads(lines[-2]) == {"type": "ai-title", "aiTitle": "Generated", "sessionId": "s"}
    assert lines[-1] == '{"type":"user","message":'


def test_project_dir_name() -> None:
    assert project_dir_name("/home/u/work/x") == "-home-u-work-x"
    real = "-Users-dain-workspace-danieldemmel-me-next"  # a real dir name in the samples
    assert project_dir_name("/Users/dain/workspace/danieldemmel.me-next") == real
    assert project_dir_name("/home/u/my_project v2") == "-home-u-my-project-v2"
    long = project_dir_name("/" + "a" * 300)
    assert len(long) > 200 and re.fullmatch(r"-a{199}-[0-9a-z]+", long)


def test_builder_is_deterministic() -> None:
    assert build("2.1.39").lines() == build("2.1.39").lines()


# -- the demo corpus ----------------------------------------------------------------------


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_demo_corpus_is_deterministic(tmp_path: Path) -> None:
    # (no time limit: how fast it writes depends on the machine and its load, not on the code)
    a = write_demo_corpus(tmp_path / "a")
    b = write_demo_corpus(tmp_path / "b")
    assert _files(a.root) == _files(b.root)
    assert a.session_ids == b.session_ids and a.queries == b.queries


def test_demo_corpus_features(tmp_path: Path) -> None:
    corpus = write_demo_corpus(tmp_path)
    assert corpus.root == tmp_path / ".claude" / "projects"
    mains = {p.stem: p for p in corpus.root.glob("*/*.jsonl") if not p.name.startswith("agent-")}
    assert set(mains) == set(corpus.session_ids)
    recs = {sid: load(p) for sid, p in mains.items()}
    projects = {r["cwd"] for rs in recs.values() for r in rs if "cwd" in r}
    assert len(projects) >= 4 and all(p.startswith("/home/demo/work/") for p in projects)

    # the slug chain: >= 5 sessions, same slug, in time order
    chain = [sid for sid, rs in recs.items() if any(r.get("slug") == corpus.chain_slug for r in rs)]
    assert sorted(chain) == sorted(corpus.chain_session_ids) and len(chain) >= 5
    firsts = [min(r["timestamp"] for r in recs[s] if "timestamp" in r) for s in corpus.chain_session_ids]
    assert firsts == sorted(firsts)

    every = [r for rs in recs.values() for r in rs]
    kinds = {kind(r) for r in every}
    assert {"system:compact_boundary", "compact-summary", "summary", "custom-title", "ai-title", "command",
            "progress:hook_progress", "progress:bash_progress"} <= kinds
    assert any(r.get("subtype") == "compact_boundary" for r in recs[corpus.compacted_session_id])
    assert any(r.get("version", "").startswith("1.0") for r in every)
    blocks = [b for r in every for b in (r.get("message") or {}).get("content", []) if isinstance(b, dict)]
    assert {"thinking", "image"} <= {b.get("type") for b in blocks}
    tools = {b["name"] for b in blocks if b.get("type") == "tool_use"}
    assert {"Bash", "Read", "Edit", "Write", "Grep", "Glob", "Task"} <= tools
    assert any(kind(r) == "prompt" and isinstance(r["message"]["content"], list) for r in every)
    outputs = [b["content"] for b in blocks if b.get("type") == "tool_result" and isinstance(b["content"], str)]
    assert any("\npyright 1.1.390 is available\n" in out for out in outputs)
    assert max(sum(kind(r) == "prompt" for r in rs) for rs in recs.values()) >= 300

    # subagents in both layouts
    assert list(corpus.root.glob("*/*/subagents/agent-*.jsonl")) and list(corpus.root.glob("*/agent-*.jsonl"))

    # the newest session is live: its last record a few minutes before now
    last = max((r["timestamp"], sid) for sid, rs in recs.items() for r in rs if "timestamp" in r)
    assert last[1] == corpus.live_session_id
    age = corpus.now - datetime.fromisoformat(last[0].replace("Z", "+00:00"))
    assert timedelta(0) <= age <= timedelta(minutes=3)


def test_demo_queries_have_one_right_answer(tmp_path: Path) -> None:
    corpus = write_demo_corpus(tmp_path)
    text: dict[str, str] = {}
    for sid in corpus.session_ids:
        files = [*corpus.root.glob(f"*/{sid}.jsonl"), *corpus.root.glob(f"*/{sid}/subagents/*.jsonl")]
        text[sid] = " ".join(json.dumps(r, ensure_ascii=False) for f in files for r in load(f)).lower()
    for sid in corpus.session_ids:  # old-layout subagents belong to their parent session
        for f in corpus.root.glob("*/agent-*.jsonl"):
            recs = load(f)
            if recs[0]["sessionId"] == sid:
                text[sid] += " ".join(json.dumps(r, ensure_ascii=False) for r in recs).lower()
    for query, expected in corpus.queries:
        hits = [sid for sid, body in text.items() if all(w in body for w in query.lower().split())]
        assert hits == [expected], query


def test_demo_corpus_follows_now(tmp_path: Path) -> None:
    now = datetime(2031, 5, 2, 8, 30, tzinfo=timezone.utc)
    corpus = write_demo_corpus(tmp_path, now=now)
    live = corpus.root.glob(f"*/{corpus.live_session_id}.jsonl")
    stamps = [r["timestamp"] for r in load(next(live)) if "timestamp" in r]
    assert stamps[-1].startswith("2031-05-02T08:2")
    mtime = next(corpus.root.glob(f"*/{corpus.live_session_id}.jsonl")).stat().st_mtime
    assert abs(mtime - datetime.fromisoformat(stamps[-1].replace("Z", "+00:00")).timestamp()) < 1


# -- what Claude Code shows besides the conversation (issue 34) ------------------------------


def _notice_kind(rec: dict[str, Any]) -> tuple[str, ...] | None:
    if rec.get("type") == "system" and rec.get("subtype") in ("away_summary", "local_command", "stop_hook_summary",
                                                              "api_error"):
        return ("system", rec["subtype"])
    if rec.get("type") == "attachment" and str((rec.get("attachment") or {}).get("type", "")).startswith("hook_"):
        return ("attachment", rec["attachment"]["type"])
    return None


@cache
def real_notice_shapes() -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    """Per kind, the top-level keys (and a hook attachment's or an error's keys) of every sample."""
    out: dict[tuple[str, ...], set[tuple[str, ...]]] = defaultdict(set)
    for path in SHARED.rglob("*.jsonl"):
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            k = _notice_kind(rec) if isinstance(rec, dict) else None
            if k is not None:
                out[k].add(tuple(sorted(rec)))
                inner = rec.get("attachment") or rec.get("error")
                if isinstance(inner, dict) and inner:
                    out[(*k, "inner")].add(tuple(sorted(inner)))
    return out


@needs_samples
def test_notice_records_have_the_real_shapes() -> None:
    """Each builder's records against samples of the same kind (2.1.114 hooks and away summaries,
    2.1.38 /model, 2.0.5 API errors; the error's fields as the 2.1 fixtures name them)."""
    built: list[dict[str, Any]] = []
    for version in ("2.1.114", "2.1.38", "2.0.5"):
        t = ClaudeTranscript("0b1f7c39-9a55-4c1e-8f0e-3f6f1d2a9e12", cwd="/home/u/work/x", version=version, start=START,
                             git_branch="master")
        t.user("Run the checks")
        t.tool("Edit", {"file_path": "/home/u/work/x/a.py", "old_string": "a", "new_string": "b"})
        if version == "2.1.114":
            t.hook_success('"${CLAUDE_PLUGIN_ROOT}/scripts/clmail.cmd" actor busy', "Status set to busy\n")
            t.hook_blocking_error("ruff check failed", "uv run ruff check")
            t.stop_hooks("./scripts/clmail.cmd actor idle")
            t.away_summary("We merged both rounds.")
        elif version == "2.1.38":
            t.local_command("model", "Kept model as \x1b[1mDefault (recommended)\x1b[22m")
        else:
            t.api_error("Overloaded", attempt=2)
        built += [json.loads(x) for x in t.lines()]
    real = real_notice_shapes()
    compared = set()
    for rec in built:
        k = _notice_kind(rec)
        if k is None:
            continue
        compared.add(k)
        assert tuple(sorted(rec)) in real[k], f"{k}: {sorted(rec)} not among {sorted(real[k])}"
        inner = rec.get("attachment") or rec.get("error")
        if isinstance(inner, dict):
            assert tuple(sorted(inner)) in real[(*k, "inner")], f"{k}: {sorted(inner)} not among {real[(*k, 'inner')]}"
    assert compared == {("attachment", "hook_success"), ("attachment", "hook_blocking_error"),
                        ("system", "stop_hook_summary"), ("system", "away_summary"), ("system", "local_command"),
                        ("system", "api_error")}
