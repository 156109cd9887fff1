"""Only regular files are read: a FIFO, a device or a socket is never a transcript.

A FIFO named like a transcript blocks the reader that opens it until something
writes to it (for good, deaf to Ctrl-C); a link to ``/dev/zero`` never ends. So
every file an adapter reads is opened here: without blocking (``O_NONBLOCK``: a
FIFO opens at once instead of waiting for a writer), then ``fstat``-ed on the open
descriptor — the file that will be read, whatever replaced the path meanwhile —
and refused unless it is a regular file. A link to a regular file is read as that
file. Planning a sync skips such paths before they are opened (one ``stat`` it
makes anyway): this is the check that holds when a path changes in between.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import BinaryIO

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a directory"),
)


class NotRegularFile(OSError):
    """The path names something other than a regular file; nothing of it was read."""


def kind_of(mode: int) -> str:
    """What a non-regular file is, in words ("a FIFO")."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def is_regular(mode: int) -> bool:
    return stat.S_ISREG(mode)


def open_regular(path: str | os.PathLike[str]) -> BinaryIO:
    """``path`` opened for reading (binary), or :class:`NotRegularFile` (an ``OSError``)."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(f"{os.fsdecode(path)} is {kind_of(mode)}, not a regular file: not read")
        os.set_blocking(fd, True)  # (a regular file never blocks; plain reads from here)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: str | os.PathLike[str], limit: int = -1) -> bytes:
    """The bytes of a regular file (the first ``limit`` when given); ``OSError`` otherwise."""
    with open_regular(path) as handle:
        return handle.read(limit)


def read_regular_text(path: Path) -> str:
    return read_regular(path).decode("utf-8")
