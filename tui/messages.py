"""Messages named for what happened; workers post them, handlers own widget state.

Every blocking call runs in a thread worker (see :meth:`tui.app.RelayApp.submit`),
which posts one of these to the widget that asked. Nothing here touches a widget.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from textual.message import Message


@dataclass
class ArchiveOpened(Message):
    """The archive is open (as cached); the panes can query it."""


@dataclass
class SyncProgress(Message):
    """Indexing progress during the first sync."""

    done_files: int
    total_files: int
    phase: str = "indexing"

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, SyncProgress)


@dataclass
class SyncFinished(Message):
    """The first sync with the disk is done (the watcher starts next)."""

    result: Any  # core.views.UpdateResult


@dataclass
class ArchiveChanged(Message):
    """The watcher saw new or changed transcripts (bursts collapse into one).

    The changed session ids are collected by the app under a lock, so a replaced
    message loses nothing: the handler takes everything pending.
    """

    def can_replace(self, message: Message) -> bool:
        return isinstance(message, ArchiveChanged)


@dataclass
class StatsUpdated(Message):
    """Fresh index statistics for the status line."""

    stats: Any  # core.views.IndexStats


@dataclass
class SearchFinished(Message):
    """Hits for ``query``; dropped by the pane if the query is no longer current."""

    query: str
    hits: list[Any]
    elapsed_ms: float
    refresh: bool = False  # a live refresh: keep the selection
    opens: str | None = None  # the query is a reference (slug#4-5, an id prefix): offer to open it
    offset: int = 0  # > 0: a further page, appended to the list
    grouped: bool = True  # one row per session (group="session")
    complete: bool = True  # a short page: nothing after these hits


@dataclass
class SessionsLoaded(Message):
    """Sessions for the sessions pane, newest activity first."""

    sessions: list[Any]
    chains: dict[str, list[Any]] = field(default_factory=dict)  # slug -> whole chain
    limit: int = 0
    refresh: bool = False


@dataclass
class ConversationLoaded(Message):
    """Everything the reader needs to paint a reference (blocks built off-thread)."""

    ref: str
    sessions: list[Any]  # SessionInfo in chain order
    blocks: list[Any]  # tui.blocks.Block
    target: int | None  # index of the block to scroll to
    hit_blocks: list[int]  # blocks holding search hits (n / N)
    query: str
    refresh: bool = False
    follow: bool = False
    unfold_subagents: bool = False  # the hit was in a subagent's work: show it
    marks: Any = None  # tui.marks.Marks: what the reader highlights (the query, as the hit list matched it)
    matches: list[Any] = field(default_factory=list)  # tui.marks.Match, in reading order (n / N)
    target_match: int | None = None  # the match to open at (the chosen hit's passage)
    matches_complete: bool = True  # False: only the target turn's; MatchesCounted brings them all


@dataclass
class MatchesCounted(Message):
    """Every match of the query in an open conversation, counted after its first paint."""

    ref: str
    marks: Any  # the tui.marks.Marks they were counted for
    matches: list[Any]


@dataclass
class Copied(Message):
    """Text went to the clipboard (``how`` says which way worked)."""

    what: str
    text: str
    how: str
    detail: str = ""
    path: str = ""  # the file the text was also saved to ("" if that failed)


@dataclass
class TagsSaved(Message):
    session_id: str
    tags: list[str]


@dataclass
class ChoicesLoaded(Message):
    """Values for a filter picker (projects, agents, tags)."""

    kind: str
    values: list[str]


@dataclass
class TagsLoaded(Message):
    """A session's current tags, to prefill the tag dialog."""

    session_id: str
    tags: list[str]


@dataclass
class SessionCount(Message):
    """How many sessions the archive holds (0 → the empty screen)."""

    count: int


@dataclass
class ResumeReady(Message):
    """The command that resumes a session (copied), or why there is none."""

    ref: str
    command: str | None
    note: str | None
    how: str = ""
    detail: str = ""
    path: str = ""  # the file the command was also saved to ("" if that failed)


@dataclass
class ExportDone(Message):
    """Files an export wrote (or the one line saying why it could not)."""

    ref: str
    description: str
    error: str | None = None
    exists: str | None = None  # the file that is already there (nothing written): ask before replacing


@dataclass
class UsageLoaded(Message):
    """A token usage report for the usage screen."""

    report: Any  # core.outputs.usage.UsageReport
