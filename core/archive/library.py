"""A view of the catalog's sessions: chains, numbers, names, lookups.

One per catalog generation, so every query works on one consistent picture. The
embedded archive's is lazy: a search reads only the rows of the sessions it hits
(building every session of a 100,000-file archive took 7 s); calls that need all
sessions build the full maps once per generation.

Reading the rows a lazy library needs is core/archive/row_reader.py; a row becomes
a SessionInfo in core/archive/session_info.py and chains are numbered in
core/archive/chains.py, so both ways of building agree.
"""

from __future__ import annotations

import bisect
import json
import time
from collections.abc import Iterable
from typing import Any, NamedTuple

import msgspec

from core.model import SessionInfo
from core.refs import MIN_PREFIX

from .catalog import Catalog
from .chains import chain_order, group_chains, number_chain
from .row_reader import FILE_COLUMNS, RowReader
from .scope import Scope
from .session_info import common_prefix, session_info


class ListingRow(NamedTuple):
    """A session as a listing filters and orders it, read without building it."""

    session_id: str
    agent: str
    user: str | None
    first_timestamp: str | None
    last_timestamp: str | None
    tags: tuple[str, ...]


class FileEntry(msgspec.Struct, frozen=True):
    """One file of a session, with where its turns and messages start in the session's numbering."""

    file_id: int
    path: str
    agent: str
    kind: str
    session_id: str
    turn_base: int  # turn number of this file's first turn within the session
    seq_base: int  # sequence number of this file's first message within the session
    file_index: int
    replay_of: int | None
    primary: bool  # part of the session's own stream (not a subagent's sidechain)


