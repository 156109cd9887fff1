"""Token usage as the catalog stores it: one row per (file, API response).

Adapters hand every response's usage to the indexer (:class:`~core.model.Usage`);
the catalog keeps one row per (file, response key), merged field-wise by maximum
(Claude Code writes a response's usage on each record it split the response into,
``output_tokens`` growing as it streamed). A response copied into several files
(a replayed or forked session) is counted once, for the first file that holds it.
The reports over these records are :mod:`core.outputs.usage`.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable

import msgspec

from core.model import Usage

# SQLite: one row per (file, response); merged across the records of a response.
CATALOG_SCHEMA = """
CREATE TABLE IF NOT EXISTS usage(
    file_id INTEGER NOT NULL,
    key TEXT NOT NULL,
    ts TEXT,
    model TEXT,
    input INTEGER NOT NULL DEFAULT 0,
    output INTEGER NOT NULL DEFAULT 0,
    cache_creation INTEGER NOT NULL DEFAULT 0,
    cache_read INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY(file_id, key)
);
CREATE INDEX IF NOT EXISTS usage_key ON usage(key);
"""
_UPSERT = (
    "INSERT INTO usage(file_id, key, ts, model, input, output, cache_creation, cache_read) VALUES(?,?,?,?,?,?,?,?) "
    "ON CONFLICT(file_id, key) DO UPDATE SET input=max(input, excluded.input), output=max(output, excluded.output), "
    "cache_creation=max(cache_creation, excluded.cache_creation), cache_read=max(cache_read, excluded.cache_read), "
    "model=coalesce(model, excluded.model), ts=coalesce(ts, excluded.ts)"
)
# Each response once (the grouping is done in Python): it belongs to the first file
# that holds it, a file that replays another session's records coming last.
ORDERED_SQL = (
    "SELECT u.key, u.file_id, u.ts, u.model, u.input, u.output, u.cache_creation, u.cache_read FROM usage u "
    "LEFT JOIN files f ON f.file_id = u.file_id ORDER BY u.key, f.replay_of IS NOT NULL, u.file_id"
)


class Record(msgspec.Struct, frozen=True, gc=False):
    """One API response's usage, deduplicated, with the file that holds it.

    (A struct, not a dataclass: a long session's header sums thousands of them, and
    a frozen dataclass took most of that time just to be built.)
    """

    key: str
    file_id: int
    timestamp: str | None
    model: str | None
    input: int
    output: int
    cache_creation: int
    cache_read: int


def merge(usages: Iterable[Usage]) -> list[Usage]:
    """Usages sharing a key merged as the catalog's upsert merges them, in first-seen order.

    Counts take each field's maximum; model and time the first that is not None
    (SQL ``coalesce``). A parse worker merges a file's records before sending
    them (Claude Code writes a response's usage on each of its records, so half
    the rows of a cold index were repeats): storing the merged rows leaves the
    catalog exactly as storing every record's row would.
    """
    out: dict[str, Usage] = {}
    for u in usages:
        seen = out.get(u.key)
        if seen is None:
            out[u.key] = u
            continue
        out[u.key] = Usage(
            key=u.key, model=u.model if seen.model is None else seen.model,
            timestamp=u.timestamp if seen.timestamp is None else seen.timestamp, uuid=seen.uuid,
            input_tokens=max(seen.input_tokens, u.input_tokens), output_tokens=max(seen.output_tokens, u.output_tokens),
            cache_creation_tokens=max(seen.cache_creation_tokens, u.cache_creation_tokens),
            cache_read_tokens=max(seen.cache_read_tokens, u.cache_read_tokens),
        )
    return list(out.values())


# --- the catalog ---------------------------------------------------------------------------


def store(db, file_id: int, usages: Iterable[Usage], *, replace: bool) -> None:
    """Record a file's usage (inside the indexer's write transaction)."""
    if replace:
        db.execute("DELETE FROM usage WHERE file_id=?", (file_id,))
    db.executemany(
        _UPSERT,
        [(file_id, u.key, u.timestamp, u.model, u.input_tokens, u.output_tokens, u.cache_creation_tokens, u.cache_read_tokens) for u in usages],
    )


def drop(db, file_id: int) -> None:
    db.execute("DELETE FROM usage WHERE file_id=?", (file_id,))


def dedupe(rows: Iterable[tuple]) -> list[Record]:
    """Rows ordered by key (owner first) → one record per key, each field's maximum."""
    out: list[Record] = []
    for row in rows:
        if out and out[-1].key == row[0]:
            last = out[-1]
            out[-1] = Record(
                last.key, last.file_id, last.timestamp or row[2], last.model or row[3],
                max(last.input, row[4]), max(last.output, row[5]), max(last.cache_creation, row[6]), max(last.cache_read, row[7]),
            )
        else:
            out.append(Record(*row))
    return out


def catalog_file_records(catalog, file_ids: list[int]) -> list[Record]:
    """The responses one session's files own, without reading every response.

    The same rule as :func:`catalog_records` (a response belongs to the first file
    holding it, replaying files last), checked only for the few keys another
    file also holds: opening a conversation stays as fast in a huge archive.
    """
    if not file_ids:
        return []
    db = catalog.db
    marks = ",".join("?" * len(file_ids))
    # Ordered by key as catalog_records is (so the sums add up in the same order);
    # a key held twice is rare and only then does the replaying rank matter.
    rows = db.execute(
        f"SELECT key, file_id, ts, model, input, output, cache_creation, cache_read FROM usage "
        f"WHERE file_id IN ({marks}) ORDER BY key, file_id",
        file_ids,
    ).fetchall()
    replaying = {r[0] for r in db.execute(f"SELECT file_id FROM files WHERE file_id IN ({marks}) AND replay_of IS NOT NULL", file_ids)}
    if len({row[0] for row in rows}) == len(rows):
        records = [Record(*row) for row in rows]
    else:
        records = dedupe(sorted(rows, key=lambda row: (row[0], row[1] in replaying, row[1])))
    shared = db.execute(
        f"SELECT o.key, o.file_id, f.replay_of IS NOT NULL FROM usage mine JOIN usage o ON o.key = mine.key "
        f"LEFT JOIN files f ON f.file_id = o.file_id WHERE mine.file_id IN ({marks}) AND o.file_id NOT IN ({marks})",
        [*file_ids, *file_ids],
    ).fetchall()
    if not shared:
        return records
    first_elsewhere: dict[str, tuple[bool, int]] = {}
    for key, file_id, replays in shared:
        rank = (bool(replays), file_id)
        if key not in first_elsewhere or rank < first_elsewhere[key]:
            first_elsewhere[key] = rank
    return [r for r in records if r.key not in first_elsewhere or (r.file_id in replaying, r.file_id) < first_elsewhere[r.key]]


_cache: dict[str, tuple[int, list[Record]]] = {}
_cache_lock = threading.Lock()


def catalog_records(catalog, generation: int) -> list[Record]:
    """Every response once, from the catalog (kept while the generation stays)."""
    key = str(catalog.path)
    with _cache_lock:
        hit = _cache.get(key)
        if hit is not None and hit[0] == generation:
            return hit[1]
    records = dedupe(catalog.db.execute(ORDERED_SQL))
    with _cache_lock:
        _cache[key] = (generation, records)
    return records
