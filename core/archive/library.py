"""A view of the catalog's sessions: chains, numbers, names, lookups.

One per catalog generation, so every query works on one consistent picture. The
embedded archive's is lazy: a search reads only the rows of the sessions it hits
(building every session of a 100,000-file archive took 7 s); calls that need all
sessions build the full maps once per generation.
"""

from __future__ import annotations

import bisect
import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, NamedTuple

from core.model import SessionInfo
from core.refs import MIN_PREFIX, format_reference
from core.sources.fspath import display_text

from .catalog import Catalog
from .chains import _effective_key, group_chains
from .scope import Scope

LIVE_SECONDS = 300  # a session written to within this many seconds is live


class ListingRow(NamedTuple):
    """A session as a listing filters and orders it, read without building it."""

    session_id: str
    agent: str
    user: str | None
    first_timestamp: str | None
    last_timestamp: str | None
    tags: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class FileEntry:
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


_FILE_COLUMNS = ("file_id", "path", "agent", "kind", "session_id", "n_messages", "n_turns", "replay_of")


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
        self._rows: dict[str, dict | None] = {}  # lazily read session rows (None: none in scope)
        self._one: dict[str, SessionInfo | None] = {}
        self._one_files: dict[str, list[FileEntry]] = {}
        self._one_file: dict[int, FileEntry | None] = {}  # lazily looked-up files (None: none in scope)
        self.memo: dict[str, Any] = {}  # answers derived from this generation, kept as long as it is current
        self._one_chains: dict[str, list[SessionInfo]] = {}
        self._one_chain_of: dict[str, str] = {}
        self._common: str | None = None
        if not lazy:
            self._build()

    # --- the full maps (built on first use) ----------------------------------------------

    def _build(self) -> None:
        catalog = self._catalog
        rows = [r for r in catalog.sessions() if self._in_scope(r)]
        files = {r["file_id"]: r for r in catalog.files(_FILE_COLUMNS)}
        # SPEC §1: a session's project is its own cwd with the prefix every
        # session's cwd shares removed (a worktree is its own project).
        common = _common_prefix(r["cwd"] for r in rows)
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
            base[sid] = self._info(r, entries, common)
        self._chains: dict[str, list[SessionInfo]] = {}
        self._chain_of: dict[str, str] = {}
        self._sessions: dict[str, SessionInfo] = {}
        grouped = group_chains(base.values(), continues, slugs)
        # name → chain key: slugs, plus a name for each slug-less continuation chain
        self._chain_names: dict[str, str] = {k[5:]: k for k in grouped if k.startswith("slug:")}
        for key, members in grouped.items():
            numbered = _numbered(key, members, self._chain_names)
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
        if session_id not in self._one:
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
        """Look up many files at once (a search's hits): one query, each session's chain once.

        A search asks for the same few hundred files several times over (grouping,
        turns, snippets); one indexed query per call made typing-speed searches slow.
        """
        if self._built:
            return
        missing = sorted({f for f in file_ids if f not in self._one_file})
        for start in range(0, len(missing), 500):
            batch = missing[start : start + 500]
            marks = ",".join("?" * len(batch))
            owners = dict(self._catalog.db.execute(f"SELECT file_id, session_id FROM files WHERE file_id IN ({marks})", batch))
            self._load_chains(sid for sid in owners.values() if sid)
            for file_id in batch:
                sid = owners.get(file_id)
                entries = self.files_of(sid) if sid else []
                self._one_file[file_id] = next((e for e in entries if e.file_id == file_id), None)

    def in_scope_file_ids(self) -> list[int]:
        """Every file of every session in scope, without building the sessions."""
        if self._built:
            return list(self._files)
        rows = self._catalog.db.execute("SELECT agent, project_key, cwd, file_ids FROM sessions")
        return [fid for agent, key, cwd, ids in rows if self._scope.matches(agent, key, cwd) for fid in json.loads(ids)]

    def _in_scope(self, row: dict) -> bool:
        return self._scope.matches(row["agent"], row["project_key"], row["cwd"])

    def _row(self, session_id: str) -> dict | None:
        self._prefetch_rows([session_id])
        return self._rows[session_id]

    def _remember(self, rows: list[dict]) -> list[dict]:
        kept = [r for r in rows if self._in_scope(r)]
        for r in kept:
            self._rows.setdefault(r["session_id"], r)
        return kept

    def _load_chain(self, session_id: str) -> None:
        """Number the chain of one session, reading only that chain's rows."""
        self._load_chains([session_id])

    def _load_chains(self, session_ids: Iterable[str]) -> None:
        """Number the chains of these sessions, in a few queries for all of them
        (a search's hits span dozens of chains: one round of queries per chain cost
        more than the search)."""
        wanted = [sid for sid in dict.fromkeys(session_ids) if sid not in self._one]
        self._prefetch_rows(wanted)
        for sid in wanted:
            if self._row(sid) is None:
                self._one[sid] = None
        wanted = [sid for sid in wanted if self._one.get(sid, 0) is not None]
        if not wanted:
            return
        continues = _Column(self._row, "continues")
        slugs = _Column(self._row, "slug")
        keys = {_effective_key(sid, continues, slugs) for sid in wanted}
        keys -= set(self._one_chains)
        found: dict[str, dict | None] = {}
        slug_names = sorted(k[5:] for k in keys if k.startswith("slug:"))
        for start in range(0, len(slug_names), 500):
            batch = slug_names[start : start + 500]
            for r in self._remember(self._catalog.sessions(f"WHERE slug IN ({','.join('?' * len(batch))})", batch)):
                found[r["session_id"]] = r
        # root:R — R itself may be gone or out of scope; what continues it is not
        frontier = [k[5:] for k in keys if k.startswith("root:")] + list(found)
        self._prefetch_rows(frontier)
        # Slug-less sessions that continue a member join its chain (core/archive/chains.py).
        while frontier:
            for sid in frontier:
                found[sid] = self._row(sid)
            more: list[dict] = []
            for start in range(0, len(frontier), 500):
                batch = frontier[start : start + 500]
                marks = ",".join("?" * len(batch))
                # ifnull(), not "slug IS NULL OR slug=''": sqlite would answer that OR from the
                # slug index, reading every slug-less session (30 ms at 100,000 files)
                more += self._remember(self._catalog.sessions(f"WHERE continues IN ({marks}) AND ifnull(slug, '')=''", batch))
            frontier = list(dict.fromkeys(r["session_id"] for r in more if r["session_id"] not in found))
        chains: dict[str, list[dict]] = {key: [] for key in keys}
        for sid, r in found.items():
            if r is not None:
                key = _effective_key(sid, continues, slugs)
                if key in chains:
                    chains[key].append(r)
        ids = [fid for members in chains.values() for r in members for fid in json.loads(r["file_ids"])]
        files = {}
        for start in range(0, len(ids), 500):
            batch = ids[start : start + 500]
            where = f"WHERE file_id IN ({','.join('?' * len(batch))})"
            files.update((r["file_id"], r) for r in self._catalog.files(_FILE_COLUMNS, where, batch))
        common = self._common_prefix()
        for key, members in chains.items():
            base = []
            for r in members:
                entries = _entries(r["session_id"], [files[fid] for fid in json.loads(r["file_ids"]) if fid in files])
                self._one_files[r["session_id"]] = entries
                base.append(self._info(r, entries, common))
            base.sort(key=lambda s: (s.first_timestamp or "", s.session_id))
            numbered = _numbered(key, base, {}) if base else []
            for info in numbered:
                self._one[info.session_id] = info
                self._one_chain_of[info.session_id] = key
            self._one_chains[key] = numbered
        for sid in wanted:
            self._one.setdefault(sid, None)

    def _prefetch_rows(self, session_ids: list[str]) -> None:
        """Read the session rows not looked up yet, in batches (see :meth:`_row`)."""
        missing = [sid for sid in session_ids if sid not in self._rows]
        for start in range(0, len(missing), 500):
            batch = missing[start : start + 500]
            rows = {r["session_id"]: r for r in self._catalog.sessions(f"WHERE session_id IN ({','.join('?' * len(batch))})", batch)}
            for sid in batch:
                r = rows.get(sid)
                self._rows[sid] = r if r is not None and self._in_scope(r) else None

    def _common_prefix(self) -> str:
        if self._common is None:
            self._common = _common_prefix(self._distinct_cwds())
        return self._common

    def _distinct_cwds(self) -> Iterable[str]:
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

    def _info(self, r: dict, entries: list[FileEntry], common: str) -> SessionInfo:
        sid = r["session_id"]
        summary = r["summary"] or r["title"] or r["slug"] or (r["first_prompt"] or "")[:200] or sid
        return SessionInfo(
            session_id=sid,
            agent=r["agent"],
            project=_project_name(sid, r["cwd"], common) if r["cwd"] else r["project_key"],
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
            tags=self._tags.get(sid, ()),
            is_live=(self._now - r["mtime_ns"] / 1e9) < LIVE_SECONDS,
            skipped_lines=r["skipped"],
            first_prompt=(r["first_prompt"] or None) and " ".join(r["first_prompt"].split())[:300],
        )

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
            rows = self._remember(self._catalog.sessions("WHERE slug=?", (slug,)))
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
        quoted = json.dumps(name)[1:-1].replace("%", "\\%").replace("_", "\\_")
        with_alias = self._remember(self._catalog.sessions("WHERE aliases LIKE ? ESCAPE '\\'", (f'%"{quoted}%',)))
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

    def file_ids_for(self, session_ids: Iterable[str]) -> list[int]:
        return [e.file_id for sid in session_ids for e in self.session_files.get(sid, ())]


