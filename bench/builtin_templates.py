"""A small built-in template set, used only when ../shared/transcripts is absent.

Records follow Claude Code 2.1.x as seen in the real samples: typed prompts as strings,
assistant text/tool_use blocks with usage, tool_result user records with a
``toolUseResult`` payload, and ``progress`` records (hook and bash) whose output fields
dominate the bytes, as they do in real archives.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta, timezone

import numpy as np
import orjson

_PROMPTS = [
    "The watcher misses files created in a new project directory, can you fix it?",
    "Add a progress callback to the indexer and show it as a bar in the CLI",
    "Why does the search return stale results after a file is truncated?",
    "Refactor the session parser so that compaction summaries are not turns",
    "Write tests for the slug chain ordering by first timestamp",
    "The cache is corrupt after a kill -9 during save, detect and rebuild it",
    "Profile the cold index on the big archive and make it faster",
    "Implement the read_turn tool with compact tool rendering",
]
_ANSWERS = [
    "I'll start by reading the relevant module to understand the current behaviour.",
    "The problem is that the observer only watches directories that existed at startup.",
    "Let me run the test suite to confirm the failure before changing anything.",
    "I've updated the parser; tool_result records now stay inside the current turn.",
    "The benchmark shows most of the time goes to JSON decoding of progress records.",
    "Done. The index is now swapped atomically and readers never block on the writer.",
]
_LOG_LINES = [
    "tests/test_watch.py::test_new_project_dir PASSED",
    "tests/test_index.py::test_incremental_matches_rebuild FAILED",
    "AssertionError: expected 12 hits, got 11",
    "warning: unused variable `offset` in core/index/segments.py:88",
    "Compiling relay-search v0.1.0 (/home/user/work/relay-search)",
    "ERROR: cache header version mismatch (found 3, expected 4); rebuilding",
    "  File \"core/parse.py\", line 214, in read_records",
    "KeyError: 'message'",
]


def _session(rng: np.random.Generator, turns: int) -> tuple[str, list[bytes]]:
    sid = str(uuid.UUID(int=int(rng.integers(2**62)) << 64 | int(rng.integers(2**62)), version=4))
    cwd = "/home/user/work/relay-search"
    now = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)
    base = {"isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": sid,
            "version": "2.1.39", "gitBranch": "main", "slug": "quiet-folding-harbor"}
    lines: list[bytes] = []
    parent = None

    def emit(record: dict) -> str:
        nonlocal parent, now
        now += timedelta(seconds=int(rng.integers(1, 40)))
        u = str(uuid.UUID(int=int(rng.integers(2**62)) << 64 | int(rng.integers(2**62)), version=4))
        full = {"parentUuid": parent, **base, **record, "uuid": u,
                "timestamp": now.isoformat(timespec="milliseconds").replace("+00:00", "Z")}
        lines.append(orjson.dumps(full))
        parent = u
        return u

    for _ in range(turns):
        emit({"type": "user", "message": {"role": "user", "content": _PROMPTS[rng.integers(len(_PROMPTS))]},
              "permissionMode": "default"})
        for _ in range(int(rng.integers(1, 5))):
            tool_id = f"toolu_01{rng.integers(10**12):012d}"
            text = _ANSWERS[rng.integers(len(_ANSWERS))]
            emit({"type": "assistant", "message": {
                "model": "claude-opus-4-6", "id": f"msg_01{rng.integers(10**12)}", "type": "message",
                "role": "assistant", "content": [{"type": "text", "text": text},
                                                 {"type": "tool_use", "id": tool_id, "name": "Bash",
                                                  "input": {"command": "pytest -x -q", "description": "Run tests"}}],
                "stop_reason": "tool_use", "usage": {"input_tokens": 3, "output_tokens": 120}}})
            output = "\n".join(_LOG_LINES[j] for j in rng.integers(len(_LOG_LINES), size=int(rng.integers(20, 200))))
            for _ in range(int(rng.integers(1, 4))):
                emit({"type": "progress", "data": {"type": "bash_progress", "output": output[-2000:],
                                                   "fullOutput": output, "elapsedTimeSeconds": 3},
                      "toolUseID": tool_id, "parentToolUseID": tool_id})
            emit({"type": "user", "message": {"role": "user", "content": [
                {"tool_use_id": tool_id, "type": "tool_result", "content": output, "is_error": False}]},
                "toolUseResult": {"stdout": output, "stderr": "", "interrupted": False, "isImage": False}})
        emit({"type": "assistant", "message": {
            "model": "claude-opus-4-6", "id": f"msg_01{rng.integers(10**12)}", "type": "message",
            "role": "assistant", "content": [{"type": "text", "text": _ANSWERS[rng.integers(len(_ANSWERS))]}],
            "stop_reason": "end_turn", "usage": {"input_tokens": 3, "output_tokens": 80}}})
    return sid, lines


def builtin_templates(seed: int = 0, count: int = 4) -> list[tuple[str, bytes]]:
    """``count`` synthetic sessions as (name, file bytes)."""
    rng = np.random.default_rng([seed, 99])
    out = []
    for i in range(count):
        sid, lines = _session(rng, turns=int(rng.integers(15, 60)))
        out.append((f"builtin-{i}-{sid[:8]}", b"\n".join(lines) + b"\n"))
    return out
