"""One user's sessions in the team store, answered by the embedded store's own code.

:class:`UserView` is an :class:`~core.api.Archive` that is never opened: its library
is one user's sessions loaded from the store, its reader the store's messages, so
resolving references, reading turns and conversations, message context, statistics
and handoff all run unchanged. Its search hits are built by :mod:`core.query.searching`
over the store's passages (:class:`core.team.search.Docs`).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from core.api import Archive
from core.archive import usage_records
from core.archive.library import Library
from core.config import Config
from core.outputs import usage

from .rows import PgReader


class TeamStore(Protocol):
    """What a view needs of the team store (:class:`core.team.store.TeamArchive` is one).

    The store makes its views, so the view names only this much of it: the two
    modules then import one way.
    """

    config: Config
    reader: PgReader
    _now: Callable[[], float]
    _generations: dict[str, tuple[int, int]]

    def _query(self, sql: str, params: Any = ()) -> list[tuple]: ...


class UserView(Archive):
    """An Archive over one user's sessions in the team store (never opened itself)."""

    def __init__(self, team: TeamStore, user: str, lib: Library) -> None:  # noqa: D107
        self._team = team
        self._user = user
        self._lib = lib
        self.reader = team.reader  # type: ignore[assignment]  # (PgReader reads the same rows: a duck, not a subclass)
        self.config = team.config
        self._now = team._now

    @property
    def library(self) -> Library:
        return self._lib

    def _usage_source(self) -> tuple[list[usage_records.Record], dict[int, usage.Owner]]:
        user_id = self._team._generations[self._user][0]
        rows = self._team._query(
            "SELECT u.key, u.file_id, u.ts, u.model, u.input, u.output, u.cache_creation, u.cache_read FROM usage u "
            "JOIN files f ON f.file_id = u.file_id WHERE f.user_id = %s ORDER BY u.key, f.replay_key IS NOT NULL, u.file_id",
            (user_id,),
        )
        files = self._team._query("SELECT file_id, agent, session_id, project_key FROM files WHERE user_id = %s", (user_id,))
        cols = ("file_id", "agent", "session_id", "project_key")
        return usage_records.dedupe(rows), usage.owners([dict(zip(cols, f)) for f in files], self._lib.sessions)

    def sessions_usage(self, session_ids) -> dict[str, usage.Totals]:
        records, owners = self._usage_source()
        out = {sid: usage.Totals() for sid in session_ids}
        for r in records:
            owner = owners.get(r.file_id)
            if owner is not None and owner.session_id in out:
                out[owner.session_id].add(r)
        return out
