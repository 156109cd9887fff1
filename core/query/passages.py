"""The indexed passages behind ranked hits: where a hit's ``docs`` row comes from.

:class:`Passages` is the small strategy :mod:`core.query.searching` builds hits through;
:class:`CatalogPassages` is the embedded cache's (the catalog's ``docs`` table), the team
store has its own (``core.team.search.Docs``).
"""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from core.archive.catalog import DOC_HEADER_COLUMNS, Catalog
from core.archive.library import Library

from . import snippets

HEADERS_KEPT = 4_096  # passages' rows remembered for grouping while the index state lasts (~2 MB)


class Passages(Protocol):
    """The indexed passages (``docs`` rows) behind ranked hits, in one store."""

    def docs(self, doc_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """The rows of these passages (those still there)."""
        ...

    def headers(self, doc_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        """Their rows without the text (file, turn, messages, time, side): what grouping reads."""
        ...

    def parent_turn(self, lib: Library, session_id: str, ts: str | None) -> int | None:
        """The main-stream turn during which a subagent's work (at ``ts``) happened."""
        ...

    def snippet(self, file_id: int, doc: dict[str, Any], terms: list[str], rarity: dict[str, float] | None) -> str:
        """The snippet a hit on passage ``doc`` shows."""
        ...


class CatalogPassages:
    """The embedded cache's passages: the catalog's ``docs`` table."""

    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog

    def docs(self, doc_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        return self.catalog.docs(doc_ids)

    def headers(self, doc_ids: Sequence[int]) -> dict[int, dict[str, Any]]:
        return self.catalog.docs(doc_ids, DOC_HEADER_COLUMNS)

    def parent_turn(self, lib: Library, session_id: str, ts: str | None) -> int | None:
        mains = [e for e in lib.files_of(session_id) if e.kind == "main"]
        best = None
        for entry in mains:
            row = self.catalog.db.execute("SELECT turn FROM docs WHERE file_id=? AND side=0 AND ts<=? ORDER BY ts DESC LIMIT 1", (entry.file_id, ts or "")).fetchone()
            if row is not None:
                best = entry.turn_base + row[0]
        return best

    def parent_turns(self, lib: Library, session_id: str) -> Callable[[str | None], int | None]:
        """:meth:`parent_turn` for many passages of one session: its main turns read once."""
        tables = []
        for entry in (e for e in lib.files_of(session_id) if e.kind == "main"):
            rows = self.catalog.db.execute("SELECT ts, turn FROM docs WHERE file_id=? AND side=0 AND ts IS NOT NULL ORDER BY ts", (entry.file_id,)).fetchall()
            tables.append((entry.turn_base, [r[0] for r in rows], [r[1] for r in rows]))

        def parent(ts: str | None) -> int | None:
            best = None
            for base, stamps, turns in tables:
                i = bisect.bisect_right(stamps, ts or "") - 1
                if i >= 0:
                    best = base + turns[i]
            return best

        return parent

    def snippet(self, file_id: int, doc: dict[str, Any], terms: list[str], rarity: dict[str, float] | None) -> str:
        """From whichever passage of the turn shows the rarest match (the scored one on ties)."""
        body = doc["body"] or ""
        if rarity is None:
            return snippets.snippet(body, terms)

        def passages() -> Iterator[str]:
            yield body
            rows = self.catalog.db.execute("SELECT body FROM docs WHERE file_id=? AND turn=? ORDER BY part", (file_id, doc["turn"]))
            yield from (r[0] for r in rows if r[0] and r[0] != body)

        return snippets.best_snippet(passages(), terms, rarity=rarity)


def remembered_headers(lib: Library, passages: Passages, doc_ids: list[int]) -> dict[int, dict[str, Any]]:
    """:meth:`Passages.headers`, remembered while the library (the index state) lasts: grouping reads
    the rows of the window's 400 passages, and the next keystroke's window is mostly the same
    passages (reading them was a fifth of a typed search on the 1.8 GB bench)."""
    memo: dict[int, dict[str, Any]] = lib.memo.setdefault("headers", {})
    found = {doc_id: row for doc_id in doc_ids if (row := memo.get(doc_id)) is not None}
    missing = [doc_id for doc_id in doc_ids if doc_id not in found]
    if missing:
        read = passages.headers(missing)
        found.update(read)
        if len(memo) + len(read) > HEADERS_KEPT:  # typing on into other words: start again
            memo = lib.memo["headers"] = {}  # (a new dict: another thread's search may be reading the old)
        memo.update(read)
    return found
