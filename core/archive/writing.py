"""Writing a sync's results into the catalog: files, documents, usage, sessions.

Each chunk the workers read (or each batch of vanished files) becomes catalog rows
in one transaction: files inserted or updated, the documents they replace
tombstoned, usage records stored, the sessions they touch rebuilt, the generation
bumped. Separate from planning (core/archive/planning.py), which only reads the
catalog, and from the indexer, which orders the work and publishes snapshots.
"""

from __future__ import annotations

import json
import sqlite3
from typing import TYPE_CHECKING

import msgspec
import numpy as np

from core.config import Config
from core.sources import MAIN
from core.sources.fspath import path_to_db
from core.views import UpdateResult

from . import usage_records as usage_rows
from .catalog import Catalog

if TYPE_CHECKING:  # (both imported where a sync writes: a warm search writes nothing)
    from . import sessions as session_rows
    from .ingest import ChunkOutput, JobOutput

_encode_state = msgspec.msgpack.Encoder().encode

# What storing one file's rows may raise that is that file's fault, not the cache's:
# a value SQLite cannot hold (an int past 64 bits, a string it cannot encode, a type
# it does not know, a constraint). (A full disk or a locked cache is the batch's.)
UNSTORABLE = (
    OverflowError, ValueError, TypeError, sqlite3.IntegrityError, sqlite3.InterfaceError, sqlite3.ProgrammingError
)
_INSERT_DOCS = (
    "INSERT INTO docs(doc_id, file_id, turn, part, first_seq, last_seq, ts, side, body, marks, seen) "
    "VALUES(?,?,?,?,?,?,?,?,?,?,?)"
)
_TOMBSTONE_PARTS = (
    "INSERT OR IGNORE INTO tombstones(doc_id) SELECT doc_id FROM docs WHERE file_id=? AND turn=? AND part=?"
)


