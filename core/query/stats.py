"""What ``stats()`` reports about the embedded cache: counts, sizes, skipped lines, errors.

The counts are of what this process sees (its ``--pattern`` scope); the index's size
on disk and its segments are the shared cache's, which every scope reads. The team
store reports its own (:meth:`core.team.store.TeamArchive.stats`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from core.archive.catalog import Catalog
from core.archive.library import Library
from core.archive.scope import Scope
from core.archive.store import SEGMENTS_DIR
from core.index.bm25 import Snapshot
from core.sources.fspath import display_text
from core.views import IndexStats


def index_stats(lib: Library, catalog: Catalog, snapshot: Snapshot | None, scope: Scope, cache: Path) -> IndexStats:
    """What is indexed, within ``scope`` (index size and segments: the shared cache's)."""
    files = catalog.files(("file_id", "path", "agent", "size", "skipped", "skip_reasons", "error"))
    documents = snapshot.n_docs if snapshot else 0
    if not scope.everything:
        files = [f for f in files if f["file_id"] in lib.files]
        documents = _count_docs(catalog.db, list(lib.files)) if snapshot else 0
    index_bytes = bytes_on_disk([cache / SEGMENTS_DIR, *cache.glob("catalog.sqlite*")])
    agents: dict[str, int] = {}
    for s in lib.sessions.values():
        agents[s.agent] = agents.get(s.agent, 0) + 1
    return IndexStats(
        files=len(files),
        sessions=len(lib.sessions),
        turns=sum(s.turn_count for s in lib.sessions.values()),
        documents=documents,
        segments=len(snapshot.segments) if snapshot else 0,
        transcript_bytes=sum(max(0, f["size"]) for f in files),
        index_bytes=index_bytes,
        skipped_lines=sum(f["skipped"] for f in files),
        files_with_skips=tuple((display_text(f["path"]), f["skipped"]) for f in files if f["skipped"]),
        errors=tuple((display_text(f["path"]), f["error"]) for f in files if f["error"]),
        agents=agents,
        skip_reasons={display_text(f["path"]): json.loads(f["skip_reasons"]) for f in files if f["skip_reasons"]},
    )


def bytes_on_disk(tops: list[Path]) -> int:
    """The bytes of these files and of every file under these dirs, as they are now.

    A background merge deletes retired segments while this walks them: a file or dir
    gone between listing and stat counts as nothing instead of failing the whole
    report (``os.walk`` skips a dir it can no longer list).
    """
    total = 0
    for top in tops:
        files = [str(top)] if top.is_file() else (os.path.join(d, n) for d, _, names in os.walk(top) for n in names)
        for path in files:
            try:
                total += os.stat(path).st_size
            except FileNotFoundError:
                continue
    return total


def _count_docs(db, file_ids: list[int]) -> int:
    total = 0
    for start in range(0, len(file_ids), 500):
        batch = file_ids[start : start + 500]
        total += db.execute(f"SELECT count(*) FROM docs WHERE file_id IN ({','.join('?' * len(batch))})", batch).fetchone()[0]
    return total
