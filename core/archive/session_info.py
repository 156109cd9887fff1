"""A session's catalog row as a :class:`~core.model.SessionInfo`: summary, project name, liveness.

Both ways the library builds sessions (every session at once, or one chain lazily)
turn a row into a SessionInfo here, so they agree; kept apart from the library,
which decides which rows to build and keeps the maps and lookups.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from core.model import SessionInfo
from core.sources.fspath import display_text

LIVE_SECONDS = 300  # a session written to within this many seconds is live


def session_info(r: dict, entries: list, common: str, tags: dict[str, tuple[str, ...]], now: float) -> SessionInfo:
    """A session row as the :class:`SessionInfo` listings show (``entries``: its FileEntry list)."""
    sid = r["session_id"]
    summary = r["summary"] or r["title"] or r["slug"] or (r["first_prompt"] or "")[:200] or sid
    return SessionInfo(
        session_id=sid,
        agent=r["agent"],
        project=project_name(sid, r["cwd"], common) if r["cwd"] else r["project_key"],
        cwd=r["cwd"],
        git_branch=r["git_branch"],
        slug=r["slug"],
        summary=" ".join(summary.split())[:300],
        title=r["title"],
        first_timestamp=r["first_ts"],
        last_timestamp=r["last_ts"],
        turn_count=r["turn_count"],
        message_count=r["message_count"],
        files=tuple(display_text(e.path) for e in entries),  # FileEntry keeps the exact path
        user=r["user"],
        tags=tags.get(sid, ()),
        is_live=(now - r["mtime_ns"] / 1e9) < LIVE_SECONDS,
        skipped_lines=r["skipped"],
        first_prompt=(r["first_prompt"] or None) and " ".join(r["first_prompt"].split())[:300],
    )


def common_prefix(cwds: Iterable[str | None]) -> str:
    """The path every project's cwd shares (removed from project names)."""
    distinct = sorted({cwd.rstrip("/") for cwd in cwds if cwd})
    if len(distinct) <= 1:
        return ""
    try:
        return os.path.commonpath(distinct)
    except ValueError:
        return ""


def project_name(key: str, cwd: str | None, common: str) -> str:
    """A project's name: its cwd with the common prefix removed.

    A project whose records carry no cwd keeps its dir name (decoding Claude's
    dir names is lossy: ``-`` stands for both ``/`` and ``-``).
    """
    if not cwd:
        return key
    path = cwd.rstrip("/")
    if common and path != common and path.startswith(common + "/"):
        name = path[len(common) + 1 :]
    else:
        name = Path(path).name or path
    return name or key
