"""Which sessions of a library a listing's filters keep, and in which order they are listed.

``list_sessions``, ``list_projects``, ``list_users`` and a filtered search all pick
sessions the same way: a slug's chain or a project (SPEC §5: a case-insensitive
substring of the project name or its directory's name), then agent, user, dates
(a session overlapping the range) and tags (any of them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable

from .library import Library
from .model import SessionInfo
from .timeutil import newest_first, parse_ts, parse_user_time


def matching(
    lib: Library,
    *,
    now: Callable[[], float],
    project: str | None = None,
    slug: str | None = None,
    agent: str | None = None,
    user: str | None = None,
    date_from: str | None = None,
    date_to: str | None = None,
    tags: list[str] | None = None,
) -> list[SessionInfo]:
    """The sessions every given filter keeps (``now``: what relative dates count from)."""
    sessions: Iterable[SessionInfo]
    if slug:
        key = lib.chain_names.get(slug)
        sessions = list(lib.chains.get(key, [])) if key else []
    else:
        sessions = lib.sessions.values()
        if project:
            sessions = in_project(lib, sessions, project)
    if agent:
        sessions = [s for s in sessions if s.agent == agent]
    if user:
        sessions = [s for s in sessions if s.user == user]
    ts_from = parse_user_time(date_from, name="date_from", now=now())
    ts_to = parse_user_time(date_to, end_of_day=True, name="date_to", now=now())
    if ts_from is not None:
        sessions = [s for s in sessions if parse_ts(s.last_timestamp) >= ts_from]
    if ts_to is not None:
        sessions = [s for s in sessions if parse_ts(s.first_timestamp) <= ts_to]
    if tags:
        wanted = set(tags)
        sessions = [s for s in sessions if wanted & set(s.tags)]
    return list(sessions)


def in_project(lib: Library, sessions: Iterable[SessionInfo], project: str) -> list[SessionInfo]:
    """SPEC §5: a case-insensitive substring of the project name or the project dir name."""
    needle = project.strip().lower()
    return [s for s in sessions if needle in s.project.lower() or needle in lib.project_dirs.get(s.session_id, "").lower()]


def listed(sessions: list[SessionInfo], *, slug: str | None) -> list[SessionInfo]:
    """``list_sessions``' order: a slug's chain oldest first, else newest activity first."""
    if slug:
        return sorted(sessions, key=lambda s: s.session_number or 0)
    return sorted(sessions, key=lambda s: (newest_first(s.last_timestamp), s.session_id), reverse=True)
