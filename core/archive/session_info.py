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
from core.sources.claude_text import without_markup
from core.sources.fspath import display_text
from core.timeutil import parse_datetime

LIVE_SECONDS = 300  # a session written to within this many seconds is live


def session_info(r: dict, entries: list, common: str, tags: dict[str, tuple[str, ...]], now: float) -> SessionInfo:
    """A session row as the :class:`SessionInfo` listings show (``entries``: its FileEntry list)."""
    sid = r["session_id"]
    # agent markup (``<bash-input>…``, ``<command-name>…``) never makes a summary, in any front end
    first_prompt = without_markup(r["first_prompt"] or "")
    summary = without_markup(r["summary"] or "") or r["title"] or r["slug"] or first_prompt[:200] or sid
    return SessionInfo(
        session_id=sid,
        agent=r["agent"],
        project=project_name(sid, r["cwd"], common) if r["cwd"] else r["project_key"],
        cwd=r["cwd"],
        git_branch=r["git_branch"],
        slug=r["slug"],
        summary=summary[:300],
        title=r["title"],
        first_timestamp=r["first_ts"],
        last_timestamp=r["last_ts"],
        turn_count=r["turn_count"],
        message_count=r["message_count"],
        files=tuple(display_text(e.path) for e in entries),  # FileEntry keeps the exact path
        user=r["user"],
        tags=tags.get(sid, ()),
        is_live=is_live(r["mtime_ns"], r["last_ts"], now),
        skipped_lines=r["skipped"],
        first_prompt=first_prompt[:300] or None,
    )


def is_live(mtime_ns: int, last_timestamp: str | None, now: float) -> bool:
    """Written to lately, by content: the file changed within :data:`LIVE_SECONDS` *and*
    its newest record is that recent. A copied or touched archive has fresh mtimes
    but old records, so it is not live; a session being written has both."""
    if now - mtime_ns / 1e9 >= LIVE_SECONDS:
        return False
    last = parse_datetime(last_timestamp)
    return last is None or now - last.timestamp() < LIVE_SECONDS


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
