"""Lay out the Claude Code transcripts of ``/work/shared/transcripts`` as a HOME.

Every file that ``INDEX.md`` lists with a Claude Code format (JSONL sessions, empty
session files, subagent transcripts and their ``.meta.json`` sidecars) is copied to
``<HOME>/.claude/projects/<project-dir>/<file>`` the way Claude Code stores them:

* ``claude-code-log/test_data/real_projects/<dir>/…`` keeps its real project dir name
  (and its old-layout ``agent-*.jsonl`` files and new-layout ``<uuid>/subagents/``);
* every other loose group goes into a project dir named after its repository
  (``spotter``, ``episodic-memory``, ``VibeCodingTracker``, ``claude-code-log``,
  ``agent-history``, ``agent-sessions``), keeping ``<uuid>/subagents/<agent>.jsonl``
  beside its ``<uuid>.jsonl``.

Codex rollouts and Gemini files are skipped. Nothing is written into the transcripts
folder. Usage::

    .venv/bin/python -m bench.eval.make_home [--home DIR] [--transcripts DIR]

prints the HOME path (a fresh temp dir unless ``--home`` is given).
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
from pathlib import Path

TRANSCRIPTS = Path("/work/shared/transcripts")
REAL_PROJECTS = "claude-code-log/test_data/real_projects/"

_ENTRY = re.compile(r"^### `([^`]+)`\s*$")
_FORMAT = re.compile(r"format: ([^;]+);")


def claude_files(transcripts: Path = TRANSCRIPTS) -> list[str]:
    """Relative paths of every Claude Code file INDEX.md lists (sessions, subagents, sidecars)."""
    files: list[str] = []
    current: str | None = None
    for line in (transcripts / "INDEX.md").read_text(encoding="utf-8").splitlines():
        m = _ENTRY.match(line)
        if m:
            current = m.group(1)
            continue
        f = _FORMAT.search(line)
        if f and current is not None:
            if f.group(1).strip().startswith("Claude Code"):
                files.append(current)
            current = None
    return files


def destination(rel: str) -> str:
    """``<project-dir>/<file>`` (or ``<project-dir>/<uuid>/subagents/<file>``) for one file."""
    if rel.startswith(REAL_PROJECTS):
        return rel[len(REAL_PROJECTS):]
    parts = rel.split("/")
    repo = parts[0]
    if len(parts) >= 3 and parts[-2] == "subagents":
        return "/".join([repo, *parts[-3:]])
    return f"{repo}/{parts[-1]}"


def build_home(home: Path | None = None, transcripts: Path = TRANSCRIPTS) -> Path:
    """Copy the Claude Code files into ``home`` (a new temp dir by default); return it."""
    home = Path(home) if home else Path(tempfile.mkdtemp(prefix="relay-eval-home-"))
    projects = home / ".claude" / "projects"
    seen: dict[str, str] = {}
    for rel in claude_files(transcripts):
        src = transcripts / rel
        if not src.is_file():
            continue
        dest = destination(rel)
        if dest in seen:
            raise SystemExit(f"make_home: {rel} and {seen[dest]} both map to {dest}")
        seen[dest] = rel
        target = projects / dest
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)
    return home


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, help="write into this dir instead of a new temp dir")
    ap.add_argument("--transcripts", type=Path, default=TRANSCRIPTS)
    args = ap.parse_args(argv)
    print(build_home(args.home, args.transcripts))
    return 0


if __name__ == "__main__":
    sys.exit(main())
