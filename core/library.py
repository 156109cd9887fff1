"""An in-memory view of the catalog's sessions: chains, numbers, names, lookups.

Rebuilt from the catalog whenever its generation changes (a few ms for thousands
of sessions), so every query works on one consistent picture without SQL joins.
"""

from __future__ import annotations

import bisect
import json
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from pathlib import Path

from .catalog import Catalog
from .chains import group_chains
from .model import SessionInfo
from .refs import MIN_PREFIX, format_reference

LIVE_SECONDS = 300  # a session written to within this many seconds is live


@dataclass(frozen=True, slots=True)
class FileEntry:
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
    def __init__(self, catalog: Catalog, tags: dict[str, tuple[str, ...]], now: float | None = None) -> None:
        self.generation = catalog.generation()
        now = time.time() if now is None else now
        rows = catalog.sessions()
        files = {r["file_id"]: r for r in catalog.files(("file_id", "path", "agent", "kind", "session_id", "n_messages", "n_turns", "replay_of"))}
        # SPEC §1: a session's project is its own cwd with the prefix every
        # session's cwd shares removed (a worktree is its own project).
        project_names = _project_names({r["session_id"]: r["cwd"] or None for r in rows})
        continues = {r["session_id"]: r["continues"] for r in rows if r["continues"]}
        slugs = {r["session_id"]: r["slug"] for r in rows}
        self.files: dict[int, FileEntry] = {}
        self.session_files: dict[str, list[FileEntry]] = {}
        base: dict[str, SessionInfo] = {}
        self.aliases: dict[str, str] = {}
        # SPEC §5: `project` matches the project name or the agent's project dir name.
        self.project_dirs: dict[str, str] = {r["session_id"]: r["project_key"] or "" for r in rows}
        for r in rows:
            sid = r["session_id"]
            ids = json.loads(r["file_ids"])
            entries = []
            turn_base = seq_base = 0
            session_rows = [files[fid] for fid in ids if fid in files]
            orphan = not any(f["kind"] == "main" for f in session_rows)
            for index, f in enumerate(session_rows):
                primary = orphan or f["kind"] == "main"
                entry = FileEntry(f["file_id"], f["path"], f["agent"], f["kind"], sid, turn_base, seq_base, index, f["replay_of"], primary)
                entries.append(entry)
                self.files[f["file_id"]] = entry
                seq_base += f["n_messages"]
                if primary:
                    turn_base += f["n_turns"]
            self.session_files[sid] = entries
            for alias in json.loads(r["aliases"] or "[]"):
                self.aliases.setdefault(alias, sid)
            summary = r["summary"] or r["title"] or r["slug"] or (r["first_prompt"] or "")[:200] or sid
            base[sid] = SessionInfo(
                session_id=sid,
                agent=r["agent"],
                project=project_names.get(sid) if r["cwd"] else r["project_key"],
                cwd=r["cwd"],
                git_branch=r["git_branch"],
                slug=r["slug"],
                summary=" ".join(summary.split())[:300],
                title=r["title"],
                first_timestamp=r["first_ts"],
                last_timestamp=r["last_ts"],
                turn_count=r["turn_count"],
                message_count=r["message_count"],
                files=tuple(e.path for e in entries),
                user=r["user"],
                tags=tags.get(sid, ()),
                is_live=(now - r["mtime_ns"] / 1e9) < LIVE_SECONDS,
                skipped_lines=r["skipped"],
                first_prompt=(r["first_prompt"] or None) and " ".join(r["first_prompt"].split())[:300],
            )
        self.chains: dict[str, list[SessionInfo]] = {}
        self.chain_of: dict[str, str] = {}
        self.sessions: dict[str, SessionInfo] = {}
        grouped = group_chains(base.values(), continues, slugs)
        # name → chain key: slugs, plus a name for each slug-less continuation chain
        self.chain_names: dict[str, str] = {k[5:]: k for k in grouped if k.startswith("slug:")}
        for key, members in grouped.items():
            numbered = []
            chain_slug = key[5:] if key.startswith("slug:") else None
            name = chain_slug or (_unslugged_name(members[0].session_id, self.chain_names) if len(members) > 1 else None)
            if name and not chain_slug:
                self.chain_names[name] = key
            for number, info in enumerate(members, start=1):
                slug = info.slug or chain_slug
                info = replace(
                    info,
                    slug=slug,
                    chain_name=name,
                    session_number=number,
                    chain_length=len(members),
                    ref=format_reference(slug=name, session_id=info.session_id, numbers=[number], chain_length=len(members)),
                )
                numbered.append(info)
                self.sessions[info.session_id] = info
                self.chain_of[info.session_id] = key
            self.chains[key] = numbered
        self.slugs = {k[5:]: k for k in self.chains if k.startswith("slug:")}
        self._sorted_ids = sorted(self.sessions)

    # --- lookups ------------------------------------------------------------------------

    def chain(self, session_id: str) -> list[SessionInfo]:
        return self.chains[self.chain_of[session_id]]

    def find_ids(self, name: str) -> list[str]:
        """Sessions whose id (or alias) is ``name`` or starts with it (≥ 8 chars)."""
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

    def file_ids_for(self, session_ids: Iterable[str]) -> list[int]:
        return [e.file_id for sid in session_ids for e in self.session_files.get(sid, ())]


def _unslugged_name(first_id: str, taken: dict[str, str]) -> str:
    """A slug-less chain's name: its first session's id prefix (8 characters, longer
    if another chain already has that name), so ``0fae0449#1-2`` can address it."""
    length = MIN_PREFIX
    while first_id[:length] in taken and length < len(first_id):
        length += 1
    return first_id[:length] if first_id[:length] not in taken else first_id


def _project_names(cwds: dict[str, str | None]) -> dict[str, str]:
    """Project names: each project's cwd with the prefix all projects share removed.

    A project whose records carry no cwd keeps its dir name (decoding Claude's
    dir names is lossy: ``-`` stands for both ``/`` and ``-``).
    """
    distinct = sorted({cwd.rstrip("/") for cwd in cwds.values() if cwd})
    common = ""
    if len(distinct) > 1:
        try:
            common = os.path.commonpath(distinct)
        except ValueError:
            common = ""
    names = {}
    for key, cwd in cwds.items():
        if not cwd:
            names[key] = key
            continue
        path = cwd.rstrip("/")
        if common and path != common and path.startswith(common + "/"):
            name = path[len(common) + 1 :]
        else:
            name = Path(path).name or path
        names[key] = name or key
    return names
