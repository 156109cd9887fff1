"""BM25 on the team store: the query terms' postings scored by the embedded index's code.

The postings of a query's terms come back from one index-only scan, each column
packed server-side into a binary string (one row, not one per posting), and become a
one-segment :class:`~core.index.bm25.Snapshot` carrying the whole store's document
count and average field lengths. :meth:`Snapshot.search` then ranks exactly as the
embedded index does — same tokens, fields, weights, constants and tie-breaks — with
document frequencies counted over the whole team store. Which file and time each
document has is kept in memory (:class:`DocPlaces`), reloaded when a member pushes.
The ranked hits' rows (:class:`Docs`) become hits through :mod:`core.query.searching`, as in
the embedded store.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np

from core.archive.library import Library
from core.index.bm25 import Snapshot
from core.index.segment import TOOL_FIELD, build_from_coo
from core.query import snippets

# The query terms' postings, each column packed server-side into one binary string
# (one row instead of one per posting), plus the corpus totals BM25 needs. The
# covering primary key makes this an index-only scan.
POSTINGS_SQL = """
SELECT string_agg(int8send(doc_id), ''::bytea), string_agg(int8send(term + field::int8 * %(tool)s), ''::bytea),
       string_agg(float4send(tf), ''::bytea), string_agg(float4send(dl), ''::bytea),
       (SELECT n_docs FROM corpus WHERE id = 1), (SELECT sum_main FROM corpus WHERE id = 1),
       (SELECT sum_tool FROM corpus WHERE id = 1)
FROM postings WHERE term = ANY(%(terms)s)
"""
DOCS_SQL = """
SELECT string_agg(int8send(doc_id), ''::bytea ORDER BY doc_id), string_agg(int8send(file_id), ''::bytea ORDER BY doc_id),
       string_agg(float8send(ts_epoch), ''::bytea ORDER BY doc_id)
FROM docs
"""


def postings_snapshot(run: Callable[[Callable[[Any], Any]], Any], ids: list[int], places: DocPlaces) -> Snapshot | None:
    """A one-segment index of every posting of these term ids, or None if none has any."""
    row = run(lambda conn: conn.cursor(binary=True).execute(POSTINGS_SQL, {"terms": ids, "tool": int(TOOL_FIELD)}).fetchone())
    if row is None or row[0] is None:
        return None
    doc = np.frombuffer(row[0], ">i8").astype(np.int64)
    term = np.frombuffer(row[1], ">i8").astype(np.int64)
    tf = np.frombuffer(row[2], ">f4").astype(np.float32)
    dl = np.frombuffer(row[3], ">f4").astype(np.float32)
    n_docs, sum_main, sum_tool = int(row[4]), float(row[5]), float(row[6])
    doc_ids, pos = np.unique(doc, return_inverse=True)
    tool = term >= TOOL_FIELD
    len_main = np.zeros(doc_ids.shape[0], np.float32)
    len_tool = np.zeros(doc_ids.shape[0], np.float32)
    len_main[pos[~tool]] = dl[~tool]
    len_tool[pos[tool]] = dl[tool]
    file_ids, ts = places.lookup(doc_ids)
    segment = build_from_coo("team", term, pos.astype(np.int32), tf, doc_ids, file_ids, ts, len_main, len_tool)
    return Snapshot(
        segments=(segment,),
        alive=(np.ones(doc_ids.shape[0], dtype=bool),),
        n_docs=n_docs,
        avg_main=sum_main / n_docs if n_docs else 1.0,
        avg_tool=sum_tool / n_docs if n_docs else 1.0,
        newest=places.newest(),  # the recency prior's "now", as in the embedded index
    )


class DocPlaces:
    """doc id → (file id, time) for every document of the store, as sorted arrays."""

    def __init__(self, run: Callable[[Callable[[Any], Any]], Any]) -> None:
        self._run = run
        self._arrays = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64))

    def load(self) -> None:
        row = self._run(lambda conn: conn.cursor(binary=True).execute(DOCS_SQL).fetchone())
        if row is None or row[0] is None:
            self._arrays = (np.zeros(0, np.int64), np.zeros(0, np.int64), np.zeros(0, np.float64))
            return
        self._arrays = (
            np.frombuffer(row[0], ">i8").astype(np.int64),
            np.frombuffer(row[1], ">i8").astype(np.int64),
            np.frombuffer(row[2], ">f8").astype(np.float64),
        )

    def newest(self) -> float:
        """Time of the newest document of the store (0.0 when empty)."""
        times = self._arrays[2]
        return float(times.max()) if times.shape[0] else 0.0

    def lookup(self, doc_ids: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """File id and time of each doc; file -1 for a doc pushed after the last load
        and still unknown after one reload (its hit is then left out)."""
        reloaded = False
        while True:
            known, files, times = self._arrays
            n = doc_ids.shape[0]
            if known.shape[0]:
                at = np.minimum(np.searchsorted(known, doc_ids), known.shape[0] - 1)
                found = known[at] == doc_ids
            else:
                at, found = np.zeros(n, np.int64), np.zeros(n, bool)
            if found.all() or reloaded:
                if not known.shape[0]:
                    return np.full(n, -1, np.int64), np.zeros(n, np.float64)
                return np.where(found, files[at], -1), np.where(found, times[at], 0.0)
            self.load()
            reloaded = True


class Docs:
    """A team search's passages (:class:`core.query.searching.Passages`): its hits' ``docs`` rows,
    prefetched in one query, and the store's SQL for the rest."""

    def __init__(self, rows: dict[int, dict[str, Any]], query: Callable[[str, Any], list[tuple]]) -> None:
        self.rows = rows
        self._query = query

    def docs(self, doc_ids) -> dict[int, dict[str, Any]]:
        return {i: self.rows[i] for i in doc_ids if i in self.rows}

    headers = docs  # (its rows are prefetched whole)

    def parent_turn(self, lib: Library, session_id: str, ts: str | None) -> int | None:
        mains = [e for e in lib.session_files.get(session_id, ()) if e.kind == "main"]
        best = None
        for entry in mains:
            row = self._query(
                "SELECT turn FROM docs WHERE file_id=%s AND NOT side AND ts<=%s ORDER BY ts DESC LIMIT 1",
                (entry.file_id, ts or ""),
            )
            if row:
                best = entry.turn_base + row[0][0]
        return best

    def snippet(self, file_id: int, doc: dict[str, Any], terms: list[str], rarity: dict[str, float] | None) -> str:
        """From the scored passage (the team store ranks without the terms' rarity)."""
        return snippets.snippet(doc["body"] or "", terms)
