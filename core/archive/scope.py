"""What a process's ``--pattern`` selects, for every agent.

Scope is a property of the process, not of the cache: the cache holds every
session found under the roots, and each process filters it at query time, so
processes with different patterns can share one cache and each answers exactly
for its own pattern from its first answer on.

A pattern is a glob over the project a session belongs to, written the way Claude
Code names its project dirs (every character outside ``[a-zA-Z0-9]`` becomes
``-``: ``/home/me/work/billing`` → ``-home-me-work-billing``), so one pattern
means the same project for every agent:

- Claude Code: the session's project dir name under ``~/.claude/projects``;
- Codex, Gemini CLI, Ash: the session's working directory (cwd) in that form. A
  session whose records name no cwd has no project path and is matched as the
  empty string (so only a pattern like ``*`` selects it).
"""

from __future__ import annotations

import re
from fnmatch import fnmatchcase

EVERYTHING = "*"


def project_dir_name(cwd: str) -> str:
    """The ``~/.claude/projects`` dir name Claude Code uses for ``cwd``.

    Every character outside ``[a-zA-Z0-9]`` becomes ``-`` (no collapsing, so ``_`` and
    ``.`` too). Names over 200 chars are cut and get ``-<base36 hash>`` appended (the
    CLI's JS string hash), which is why readers must take ``cwd`` from the records.
    """
    name = re.sub(r"[^a-zA-Z0-9]", "-", cwd)
    if len(name) <= 200:
        return name
    h = 0
    units = cwd.encode("utf-16-le")
    for i in range(0, len(units), 2):
        h = (h * 31 + int.from_bytes(units[i : i + 2], "little")) & 0xFFFFFFFF
    h = abs(h - (1 << 32) if h >= 1 << 31 else h)
    digits = ""
    while True:
        h, r = divmod(h, 36)
        digits = "0123456789abcdefghijklmnopqrstuvwxyz"[r] + digits
        if not h:
            break
    return f"{name[:200]}-{digits}"


def scope_key(agent: str, project_key: str, cwd: str | None) -> str:
    """The name a pattern is matched against for one session."""
    if agent == "claude":
        return project_key
    return project_dir_name(cwd.rstrip("/") or "/") if cwd else ""


class Scope:
    """A process's ``--pattern``: which sessions it answers for."""

    def __init__(self, pattern: str | None = EVERYTHING) -> None:
        self.pattern = pattern or EVERYTHING
        self.everything = self.pattern == EVERYTHING

    def matches(self, agent: str, project_key: str, cwd: str | None) -> bool:
        return self.everything or fnmatchcase(scope_key(agent, project_key, cwd), self.pattern)