class Writer:
    """Records what a sync read (or found gone) in the catalog, one transaction a batch."""

    def __init__(self, config: Config, catalog: Catalog) -> None:
        self.config = config
        self.catalog = catalog

    def commit(self, chunk: ChunkOutput, known: dict[str, dict], result: Tally) -> None:
        """Record a chunk's files, documents and segment in one transaction (the caller publishes)."""
        from . import sessions as session_rows

        affected: set[str] = set()
        pending: list[tuple[JobOutput, list[tuple]]] = []  # each file's document rows
        with self.catalog.write() as db:
            for out in chunk.outputs:
                key = str(out.file.path)
                row = known.get(key)
                if out.missing:
                    if row:
                        self.drop_file(db, row["file_id"], affected, row.get("session_id"))
                        known.pop(key, None)
                    continue
                # A file whose rows cannot be stored (a value SQLite refuses) costs that
                # file only: its rows are rolled back and it is kept as an error.
                db.execute("SAVEPOINT one_file")
                try:
                    pending.append((out, self.store_file(db, out, row, known, affected, result)))
                except UNSTORABLE as exc:
                    db.execute("ROLLBACK TO one_file")
                    self.store_unstorable(db, out, row, known, affected, exc)
                db.execute("RELEASE one_file")
            self.store_docs(db, pending, known, affected)
            if chunk.segment:
                db.execute("INSERT INTO segments(name, n_docs) VALUES(?, ?)", (chunk.segment, chunk.n_docs))
            result.note(session_rows.rebuild(db, affected, self.config))
            self.bump(db)

    def store_docs(
        self, db, pending: list[tuple[JobOutput, list[tuple]]], known: dict[str, dict], affected: set[str]
    ) -> None:
        """The chunk's document rows in one statement (file by file only when one is refused)."""
        db.execute("SAVEPOINT all_docs")
        try:
            db.executemany(_INSERT_DOCS, [row for _, rows in pending for row in rows])
        except UNSTORABLE:
            db.execute("ROLLBACK TO all_docs")
            for out, rows in pending:
                db.execute("SAVEPOINT one_file")
                try:
                    db.executemany(_INSERT_DOCS, rows)
                except UNSTORABLE as exc:
                    db.execute("ROLLBACK TO one_file")
                    self.store_unstorable(db, out, known.get(str(out.file.path)), known, affected, exc)
                db.execute("RELEASE one_file")
        db.execute("RELEASE all_docs")

    def store_file(
        self, db, out: JobOutput, row: dict | None, known: dict[str, dict], affected: set[str], result: Tally
    ) -> list[tuple]:
        """The rows of one file read: its file row, the documents it replaces, its usage;
        returns the rows of the documents it adds (stored with the chunk's)."""
        from core.index.document import encode_marks

        from .ingest import BODY_CHARS

        key = str(out.file.path)
        file_id = self.upsert_file(db, out, row)
        if row is None:
            pass  # a new file has no documents to replace
        elif out.replace:
            _tombstone(db, "SELECT doc_id FROM docs WHERE file_id=?", (file_id,))
            db.execute("DELETE FROM docs WHERE file_id=?", (file_id,))
        elif out.docs:
            # an append re-emits the passages it changed: replace those
            keys = [(file_id, d.turn, d.part) for d in out.docs]
            db.executemany(_TOMBSTONE_PARTS, keys)
            db.executemany("DELETE FROM docs WHERE file_id=? AND turn=? AND part=?", keys)
        usage_rows.store(db, file_id, out.usage, replace=row is not None and out.replace)
        rows = [
            (doc_id, file_id, d.turn, d.part, d.first_seq, d.last_seq, d.timestamp, int(d.is_sidechain),
             d.body[:BODY_CHARS], encode_marks(d.marks, BODY_CHARS, d.places), d.seen or None)
            for doc_id, d in zip([] if out.doc_ids is None else out.doc_ids.tolist(), out.docs, strict=True)
        ]  # fmt: skip
        # (all stored: only now does the sync's tally and the writer's map count it)
        known[key] = {**(row or {}), "file_id": file_id, "path": key, "session_id": out.meta.session_id}
        if row and row.get("session_id") and row["session_id"] != out.meta.session_id:
            affected.add(row["session_id"])
        if out.meta.session_id:
            affected.add(out.meta.session_id)
        result.files_read += 1
        result.bytes_read += out.offset - ((row or {}).get("offset") or 0) if not out.replace else out.offset
        result.skipped += out.skipped
        if out.summaries or (out.replace and out.file.kind == MAIN and row is not None):
            result.need_links = True
        elif row is None and out.file.kind == MAIN:
            result.new_main.add(file_id)  # relinked only if it can change a link (Indexer._relink)
        return rows

    def store_unstorable(
        self, db, out: JobOutput, row: dict | None, known: dict[str, dict], affected: set[str], exc: Exception
    ) -> None:
        """Keep a file whose rows could not be stored as an error (``index --stats``
        names it; retried when it changes): none of its documents is searchable."""
        from .ingest import failed_output

        if out.doc_ids is not None and out.doc_ids.shape[0]:  # (already in the chunk's segment)
            db.executemany("INSERT OR IGNORE INTO tombstones(doc_id) VALUES(?)", [(d,) for d in out.doc_ids.tolist()])
        if row:
            self.drop_file(db, row["file_id"], affected, row.get("session_id"))
        failed = failed_output(out, f"could not be stored: {type(exc).__name__}: {exc}"[:500])
        if row:
            failed.file_id = int(row["file_id"])
        key = str(out.file.path)
        known[key] = {"file_id": self.upsert_file(db, failed, None), "path": key, "session_id": None}

    def upsert_file(self, db, out: JobOutput, row: dict | None) -> int:
        summaries = json.dumps(out.summaries) if out.summaries else None
        reasons = out.reasons
        if row is None or out.replace:
            hashes = out.hashes.tobytes() if out.hashes.shape[0] else None
            records = out.record_hashes.tobytes() if out.record_hashes.shape[0] else None
            skipped = out.skipped
        else:
            old = db.execute(
                "SELECT uuid_hashes, skipped, summaries, record_hashes, skip_reasons FROM files WHERE file_id=?",
                (row["file_id"],),
            ).fetchone()
            hashes = (old[0] or b"") + out.hashes.tobytes()
            records = (old[3] or b"") + out.record_hashes.tobytes()
            skipped = (old[1] or 0) + out.skipped
            reasons = _add_counts(json.loads(old[4]) if old[4] else {}, out.reasons)
            if old[2]:
                summaries = json.dumps(json.loads(old[2]) + out.summaries) if out.summaries else old[2]
        values = dict(
            path=path_to_db(str(out.file.path)), agent=out.file.agent, kind=out.file.kind, project_key=out.file.project_key,
            order_key=out.file.order_key, session_id=out.meta.session_id, size=out.size, mtime_ns=out.mtime_ns,
            inode=out.inode, offset=out.offset, skipped=skipped,
            skip_reasons=json.dumps(reasons, sort_keys=True) if reasons else None, error=out.error, n_messages=out.n_messages,
            n_turns=out.n_turns, meta=out.meta_json or json.dumps(msgspec.to_builtins(out.meta)),
            state=out.state_blob or _encode_state(out.state), summaries=summaries, uuid_hashes=hashes,
            record_hashes=records,
        )
        if row is None:
            file_id = out.file_id
            values = {"file_id": file_id, **values}
            cols = ", ".join(values)
            marks = ", ".join("?" * len(values))
            db.execute(f"INSERT INTO files({cols}) VALUES({marks})", tuple(values.values()))
        else:
            file_id = int(row["file_id"])
            sets = ", ".join(f"{k}=?" for k in values)
            db.execute(f"UPDATE files SET {sets} WHERE file_id=?", (*values.values(), file_id))
        if out.file.kind == MAIN:
            # the narrow copy relinking reads (core/archive/catalog.py: link_keys); replay_of is the relinker's
            db.execute(
                "INSERT INTO link_keys(file_id, path, session_id, summaries, uuid_hashes, record_hashes) "
                "VALUES(?, ?, ?, ?, ?, ?) ON CONFLICT(file_id) DO UPDATE SET path=excluded.path, "
                "session_id=excluded.session_id, summaries=excluded.summaries, uuid_hashes=excluded.uuid_hashes, "
                "record_hashes=excluded.record_hashes",
                (file_id, values["path"], values["session_id"], summaries, hashes, records),
            )
            db.execute("DELETE FROM first_records WHERE file_id=?", (file_id,))
            firsts = np.frombuffer(records[:24], dtype=np.int64).tolist() if records else []
            db.executemany("INSERT INTO first_records(hash, file_id) VALUES(?, ?)", [(h, file_id) for h in firsts])
        return file_id

    def drop_file(self, db, file_id: int, affected: set[str], session_id: str | None) -> None:
        _tombstone(db, "SELECT doc_id FROM docs WHERE file_id=?", (file_id,))
        db.execute("DELETE FROM docs WHERE file_id=?", (file_id,))
        db.execute("DELETE FROM files WHERE file_id=?", (file_id,))
        db.execute("DELETE FROM link_keys WHERE file_id=?", (file_id,))
        db.execute("DELETE FROM first_records WHERE file_id=?", (file_id,))
        usage_rows.drop(db, file_id)
        if session_id:
            affected.add(session_id)

    def remove(self, gone: list[str], known: dict[str, dict], result: Tally) -> None:
        from . import sessions as session_rows

        affected: set[str] = set()
        with self.catalog.write() as db:
            for path in gone:
                row = known.pop(path, None)
                if row:
                    self.drop_file(db, row["file_id"], affected, row.get("session_id"))
            changed = session_rows.rebuild(db, affected, self.config)
            result.note(changed)
            self.bump(db)
        result.need_links = True

    def bump(self, db) -> None:
        generation = int(self.catalog.get_meta("generation", "0") or 0) + 1
        Catalog.set_meta(db, "generation", str(generation))


