"""The contract between source adapters (one module per agent) and the indexer.

An adapter knows where its agent keeps transcripts and how to read them into
:class:`~core.model.Entry` values. It never knows about the catalog or the index:
the indexer calls :meth:`Source.discover` / :meth:`Source.read` and keeps whatever
``ReadResult.state`` the adapter hands back for the next incremental read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import msgspec

from core.config import Config
from core.model import Entry, FileMeta, Usage

from .fspath import display_text, is_text

# A file's role inside its session.
MAIN = "main"  # the session's own transcript (listed as a session)
SUBAGENT = "subagent"  # sidechain transcript attached to a parent session
AUX = "aux"  # extra file that belongs to a session (e.g. Ash history.jsonl)


class SourceFile(msgspec.Struct, frozen=True):
    """A transcript file found on disk, with what its path alone tells."""

    path: Path
    agent: str
    kind: str = MAIN
    project_key: str = ""  # stable id of the project dir (grouping, project names)
    session_id: str | None = None  # known from the path (None: read the records)
    parent_session_id: str | None = None  # for subagent files whose dir names it
    order_key: str = ""  # orders several files of one session (oldest first)

    def __post_init__(self) -> None:
        # Keys and ids taken from names are text downstream (catalog, JSON): a name
        # that is not UTF-8 gives them in escaped form; ``path`` stays exact.
        for name in ("project_key", "session_id", "parent_session_id", "order_key"):
            value = getattr(self, name)
            if value and not is_text(value):
                msgspec.structs.force_setattr(self, name, display_text(value))


class ReadResult(msgspec.Struct):
    """What one read of a file produced.

    ``offset`` is the byte position after the last complete record consumed; the
    next read starts there. ``replace`` says the entries stand for the whole file
    (a full re-read): earlier entries of this file are dropped. ``state`` is
    opaque to the indexer and handed back on the next read (msgspec-serializable
    values only). ``summaries`` are (leaf uuid, text) pairs that may describe
    another session (Claude's ``summary`` records); ``uuids`` are the record uuids
    seen, used to resolve those summaries' leaves, and ``record_keys`` (in the same
    order) the records' uuid *and* content (``Entry.record_key``), used to find the
    records a continued session replays: a reused uuid alone is no replay.
    ``reasons`` says why the ``skipped`` lines were skipped (reason -> count, see
    :mod:`core.sources.jsonl`).
    ``usage`` holds the token usage of the API responses read
    (:class:`~core.model.Usage`; agents that record none leave it empty, and so
    may a ``full_text`` read).
    """

    entries: list[Entry]
    meta: FileMeta
    offset: int
    skipped: int = 0
    replace: bool = True
    state: dict[str, Any] = msgspec.field(default_factory=dict)
    summaries: list[tuple[str, str]] = msgspec.field(default_factory=list)
    uuids: list[str] = msgspec.field(default_factory=list)
    record_keys: list[str] = msgspec.field(default_factory=list)
    error: str | None = None
    reasons: dict[str, int] = msgspec.field(default_factory=dict)
    usage: list[Usage] = msgspec.field(default_factory=list)


class Source(Protocol):
    """One agent's transcripts."""

    agent: str
    # Files only ever grow at the end (a touch without new bytes means nothing to
    # read); False for formats rewritten in place, where the same size can hide
    # new content.
    append_only: bool

    def watch_roots(self, config: Config) -> list[Path]:
        """Directories to watch for changes (may not exist yet)."""
        ...

    def discover(self, config: Config) -> Iterator[SourceFile]:
        """Every transcript file of this agent that the config selects."""
        ...

    def classify(self, path: Path, config: Config) -> SourceFile | None:
        """The SourceFile for a path a watcher reported, or None if not ours."""
        ...

    def read(
        self,
        file: SourceFile,
        *,
        offset: int = 0,
        state: dict[str, Any] | None = None,
        full_text: bool = False,
    ) -> ReadResult:
        """Read records from ``offset`` on (0 = the whole file).

        ``full_text=False`` (indexing) may bound huge tool outputs; ``True``
        (reading a conversation) keeps every character and may leave out what only
        the index keeps (``meta`` beyond the session id, and ``usage``: the catalog
        has both).
        """
        ...


class EntryCollector:
    """Collects an adapter's entries; every message of the file shares its sidechain flag."""

    def __init__(self, sidechain: bool = False) -> None:
        self.sidechain = sidechain
        self.entries: list[Entry] = []

    def _add(
        self,
        role: str,
        type_: str,
        text: str,
        ts: str | None,
        index: int,
        *,
        uid: str | None = None,
        parent: str | None = None,
        tool: str | None = None,
        tool_input: dict[str, Any] | None = None,
        starts: bool = False,
        notice: bool = False,
    ) -> None:
        self.entries.append(
            Entry(
                role=role,
                type=type_,
                text=text,
                timestamp=ts,
                uuid=uid,
                parent_uuid=parent,
                is_sidechain=self.sidechain,
                entry_index=index,
                starts_turn=starts,
                tool_name=tool,
                tool_input=tool_input,
                notice=notice,
            )
        )
