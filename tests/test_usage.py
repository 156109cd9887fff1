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
import re
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pytest

from core.api import Archive
from core.config import Config
from core.pricing import cost, price_for

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
            continue  # compaction summarizers are not indexed (nor counted here)
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
        for r in _lines(path):
            p = r.get("payload") if isinstance(r, dict) else None
            info = p.get("info") if isinstance(p, dict) and p.get("type") == "token_count" else None
            if not isinstance(info, dict) or not isinstance(info.get("last_token_usage"), dict):
                continue
            last, total = info["last_token_usage"], info.get("total_token_usage") or {}
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
        # a second sync over unchanged files changes nothing
        archive.sync()
        assert {n: t.total for n, t in archive.usage_report(by="agent").rows} == {n: sum(v[:4]) for n, v in expected.items()}
