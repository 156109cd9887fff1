"""Which sessions of a library a listing's filters keep, and in which order they are listed.

``list_sessions``, ``list_projects``, ``list_users`` and a filtered search all pick
sessions the same way: a slug's chain or a project (SPEC §5: a case-insensitive
substring of the project name or its directory's name), then agent, user, dates
(a session overlapping the range) and tags (any of them).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from core.archive.library import Library
from core.arguments import agent_filter
from core.model import SessionInfo
from core.timeutil import newest_first, parse_ts, parse_user_time


def newest_page(
    lib: Library,
    *,
    now: Callable[[], float],
    agent: str | None = None,
    user: str | None = None,
    date_from: str | None = None,
    date_to: str | None = None,
    tags: list[str] | None = None,
    limit: int,
    offset: int = 0,
) -> list[SessionInfo]:
    """One page of ``list_sessions``' newest-first listing, building only its sessions.

    The same filters and order as :func:`matching` + :func:`listed`, applied to the
    catalog's rows (:meth:`Library.listing_rows`), so ``relay-search list`` does not
    build every session of a 100,000-file archive to show ten of them.
    """
    keep = _keeper(now, agent=agent, user=user, date_from=date_from, date_to=date_to, tags=tags)
    rows = [r for r in lib.listing_rows() if keep(r)]
    rows.sort(key=_newest_first, reverse=True)
    page = [r.session_id for r in rows[offset : offset + limit]]
    lib.load_sessions(page)
    return [info for info in (lib.session(sid) for sid in page) if info is not None]


def _keeper(
    now: Callable[[], float],
    *,
    agent: str | None,
    user: str | None,
    date_from: str | None,
    date_to: str | None,
    tags: list[str] | None,
) -> Callable[[Any], bool]:
    """The agent, user, date and tag filters as one test of a session (or a listing row:
    anything with ``agent``, ``user``, ``first_timestamp``, ``last_timestamp``, ``tags``)."""
    agent = agent_filter(agent)
    ts_from = parse_user_time(date_from, name="date_from", now=now())
    ts_to = parse_user_time(date_to, end_of_day=True, name="date_to", now=now())
    wanted = set(tags or ())

    def keep(s: Any) -> bool:
        return (
            (not agent or s.agent == agent)
            and (not user or s.user == user)
            and (ts_from is None or parse_ts(s.last_timestamp) >= ts_from)
            and (ts_to is None or parse_ts(s.first_timestamp) <= ts_to)
            and (not wanted or bool(wanted & set(s.tags)))
        )

    return keep


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
    keep = _keeper(now, agent=agent, user=user, date_from=date_from, date_to=date_to, tags=tags)
    return [s for s in sessions if keep(s)]


def in_project(lib: Library, sessions: Iterable[SessionInfo], project: str) -> list[SessionInfo]:
    """SPEC §5: a case-insensitive substring of the project name or the project dir name."""
    needle = project.strip().lower()
    return [s for s in sessions if needle in s.project.lower() or needle in lib.project_dirs.get(s.session_id, "").lower()]


def listed(sessions: list[SessionInfo], *, slug: str | None) -> list[SessionInfo]:
    """``list_sessions``' order: a slug's chain oldest first, else newest activity first."""
    if slug:
        return sorted(sessions, key=lambda s: s.session_number or 0)
    return sorted(sessions, key=_newest_first, reverse=True)


def _newest_first(s: Any) -> tuple:
    """Sort key (reversed) of a listing: newest activity first, unknown times last, then id."""
    return (newest_first(s.last_timestamp), s.session_id)
