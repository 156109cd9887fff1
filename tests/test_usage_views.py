"""``relay-search usage`` through the CLI: no record takes a report down (unknown times,
garbage, huge counts), every billed response counts (Claude Code's compaction
summarizers too), one project one row, ``--breakdown``, ``--by block``, the compact
layout and ``--json`` of each view (issue 23, items 1-4)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from core.outputs.pricing import cost

from .test_usage import SHARED, _int, _lines, needs_shared

SID = "eeeeeeee-1111-4222-8333-444444444444"
ORPHAN_PARENT = "ffffffff-1111-4222-8333-444444444444"
CWD = "/home/t/work/views"
SONNET, HAIKU = "claude-sonnet-4-5-20250929", "claude-haiku-4-5-20251001"
BIG = 2**63 - 1


def run(home: Path, *args: str, columns: int = 120) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"), "COLUMNS": str(columns),
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.run([sys.executable, "-m", "core", *args], env=env, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr and "unexpected error" not in proc.stderr, proc.stderr
    return proc


def response(n: int, ts: object, *, model: str = SONNET, inp: object = 10, out: object = 100, write: object = 0,
             read: object = 0, sid: str = SID, text: str = "") -> str:
    rec = {"type": "assistant", "uuid": f"a{n}", "parentUuid": None, "sessionId": sid, "cwd": CWD,
           "requestId": f"req_{n}", "message": {"id": f"msg_{n}", "role": "assistant", "model": model,
           "content": [{"type": "text", "text": text or f"answer {n}"}],
           "usage": {"input_tokens": inp, "output_tokens": out, "cache_creation_input_tokens": write,
                     "cache_read_input_tokens": read}}}  # fmt: skip
    if ts is not ...:
        rec["timestamp"] = ts
    return json.dumps(rec)


def prompt(ts: str, sid: str = SID, text: str = "count my tokens") -> str:
    return json.dumps({"type": "user", "uuid": "p0", "sessionId": sid, "timestamp": ts, "cwd": CWD,
                       "message": {"role": "user", "content": text}})


def at(day: int, hour: int, minute: int = 0) -> str:
    return f"2026-10-{day:02d}T{hour:02d}:{minute:02d}:00.000Z"


@pytest.fixture
def hostile_home(tmp_path: Path) -> Path:
    return write_hostile_home(tmp_path / "home")


def write_hostile_home(home: Path) -> Path:
    """A session whose responses carry unknown times (missing, NaN, garbage, empty, year 9999),
    counts at the int64 limit and garbage counts, beside ordinary ones."""
    project = home / ".claude" / "projects" / "-home-t-work-views"
    project.mkdir(parents=True)
    lines = [prompt(at(1, 9)), response(1, at(1, 10)), response(2, ...), response(3, "NaN"), response(4, "zzz-garbage"),
             response(5, ""), response(6, "9999-12-31T23:30:00Z"), response(7, at(1, 11), inp=BIG, out=BIG),
             response(8, at(2, 11), inp=BIG, out=BIG, write=BIG, read=BIG), response(9, at(2, 12), inp="lots", out=-5),
             response(10, at(2, 12), model="<synthetic>", inp=0, out=0), "not json\n{]"]
    (project / f"{SID}.jsonl").write_text("\n".join(lines) + "\n")
    return home


def test_every_usage_view_survives_unknown_times_garbage_and_huge_counts(hostile_home: Path) -> None:
    for by in ("day", "week", "month", "project", "model", "session", "agent", "block"):
        for extra in ((), ("--breakdown",), ("--compact",)):
            text = run(hostile_home, "usage", "--by", by, *extra)
            assert text.returncode == 0, (by, text.stderr)
            assert "an estimate, not a bill" in text.stdout
        data = json.loads(run(hostile_home, "usage", "--by", by, "--json").stdout, parse_constant=_no_constant)
        assert data["total"]["responses"] == 10  # every response read, none dropped
        # a count past core.sources.fields.MAX_COUNT is no count an API sent: the adapter reads it as 0
        # (the report code's own handling of sums past int64 is the next test's)
        assert data["total"]["input_tokens"] == 60
        rows = data["blocks"] if by == "block" else data["rows"]
        assert sum(r["total_tokens"] for r in rows) == data["total"]["total_tokens"]
    day = json.loads(run(hostile_home, "usage", "--json").stdout)
    rows = {r["group"]: r for r in day["rows"]}
    # missing, NaN, garbage, empty: unknown; year 9999 is a real (if odd) day
    assert rows["unknown date"]["responses"] == 4 and rows["unknown date"]["output_tokens"] == 400
    assert list(rows)[-1] == "unknown date" and "9999-12-31" in rows
    assert all(r["total_tokens"] for r in day["rows"])  # the <synthetic> response billed nothing: no row
    models = {r["group"] for r in json.loads(run(hostile_home, "usage", "--by", "model", "--json").stdout)["rows"]}
    assert "<synthetic>" not in models


def _no_constant(name: str) -> None:
    raise AssertionError(f"{name} in JSON output")


def test_the_report_code_takes_counts_past_int64_and_unknown_times() -> None:
    """Whatever the adapters let through (they bound counts for SQLite), the sums, the cost
    and the table hold: no OverflowError, no NaN, no inf."""
    from core.archive.usage_records import Record
    from core.front.cli.usage_text import format_blocks, format_report
    from core.outputs import usage, usage_blocks

    owner = {1: usage.Owner("claude", SID, "views", "views#1")}
    records = [Record("k1", 1, "NaN", SONNET, 10**400, 2**64, -3, 0), Record("k2", 1, None, None, 1, 1, 1, 1),
               Record("k3", 1, "2026-10-01T10:00:00Z", SONNET, 2**70, 0, 0, 0)]
    for by in usage.GROUPS:
        got = usage.report(records, owner, by=by, breakdown=True)
        assert got.total.responses == 3 and got.total.input == 2 * usage.MAX_TOKENS + 1
        json.dumps(got.to_dict(), allow_nan=False)
        assert "inf" not in format_report(got) and "nan" not in format_report(got).lower()
    blocks = usage_blocks.blocks(records, owner, now=0.0)
    json.dumps(blocks.to_dict(), allow_nan=False)
    assert [b.label for b in blocks.blocks] == ["2026-10-01 10:00", "unknown date"] and format_blocks(blocks)


def _z(when: datetime) -> str:
    return when.isoformat().replace("+00:00", "Z")


@pytest.fixture
def block_home(tmp_path: Path) -> tuple[Path, datetime]:
    """Hand-made times: two blocks on Oct 1, a 6-hour gap, and one active now."""
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-home-t-work-views"
    project.mkdir(parents=True)
    now = datetime.now(timezone.utc).replace(microsecond=0)
    live = now - timedelta(minutes=30)
    lines = [prompt(at(1, 9)),
             response(1, at(1, 9, 40), inp=100, out=1000),               # block 09:00-14:00
             response(2, at(1, 13, 59), model=HAIKU, inp=100, out=1000),  # same block, other model
             response(3, at(1, 14, 0), inp=100, out=1000),               # 14:00: the next block (19:00 end)
             response(4, at(2, 8, 15), inp=100, out=1000),               # a gap of whole blocks: a new one at 08:00
             response(5, _z(live), inp=50, out=600),
             response(6, _z(live + timedelta(minutes=20)), inp=50, out=600)]  # fmt: skip
    (project / f"{SID}.jsonl").write_text("\n".join(lines) + "\n")
    return home, live


def test_blocks_follow_the_five_hour_rule_and_project_the_active_one(block_home: tuple[Path, datetime]) -> None:
    home, live = block_home
    data = json.loads(run(home, "usage", "--by", "block", "--json").stdout)
    starts = [b["start"] for b in data["blocks"]]
    assert starts[:3] == ["2026-10-01T09:00:00Z", "2026-10-01T14:00:00Z", "2026-10-02T08:00:00Z"]
    first = data["blocks"][0]
    assert first["models"] == [HAIKU, SONNET] and first["total_tokens"] == 2200 and first["responses"] == 2
    assert first["end"] == "2026-10-01T14:00:00Z" and not first["active"]
    want = cost(SONNET, 100, 1000, 0, 0) + cost(HAIKU, 100, 1000, 0, 0)
    assert first["estimated_cost_usd"] == round(want, 4)
    active = data["blocks"][-1]
    assert active["active"] and active["start"] == live.replace(minute=0, second=0).isoformat().replace("+00:00", "Z")
    assert active["burn_rate"]["tokens_per_minute"] == pytest.approx(1300 / 20, rel=0.01)
    left = (datetime.fromisoformat(active["end"]) - datetime.now(timezone.utc)).total_seconds() / 60
    assert active["projected"]["total_tokens"] == pytest.approx(1300 + 1300 / 20 * left, rel=0.02)
    assert sum(b["total_tokens"] for b in data["blocks"]) == data["total"]["total_tokens"]
    text = run(home, "usage", "--by", "block").stdout
    assert "● active block" in text and "burn rate" in text and "projected at the block's end" in text


def test_breakdown_lists_each_days_models_and_json_carries_them(block_home: tuple[Path, datetime]) -> None:
    home, _ = block_home
    data = json.loads(run(home, "usage", "--breakdown", "--json").stdout)
    oct1 = next(r for r in data["rows"] if r["group"] == "2026-10-01")
    assert {m["model"]: m["total_tokens"] for m in oct1["models"]} == {SONNET: 2200, HAIKU: 1100}
    assert sum(m["total_tokens"] for m in oct1["models"]) == oct1["total_tokens"]
    text = run(home, "usage", "--breakdown").stdout.splitlines()
    at_day = next(i for i, line in enumerate(text) if line.startswith("2026-10-01"))
    assert {text[at_day + 1].split()[1], text[at_day + 2].split()[1]} == {SONNET, HAIKU}


def test_the_table_is_compact_under_100_columns(block_home: tuple[Path, datetime]) -> None:
    home, _ = block_home
    wide = run(home, "usage", "--by", "block", columns=120).stdout
    narrow = run(home, "usage", "--by", "block", "--breakdown", columns=80).stdout
    assert "cache write" in wide.splitlines()[0]
    assert "cache write" not in narrow.splitlines()[0] and "cache" in narrow.splitlines()[0]
    assert max(len(line) for line in narrow.splitlines() if not line.startswith(("Cost:", "No price"))) <= 80
    for by in ("day", "model", "project"):
        lines = run(home, "usage", "--by", by, "--breakdown", columns=80).stdout.splitlines()
        assert max(len(line) for line in lines[:-2]) <= 80, by


def test_help_says_where_prices_come_from_and_how_to_update_them(tmp_path: Path) -> None:
    text = run(tmp_path, "usage", "--help").stdout
    assert "core/outputs/pricing.py" in " ".join(text.split()) and "as of 2026" in text and "PRICES_AS_OF" in text


def test_orphan_subagents_count_under_their_projects_name_and_compaction_files_count(tmp_path: Path) -> None:
    home = tmp_path / "home"
    project = home / ".claude" / "projects" / "-home-t-work-views"
    (project / SID / "subagents").mkdir(parents=True)
    (project / ORPHAN_PARENT / "subagents").mkdir(parents=True)
    (project / f"{SID}.jsonl").write_text(prompt(at(1, 9)) + "\n" + response(1, at(1, 10)) + "\n")
    # a compaction summarizer of the listed session, and a Claude Code 2.0 "Warmup" subagent
    # whose parent file is empty (not listed: its tokens still count, under the project's name)
    (project / SID / "subagents" / "agent-acompact-abc123.jsonl").write_text(
        prompt(at(1, 11), text="summarize zebrasummaryword") + "\n"
        + response(2, at(1, 11), out=7, write=300, read=4000, text="zebrasummaryword done") + "\n")
    (project / ORPHAN_PARENT / "subagents" / "agent-a1b2c3d.jsonl").write_text(
        prompt(at(1, 12), ORPHAN_PARENT, text="Warmup") + "\n" + response(3, at(1, 12), sid=ORPHAN_PARENT) + "\n")
    rows = {r["group"]: r for r in json.loads(run(home, "usage", "--by", "project", "--json").stdout)["rows"]}
    assert list(rows) == ["views"]  # not also "-home-t-work-views"
    assert rows["views"]["responses"] == 3 and rows["views"]["output_tokens"] == 207
    sessions = json.loads(run(home, "list", "--json").stdout)["sessions"]
    ours = next(s for s in sessions if s["session_id"] == SID)
    assert ours["usage"]["responses"] == 2  # its compaction's response is the session's cost too
    assert ORPHAN_PARENT not in {s["session_id"] for s in sessions}
    found = json.loads(run(home, "search", "zebrasummaryword", "--json").stdout)
    assert found["results"] == [], "a compaction summarizer is counted, never shown"
    assert json.loads(run(home, "search", "answer", "--json").stdout)["results"]  # (the search works)


def _claude_count(paths: list[Path]) -> tuple[list[int], list[int]]:
    """[input, output, cache write, cache read, responses] of every Claude Code file in the
    samples, and of the compaction files alone, read with nothing but json."""
    everything: dict[tuple, list[int]] = {}
    compaction: dict[tuple, list[int]] = {}
    for path in paths:
        for r in _lines(path):
            m = r.get("message") if isinstance(r, dict) and r.get("type") == "assistant" else None
            if not isinstance(m, dict) or not isinstance(m.get("usage"), dict):
                continue
            u = m["usage"]
            got = [_int(u.get("input_tokens")), _int(u.get("output_tokens")),
                   _int(u.get("cache_creation_input_tokens")), _int(u.get("cache_read_input_tokens"))]
            key = (m.get("id"), r.get("requestId"))
            for into in (everything, compaction) if path.name.startswith("agent-acompact") else (everything,):
                into[key] = [max(a, b) for a, b in zip(into.get(key, got), got, strict=True)]

    def total(d: dict) -> list[int]:
        return [sum(col) for col in zip(*d.values(), strict=True)] + [len(d)]
    return total(everything), total(compaction)


@needs_shared
def test_totals_over_the_samples_include_the_compaction_files(tmp_path: Path) -> None:
    from .test_usage import _link, _listed

    home = tmp_path / "home"
    projects = home / ".claude" / "projects"
    claude: list[Path] = []
    for path in _listed("Claude Code"):
        if path.suffix != ".jsonl":
            continue
        rel = path.relative_to(SHARED)
        nested = path.parent.name == "subagents"
        project = "-".join(rel.parts[:-3] if nested else rel.parts[:-1]) or "root"
        into = projects / project / rel.parts[-3] / "subagents" if nested else projects / project
        _link(path, into / path.name)
        claude.append(path)
    assert any(p.name.startswith("agent-acompact") for p in claude)
    everything, compaction = _claude_count(claude)
    assert compaction == [15, 34, 138_085, 683_396, 5]  # the figures
    data = json.loads(run(home, "usage", "--by", "agent", "--json").stdout)
    got = next(r for r in data["rows"] if r["group"] == "claude")
    fields = ("input_tokens", "output_tokens", "cache_creation_tokens", "cache_read_tokens", "responses")
    assert [got[k] for k in fields] == everything
    projects_rows = [r["group"] for r in json.loads(run(home, "usage", "--by", "project", "--json").stdout)["rows"]]
    assert len(projects_rows) == len(set(projects_rows))
    raw = {p.name for p in projects.iterdir()}
    listed = {s["project"] for s in json.loads(run(home, "list", "--json", "--limit", "500").stdout)["sessions"]}
    assert not (set(projects_rows) & raw - listed), "an orphan's raw dir name beside its project's row"