class Tally:
    """What one sync changed, gathered as it goes and frozen into its :class:`UpdateResult`."""

    def __init__(self) -> None:
        self.changed: set[str] = set()
        self.removed: set[str] = set()
        self.new: set[str] = set()
        self.files_read = 0
        self.bytes_read = 0
        self.skipped = 0
        self.need_links = False
        self.new_main: set[int] = set()  # new main files without summaries: they may need no relinking
        self.seconds = 0.0

    def note(self, changed: session_rows.Changes) -> None:
        self.changed |= changed.changed
        self.removed |= changed.removed
        self.new |= changed.new

    def freeze(self) -> UpdateResult:
        return UpdateResult(
            changed_sessions=tuple(sorted(self.changed - self.removed)),
            removed_sessions=tuple(sorted(self.removed)),
            new_sessions=tuple(sorted(self.new - self.removed)),
            files_read=self.files_read,
            bytes_read=self.bytes_read,
            skipped_lines=self.skipped,
        )


def _add_counts(old: dict[str, int], new: dict[str, int]) -> dict[str, int]:
    total = dict(old)
    for reason, n in new.items():
        total[reason] = total.get(reason, 0) + n
    return total


def _tombstone(db, select_sql: str, args: tuple) -> None:
    db.execute(f"INSERT OR IGNORE INTO tombstones(doc_id) {select_sql}", args)