class Library:
    """Sessions of one catalog generation, as seen by one process's scope.

    ``lazy`` (the embedded archive): nothing is loaded up front. Search hits ask
    for single files and sessions (:meth:`file`, :meth:`session`,
    :meth:`files_of`), answered from a few indexed catalog rows (the session's
    chain, its files); the full maps (``sessions``, ``chains``, …) are built on
    first use by the calls that need every session (listing, filters, resolving).
    Both paths build each session with the same functions, so they agree.
    """

    def __init__(
        self, catalog: Catalog, tags: dict[str, tuple[str, ...]], now: float | None = None, scope: Scope | None = None, *, lazy: bool = False
    ) -> None:
        self.generation = catalog.generation()
        self._catalog = catalog
        self._tags = tags
        self._now = time.time() if now is None else now
        # The process's scope (--pattern) applies before anything else: chains,
        # numbers and project names are those of the sessions this process sees.
        self._scope = scope or Scope()
        self._built = False
        self._reader = RowReader(catalog, self._scope)  # lazily read session rows
        self._one: dict[str, SessionInfo | None] = {}
        self._one_files: dict[str, list[FileEntry]] = {}
        self._one_file: dict[int, FileEntry | None] = {}  # lazily looked-up files (None: none in scope)
        self.memo: dict[str, Any] = {}  # answers derived from this generation, kept as long as it is current
        self._one_chains: dict[str, list[SessionInfo]] = {}
        self._one_chain_of: dict[str, str] = {}
        if not lazy:
            self._build()

    # --- the full maps (built on first use) ----------------------------------------------

    def _build(self) -> None:
        catalog = self._catalog
        rows = [r for r in catalog.sessions() if self._reader.in_scope(r)]
        files = {r["file_id"]: r for r in catalog.files(FILE_COLUMNS)}
        # SPEC §1: a session's project is its own cwd with the prefix every
        # session's cwd shares removed (a worktree is its own project).
        common = common_prefix(r["cwd"] for r in rows)
        continues = {r["session_id"]: r["continues"] for r in rows if r["continues"]}
        slugs = {r["session_id"]: r["slug"] for r in rows}
        self._files: dict[int, FileEntry] = {}
        self._session_files: dict[str, list[FileEntry]] = {}
        self._aliases: dict[str, str] = {}
        # SPEC §5: `project` matches the project name or the agent's project dir name.
        self._project_dirs: dict[str, str] = {r["session_id"]: r["project_key"] or "" for r in rows}
        base: dict[str, SessionInfo] = {}
        for r in rows:
            sid = r["session_id"]
            entries = _entries(sid, [files[fid] for fid in json.loads(r["file_ids"]) if fid in files])
            for entry in entries:
                self._files[entry.file_id] = entry
            self._session_files[sid] = entries
            for alias in json.loads(r["aliases"] or "[]"):
                self._aliases.setdefault(alias, sid)
            base[sid] = session_info(r, entries, common, self._tags, self._now)
        self._chains: dict[str, list[SessionInfo]] = {}
        self._chain_of: dict[str, str] = {}
        self._sessions: dict[str, SessionInfo] = {}
        grouped = group_chains(base.values(), continues, slugs)
        # name → chain key: slugs, plus a name for each slug-less continuation chain
        self._chain_names: dict[str, str] = {k[5:]: k for k in grouped if k.startswith("slug:")}
        for key, members in grouped.items():
            numbered = number_chain(key, members, self._chain_names)
            for info in numbered:
                self._sessions[info.session_id] = info
                self._chain_of[info.session_id] = key
            self._chains[key] = numbered
        self._slugs = {k[5:]: k for k in self._chains if k.startswith("slug:")}
        self._sorted = sorted(self._sessions)
        self._built = True

    def _ensure(self) -> None:
        if not self._built:
            self._build()

    @property
    def sessions(self) -> dict[str, SessionInfo]:
        self._ensure()
        return self._sessions

    @property
    def chains(self) -> dict[str, list[SessionInfo]]:
        self._ensure()
        return self._chains

    @property
    def chain_of(self) -> dict[str, str]:
        self._ensure()
        return self._chain_of

    @property
    def slugs(self) -> dict[str, str]:
        self._ensure()
        return self._slugs

    @property
    def chain_names(self) -> dict[str, str]:
        """Chain name (a slug, or a slug-less chain's first id prefix) → chain key."""
        self._ensure()
        return self._chain_names

    @property
    def project_dirs(self) -> dict[str, str]:
        self._ensure()
        return self._project_dirs

    @property
    def files(self) -> dict[int, FileEntry]:
        self._ensure()
        return self._files

    @property
    def session_files(self) -> dict[str, list[FileEntry]]:
        self._ensure()
        return self._session_files

    @property
    def aliases(self) -> dict[str, str]:
        self._ensure()
        return self._aliases

    @property
    def _sorted_ids(self) -> list[str]:
        self._ensure()
        return self._sorted

    # --- single lookups (lazy: a few indexed rows) -----------------------------------------

    def session(self, session_id: str) -> SessionInfo | None:
        if self._built:
            return self._sessions.get(session_id)
        if session_id not in self._one:
            self._load_chain(session_id)
        return self._one.get(session_id)

    def files_of(self, session_id: str) -> list[FileEntry]:
        if self._built:
            return self._session_files.get(session_id, [])
        if session_id not in self._one and session_id not in self._one_files:
            self._load_chain(session_id)
        return self._one_files.get(session_id, [])

    def file(self, file_id: int) -> FileEntry | None:
        if self._built:
            return self._files.get(file_id)
        if file_id not in self._one_file:
            self.prefetch_files((file_id,))
        return self._one_file.get(file_id)

    def listing_rows(self) -> list[ListingRow]:
        """Every session in scope, as much of it as a listing filters and sorts by
        (kept for this generation); see :func:`core.query.filters.newest_page`."""
        if self._built:
            return [ListingRow(s.session_id, s.agent, s.user, s.first_timestamp, s.last_timestamp, s.tags) for s in self._sessions.values()]
        rows = self.memo.get("listing_rows")
        if rows is None:
            query = "SELECT session_id, agent, project_key, cwd, user, first_ts, last_ts FROM sessions"
            rows = self.memo["listing_rows"] = [
                ListingRow(sid, agent, user, first, last, self._tags.get(sid, ()))
                for sid, agent, key, cwd, user, first, last in self._catalog.db.execute(query)
                if self._scope.matches(agent, key, cwd)
            ]
        return rows

    def load_sessions(self, session_ids: Iterable[str]) -> None:
        """Build these sessions (and their chains) in one batch of queries."""
        if not self._built:
            self._load_chains(session_ids)

    def prefetch_files(self, file_ids: Iterable[int]) -> None:
        """Look up many files at once (a search's hits): one query, each session's files once.

        A search asks for the same few hundred files several times over (grouping,
        turns, snippets); one indexed query per call made typing-speed searches slow.
        Their sessions are not built (chains numbered, projects named): grouping a
        typed search's window needs only each file's session and place in it, for
        the hundreds of sessions the window spans, and the page's few are built
        when asked for (:meth:`load_sessions`). Building them all was most of the
        first search touching them in each index state: 86 of 128 ms for a typed
        ``mod`` on the 1.8 GB bench.
        """
        if self._built:
            return
        missing = sorted({f for f in file_ids if f not in self._one_file})
        for start in range(0, len(missing), 500):
            batch = missing[start : start + 500]
            marks = ",".join("?" * len(batch))
            owners = dict(self._catalog.db.execute(f"SELECT file_id, session_id FROM files WHERE file_id IN ({marks})", batch))
            self._load_files(sid for sid in owners.values() if sid)
            for file_id in batch:
                sid = owners.get(file_id)
                entries = self._one_files.get(sid, []) if sid else []  # (none: a session out of scope)
                self._one_file[file_id] = next((e for e in entries if e.file_id == file_id), None)

    def _load_files(self, session_ids: Iterable[str]) -> None:
        """These in-scope sessions' files, in stream order with their turn and message bases, without
        building the sessions (what building one would give them: :meth:`_load_chains`)."""
        wanted = [sid for sid in dict.fromkeys(session_ids) if sid not in self._one_files]
        self._reader.prefetch(wanted)
        rows = [(sid, json.loads(row["file_ids"])) for sid in wanted if (row := self._reader.row(sid)) is not None]
        files = self._reader.files([fid for _, ids in rows for fid in ids])
        for sid, ids in rows:
            self._one_files[sid] = _entries(sid, [files[fid] for fid in ids if fid in files])

    def in_scope_file_ids(self) -> list[int]:
        """Every file of every session in scope, without building the sessions."""
        if self._built:
            return list(self._files)
        rows = self._catalog.db.execute("SELECT agent, project_key, cwd, file_ids FROM sessions")
        return [fid for agent, key, cwd, ids in rows if self._scope.matches(agent, key, cwd) for fid in json.loads(ids)]

    def _load_chain(self, session_id: str) -> None:
        """Number the chain of one session, reading only that chain's rows."""
        self._load_chains([session_id])

    def _load_chains(self, session_ids: Iterable[str]) -> None:
        """Number the chains of these sessions, in a few queries for all of them
        (a search's hits span dozens of chains: one round of queries per chain cost
        more than the search)."""
        wanted = [sid for sid in dict.fromkeys(session_ids) if sid not in self._one]
        self._reader.prefetch(wanted)
        for sid in wanted:
            if self._reader.row(sid) is None:
                self._one[sid] = None
        wanted = [sid for sid in wanted if self._one.get(sid, 0) is not None]
        if not wanted:
            return
        keys = {self._reader.chain_key(sid) for sid in wanted}
        keys -= set(self._one_chains)
        chains, files = self._reader.chain_members(keys)
        common = self._reader.common_prefix()
        for key, members in chains.items():
            base = []
            for r in members:
                entries = _entries(r["session_id"], [files[fid] for fid in json.loads(r["file_ids"]) if fid in files])
                self._one_files[r["session_id"]] = entries
                base.append(session_info(r, entries, common, self._tags, self._now))
            base.sort(key=chain_order)
            numbered = number_chain(key, base, {}) if base else []
            for info in numbered:
                self._one[info.session_id] = info
                self._one_chain_of[info.session_id] = key
            self._one_chains[key] = numbered
        for sid in wanted:
            self._one.setdefault(sid, None)

    # --- lookups ------------------------------------------------------------------------

    def chain(self, session_id: str) -> list[SessionInfo]:
        if self._built:
            return self._chains[self._chain_of[session_id]]
        if self.session(session_id) is None:
            raise KeyError(session_id)
        return self._one_chains[self._one_chain_of[session_id]]

    def slug_chain(self, slug: str) -> list[SessionInfo] | None:
        """The chain of sessions sharing ``slug`` (oldest first), if any is in scope."""
        if self._built:
            key = self._slugs.get(slug)
            return self._chains[key] if key else None
        key = f"slug:{slug}"
        if key not in self._one_chains:
            rows = self._reader.remember(self._catalog.sessions("WHERE slug=?", (slug,)))
            if not rows:
                return None
            self.session(rows[0]["session_id"])
        return self._one_chains.get(key)

    def find_ids(self, name: str) -> list[str]:
        """Sessions whose id (or alias) is ``name`` or starts with it (≥ 8 chars)."""
        if not self._built:
            return self._find_ids_lazily(name)
        if name in self.sessions:
            return [name]
        if name in self.aliases:
            return [self.aliases[name]]
        if len(name) < MIN_PREFIX:
            return []
        i = bisect.bisect_left(self._sorted_ids, name)
        found = []
        while i < len(self._sorted_ids) and self._sorted_ids[i].startswith(name):
            found.append(self._sorted_ids[i])
            i += 1
        for alias, sid in self.aliases.items():
            if alias.startswith(name) and sid not in found:
                found.append(sid)
        return found

    def _find_ids_lazily(self, name: str) -> list[str]:
        """:meth:`find_ids` from the session id index (and the aliases column), not every session."""
        if self.session(name) is not None:
            return [name]
        return self._reader.find_ids(name)

    def file_ids_for(self, session_ids: Iterable[str]) -> list[int]:
        return [e.file_id for sid in session_ids for e in self.session_files.get(sid, ())]


def _entries(session_id: str, rows: list[dict]) -> list[FileEntry]:
    """A session's files in stream order, with each one's first turn and message number."""
    entries = []
    turn_base = seq_base = 0
    orphan = not any(f["kind"] == "main" for f in rows)
    for index, f in enumerate(rows):
        primary = orphan or f["kind"] == "main"
        entries.append(FileEntry(f["file_id"], f["path"], f["agent"], f["kind"], session_id, turn_base, seq_base, index, f["replay_of"], primary))
        seq_base += f["n_messages"]
        if primary:
            turn_base += f["n_turns"]
    return entries