class _Column:
    """``.get(session_id)`` of one column of the lazily read session rows (for chain keys)."""

    def __init__(self, row, column: str) -> None:
        self.row = row
        self.column = column

    def get(self, session_id: str, default=None):
        r = self.row(session_id)
        return (r[self.column] or default) if r is not None else default


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


def _numbered(key: str, members: list[SessionInfo], names: dict[str, str]) -> list[SessionInfo]:
    """A chain's sessions (oldest first) with their numbers, chain name and references.

    ``names`` (name → chain key) gets the name of a slug-less chain of several sessions.
    The lazy one-chain path passes an empty dict: it cannot see the other chains, so a
    name taken by two chains (two first ids sharing 8 characters) is not lengthened there.
    """
    chain_slug = key[5:] if key.startswith("slug:") else None
    name = chain_slug or (_unslugged_name(members[0].session_id, names) if len(members) > 1 else None)
    if name and not chain_slug:
        names[name] = key
    numbered = []
    for number, info in enumerate(members, start=1):
        slug = info.slug or chain_slug
        numbered.append(
            replace(
                info,
                slug=slug,
                chain_name=name,
                session_number=number,
                chain_length=len(members),
                ref=format_reference(slug=name, session_id=info.session_id, numbers=[number], chain_length=len(members)),
            )
        )
    return numbered


def _unslugged_name(first_id: str, taken: dict[str, str]) -> str:
    """A slug-less chain's name: its first session's id prefix (8 characters, longer
    if another chain already has that name), so ``0fae0449#1-2`` can address it."""
    length = MIN_PREFIX
    while first_id[:length] in taken and length < len(first_id):
        length += 1
    return first_id[:length] if first_id[:length] not in taken else first_id


def _common_prefix(cwds: Iterable[str | None]) -> str:
    """The path every project's cwd shares (removed from project names)."""
    distinct = sorted({cwd.rstrip("/") for cwd in cwds if cwd})
    if len(distinct) <= 1:
        return ""
    try:
        return os.path.commonpath(distinct)
    except ValueError:
        return ""


def _project_name(key: str, cwd: str | None, common: str) -> str:
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
