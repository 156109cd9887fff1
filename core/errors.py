"""One error hierarchy for everything a user or a model can cause.

Front ends catch :class:`RelayError` and show its message as one line (CLI: stderr
and exit 1; MCP: a ToolError; HTTP: a status code; TUI: a notification).
"""

from __future__ import annotations


class RelayError(Exception):
    """A problem worth one clear line to the user, never a traceback."""

    status = 400  # HTTP status a front end should use


class NotFound(RelayError):
    status = 404


class BadInput(RelayError):
    status = 400


class StoreError(RelayError):
    status = 503


class OutOfSpace(RelayError):
    """The disk (or quota) is full: nothing is corrupt, the last good cache is kept."""

    status = 507


class WorkerLost(RelayError):
    """A parse worker of the cold index died (the kernel's out-of-memory killer, a kill):
    what was committed is kept and the next sync reads the rest."""

    status = 503


class SyncStopped(RelayError):
    """The archive is closing (the app quit mid-index): the sync stopped between chunks;
    what was committed is kept and the next sync reads the rest."""

    status = 503

    def __init__(self) -> None:
        super().__init__("the archive is closing: the index stopped; the next run reads the rest")
