"""What changed under the roots since the last sync, without listing every file.

A one-shot CLI process has no watcher, and re-discovering and stat-ing every
transcript on each call grows with the archive (5 s at 100,000 files). It can
trust directory mtimes instead: adding, removing or renaming a file changes its
directory's mtime. So the catalog keeps every directory it listed (up to
``MAX_DEPTH`` below each root) with its mtime; a quick sync stats just those
directories, lists again only the ones whose mtime moved (and new ones), and
hands the indexer the paths that can have changed:

- every file in a directory whose listing changed (new, gone, replaced, or a
  sibling of one), and everything under a directory that vanished;
- every file written in the last ``RECENT_SECONDS`` (by its last recorded
  mtime): an append in place does not change the directory's mtime, so files of
  recent sessions are stat-ed on every call.

A file appended to after ``RECENT_SECONDS`` of quiet, in a directory that did not
change otherwise, is not seen by a quick sync; every full sync (``relay-search
index``, and the start of the app, ``mcp`` and ``serve``, which then watch) reads
it. The README states this rule.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterable
from pathlib import Path

import msgspec

from .fspath import is_text, path_from_db, path_to_db

MAX_DEPTH = 3  # deepest transcript dir below a root: codex sessions/YYYY/MM/DD, claude P/S/subagents
RECENT_SECONDS = 24 * 3600
UNSETTLED_NS = 2_000_000_000  # a dir changed this recently may change again within one mtime tick
UNTRUSTED = -1


class DirScan(msgspec.Struct):
    """One pass over the directory tree, reusing listings whose mtime did not move."""

    dirs: dict[str, int] = msgspec.field(default_factory=dict)  # every dir seen → mtime to record
    listed: dict[str, set[str]] = msgspec.field(default_factory=dict)  # re-listed dir → its file names
    vanished: list[str] = msgspec.field(default_factory=list)  # recorded dirs that are gone

    @property
    def changed(self) -> bool:
        return bool(self.listed or self.vanished)


def scan(roots: Iterable[Path], recorded: dict[str, int], now_ns: int | None = None) -> DirScan:
    """Stat every recorded dir; list (and walk into) those that are new or changed."""
    now_ns = time.time_ns() if now_ns is None else now_ns
    children: dict[str, list[str]] = {}
    for path in recorded:
        children.setdefault(os.path.dirname(path), []).append(path)
    out = DirScan()

    def forget(path: str) -> None:
        out.vanished.append(path)

    def visit(path: str, depth: int) -> None:
        try:
            st = os.stat(path)
        except OSError:
            st = None
        if st is None or not stat.S_ISDIR(st.st_mode):
            if path in recorded:
                forget(path)
            return
        mtime = st.st_mtime_ns
        out.dirs[path] = mtime if now_ns - mtime > UNSETTLED_NS else UNTRUSTED
        if recorded.get(path) == mtime:
            subdirs = children.get(path, [])
        else:
            files: set[str] = set()
            subdirs = []
            try:
                with os.scandir(path) as entries:
                    for entry in entries:
                        try:
                            if entry.is_dir(follow_symlinks=False):
                                subdirs.append(entry.path)
                            elif entry.is_file():
                                files.add(entry.name)
                        except OSError:
                            continue
            except OSError:
                out.dirs[path] = UNTRUSTED  # unreadable now: list it again next time
            out.listed[path] = files
            present = set(subdirs)
            for old in children.get(path, []):
                if old not in present:
                    forget(old)
        if depth < MAX_DEPTH:
            for sub in subdirs:
                visit(sub, depth + 1)

    for root in roots:
        visit(str(root), 0)
    return out


# --- the catalog's record of listed dirs ------------------------------------------------


def recorded_dirs(db) -> dict[str, int]:
    return {path_from_db(p): m for p, m in db.execute("SELECT path, mtime_ns FROM dirs")}


def record(db, before: dict[str, int], found: DirScan) -> None:
    """Store the dirs a scan saw (in the caller's write transaction), only what moved."""
    gone = [(path_to_db(p),) for p in before if p not in found.dirs]
    moved = [(path_to_db(p), m) for p, m in found.dirs.items() if before.get(p) != m]
    if gone:
        db.executemany("DELETE FROM dirs WHERE path=?", gone)
    if moved:
        db.executemany("INSERT OR REPLACE INTO dirs(path, mtime_ns) VALUES(?, ?)", moved)


def files_under(catalog, columns: tuple[str, ...], directory: str, *, direct: bool) -> list[dict]:
    """Catalog rows of files below ``directory`` (only its own files when ``direct``)."""
    prefix = directory.rstrip(os.sep) + os.sep
    # Paths that are not UTF-8 are stored as BLOBs (core/sources/fspath.py), which SQLite
    # orders apart from TEXT: look for each kind by its own bounds.
    ranges: list[tuple[str | bytes, str | bytes, int]] = []
    if is_text(prefix):
        ranges.append((prefix, prefix[:-1] + chr(ord(os.sep) + 1), len(prefix)))
    raw = os.fsencode(prefix)
    ranges.append((raw, raw[:-1] + bytes([raw[-1] + 1]), len(raw)))
    rows = []
    for low, high, length in ranges:
        where = "WHERE typeof(path) = ? AND path >= ? AND path < ?"
        args: tuple = ("text" if isinstance(low, str) else "blob", low, high)
        if direct:  # nothing deeper: no separator after the prefix
            where += " AND instr(substr(path, ?), ?) = 0"
            args = (*args, length + 1, os.sep if isinstance(low, str) else os.sep.encode())
        rows.extend(catalog.files(columns, where, args))  # (paths come back as text, core.sources.fspath)
    return rows


def recent_files(catalog, columns: tuple[str, ...], now_ns: int) -> list[dict]:
    since = now_ns - RECENT_SECONDS * 1_000_000_000
    return catalog.files(columns, "WHERE mtime_ns > ?", (since,))


def moved(row: dict) -> bool:
    """Whether a recorded file is not as recorded (changed, replaced or gone): one stat."""
    try:
        st = os.stat(row["path"])
    except OSError:
        return True
    return (st.st_size, st.st_mtime_ns, st.st_ino) != (row["size"], row["mtime_ns"], row["inode"])
