"""The catalog rows a lazy :class:`~core.archive.library.Library` builds sessions from.

A search needs a few sessions, not all of them: this reads session rows by the
session id, slug and continues indexes, batched (a search's hits span dozens of
chains), keeps only those in the process's scope and remembers them for the
generation. Separate from the library, which turns the rows into numbered chains
and answers lookups; this only reads.
"""

from __future__ import annotations

import json
from collections.abc import Iterable

from core.refs import MIN_PREFIX

from .catalog import Catalog
from .chains import _effective_key
from .scope import Scope
from .session_info import common_prefix

FILE_COLUMNS = ("file_id", "path", "agent", "kind", "session_id", "n_messages", "n_turns", "replay_of")


class RowReader:
    """Session and file rows read a few at a time by index, in scope, kept for one generation."""

    def __init__(self, catalog: Catalog, scope: Scope) -> None:
        self._catalog = catalog
        self._scope = scope
        self._rows: dict[str, dict | None] = {}  # lazily read session rows (None: none in scope)
        self._common: str | None = None

    def in_scope(self, row: dict) -> bool:
        return self._scope.matches(row["agent"], row["project_key"], row["cwd"])

    def row(self, session_id: str) -> dict | None:
        self.prefetch([session_id])
        return self._rows[session_id]

    def remember(self, rows: list[dict]) -> list[dict]:
        kept = [r for r in rows if self.in_scope(r)]
        for r in kept:
            self._rows.setdefault(r["session_id"], r)
        return kept

    def chain_key(self, session_id: str) -> str:
        """The key of the chain this (in-scope, read) session belongs to (core/archive/chains.py)."""
        return _effective_key(session_id, _Column(self.row, "continues"), _Column(self.row, "slug"))

    def chain_members(self, keys: set[str]) -> tuple[dict[str, list[dict]], dict[int, dict]]:
        """The rows of these chains' sessions (chain key → rows) and of their files,
        in a few queries for all of them."""
        continues = _Column(self.row, "continues")
        slugs = _Column(self.row, "slug")
        found: dict[str, dict | None] = {}
        slug_names = sorted(k[5:] for k in keys if k.startswith("slug:"))
        for start in range(0, len(slug_names), 500):
            batch = slug_names[start : start + 500]
            for r in self.remember(self._catalog.sessions(f"WHERE slug IN ({','.join('?' * len(batch))})", batch)):
                found[r["session_id"]] = r
        # root:R — R itself may be gone or out of scope; what continues it is not
        frontier = [k[5:] for k in keys if k.startswith("root:")] + list(found)
        self.prefetch(frontier)
        # Slug-less sessions that continue a member join its chain (core/archive/chains.py).
        while frontier:
            for sid in frontier:
                found[sid] = self.row(sid)
            more: list[dict] = []
            for start in range(0, len(frontier), 500):
                batch = frontier[start : start + 500]
                marks = ",".join("?" * len(batch))
                # ifnull(), not "slug IS NULL OR slug=''": sqlite would answer that OR from the
                # slug index, reading every slug-less session (30 ms at 100,000 files)
                more += self.remember(self._catalog.sessions(f"WHERE continues IN ({marks}) AND ifnull(slug, '')=''", batch))
            frontier = list(dict.fromkeys(r["session_id"] for r in more if r["session_id"] not in found))
        chains: dict[str, list[dict]] = {key: [] for key in keys}
        for sid, found_row in found.items():
            if found_row is not None:
                key = _effective_key(sid, continues, slugs)
                if key in chains:
                    chains[key].append(found_row)
        ids = [fid for members in chains.values() for r in members for fid in json.loads(r["file_ids"])]
        return chains, self.files(ids)

    def files(self, file_ids: list[int]) -> dict[int, dict]:
        """These files' rows (:data:`FILE_COLUMNS`) by file id, in batches."""
        files: dict[int, dict] = {}
        for start in range(0, len(file_ids), 500):
            batch = file_ids[start : start + 500]
            where = f"WHERE file_id IN ({','.join('?' * len(batch))})"
            files.update((r["file_id"], r) for r in self._catalog.files(FILE_COLUMNS, where, batch))
        return files

    def prefetch(self, session_ids: list[str]) -> None:
        """Read the session rows not looked up yet, in batches (see :meth:`row`)."""
        missing = [sid for sid in session_ids if sid not in self._rows]
        for start in range(0, len(missing), 500):
            batch = missing[start : start + 500]
            rows = {r["session_id"]: r for r in self._catalog.sessions(f"WHERE session_id IN ({','.join('?' * len(batch))})", batch)}
            for sid in batch:
                r = rows.get(sid)
                self._rows[sid] = r if r is not None and self.in_scope(r) else None

    def common_prefix(self) -> str:
        if self._common is None:
            self._common = common_prefix(self.distinct_cwds())
        return self._common

    def distinct_cwds(self) -> Iterable[str]:
        """Each project cwd in scope once, stepping the cwd index (not scanning every session)."""
        db = self._catalog.db
        cwd = ""
        while True:
            row = db.execute("SELECT cwd FROM sessions WHERE cwd > ? ORDER BY cwd LIMIT 1", (cwd,)).fetchone()
            if row is None:
                return
            cwd = row[0]
            if self._scope.everything or any(
                self._scope.matches(agent, key, cwd) for agent, key in db.execute("SELECT DISTINCT agent, project_key FROM sessions WHERE cwd=?", (cwd,))
            ):
                yield cwd

    def find_ids(self, name: str) -> list[str]:
        """Sessions whose alias is ``name``, or whose id or alias starts with it, from the
        session id index and the aliases column (see :meth:`Library.find_ids`)."""
        quoted = json.dumps(name)[1:-1].replace("%", "\\%").replace("_", "\\_")
        with_alias = self.remember(self._catalog.sessions("WHERE aliases LIKE ? ESCAPE '\\'", (f'%"{quoted}%',)))
        aliases: dict[str, str] = {}  # alias → its first session, as the full build has it
        for r in with_alias:
            for alias in json.loads(r["aliases"] or "[]"):
                aliases.setdefault(alias, r["session_id"])
        if name in aliases:
            return [aliases[name]]
        if len(name) < MIN_PREFIX:
            return []
        found = []
        rows = self._catalog.db.execute("SELECT session_id, agent, project_key, cwd FROM sessions WHERE session_id >= ? ORDER BY session_id", (name,))
        for sid, agent, key, cwd in rows:
            if not sid.startswith(name):
                break
            if self._scope.matches(agent, key, cwd):
                found.append(sid)
        for alias, sid in aliases.items():
            if alias.startswith(name) and sid not in found:
                found.append(sid)
        return found


class _Column:
    """``.get(session_id)`` of one column of the lazily read session rows (for chain keys)."""

    def __init__(self, row, column: str) -> None:
        self.row = row
        self.column = column

    def get(self, session_id: str, default=None):
        r = self.row(session_id)
        return (r[self.column] or default) if r is not None else default
