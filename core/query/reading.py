"""Reading conversations back from their transcript files, with every character.

The index keeps only what ranking and snippets need; reading goes to the source
files through the same adapters, file by file in the session's order, so a
session's messages can be streamed without holding the whole session in memory.
Recently read sessions are kept in a small cache keyed by their files' sizes.
"""

from __future__ import annotations

import os
import threading
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from core.archive.catalog import Catalog
from core.archive.library import FileEntry
from core.model import Message
from core.sources import MAIN, SourceFile, get_source

CACHE_SESSIONS = 8
# iter_file builds messages positionally (see there): in this order.
_MESSAGE_FIELDS = ("session_id", "agent", "sequence", "role", "type", "text", "timestamp", "uuid", "parent_uuid",
                   "is_sidechain", "file_index", "entry_index", "turn", "tool_name", "tool_input", "branch", "call_id")
if Message.__struct_fields__ != _MESSAGE_FIELDS:  # pragma: no cover (a reordered Message must not read garbage)
    raise ImportError("core.query.reading builds Message positionally: update it with Message's fields")


class MessageReader:
    def __init__(self, catalog: Catalog) -> None:
        self.catalog = catalog
        # a session's files → (their sizes and numbering when read, its messages): one
        # version a session, so a live one read again as it grows replaces the last (eight
        # versions of a 2,000-turn session held ~100 MB while the app followed it)
        self._cache: OrderedDict[tuple[str, ...], tuple[tuple, list[Message]]] = OrderedDict()
        self._lock = threading.Lock()

    def iter_file(self, entry: FileEntry) -> Iterator[Message]:
        """Messages of one file, numbered within its session."""
        from core.archive.turns import number_entries  # (here: opening an archive reads no file)

        row = self.catalog.files(("project_key", "order_key", "session_id"), "WHERE file_id=?", (entry.file_id,))
        if not row:
            return
        r = row[0]
        file = SourceFile(
            Path(entry.path), entry.agent, entry.kind, r["project_key"],
            session_id=entry.session_id if entry.kind == MAIN else None,
            parent_session_id=entry.session_id if entry.kind != MAIN else None,
            order_key=r["order_key"],
        )
        try:
            result = get_source(entry.agent).read(file, full_text=True)
        except Exception:
            # The file vanished since it was indexed (the next sync drops it), or the
            # adapter failed on it as a whole, as the indexer did (an error in
            # `index --stats`): either way its session's other files still read.
            return
        entries = result.entries
        if entry.replay_of:
            from core.archive.ingest import uuid_hash  # (the indexer's: rarely needed here)

            got = self.catalog.db.execute("SELECT record_hashes FROM files WHERE file_id=?", (entry.replay_of,)).fetchone()
            if got and got[0]:
                excluded = set(np.frombuffer(got[0], dtype=np.int64).tolist())
                entries = [e for e in entries if not (e.record_key and uuid_hash(e.record_key) in excluded)]
        main = entry.primary
        numbered = number_entries(entries, start_seq=entry.seq_base, start_turn=entry.turn_base - 1 if main else -1, main_file=entry.kind == MAIN)
        session_id, agent, file_index, own_file = entry.session_id, entry.agent, entry.file_index, entry.kind == MAIN
        for seq, turn, e in numbered:
            # Positional, in Message's field order: msgspec took five times as long
            # to match sixteen keywords, a tenth of opening a 2,000-turn session.
            yield Message(
                session_id,  # session_id
                agent,  # agent
                seq,  # sequence
                e.role,  # role
                e.type,  # type
                e.text,  # text
                e.timestamp,  # timestamp
                e.uuid,  # uuid
                e.parent_uuid,  # parent_uuid
                e.is_sidechain or not main,  # is_sidechain
                file_index,  # file_index
                e.entry_index,  # entry_index
                turn if main and (not e.is_sidechain or not own_file) else None,  # turn
                e.tool_name,  # tool_name
                e.tool_input,  # tool_input
                e.branch,  # branch
                e.call_id,  # call_id
            )

    def iter_session(self, files: list[FileEntry]) -> Iterator[Message]:
        for entry in files:
            yield from self.iter_file(entry)

    def session(self, files: list[FileEntry]) -> list[Message]:
        """The whole stitched stream, cached while the files stay the same size."""
        paths = tuple(f.path for f in files)
        version = tuple((_size(f.path), f.seq_base, f.turn_base) for f in files)
        with self._lock:
            hit = self._cache.get(paths)
            if hit is not None and hit[0] == version:
                self._cache.move_to_end(paths)
                return hit[1]
        messages = list(self.iter_session(files))
        with self._lock:
            self._cache[paths] = (version, messages)
            self._cache.move_to_end(paths)
            while len(self._cache) > CACHE_SESSIONS:
                self._cache.popitem(last=False)
        return messages


def _size(path: str) -> int:
    try:
        return os.stat(path).st_size
    except OSError:
        return -1
