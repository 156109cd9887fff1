"""Retiring merged segments without pulling them from under a reader.

A reader (this process's or another's) opens a snapshot in two steps: it reads
the segment names from the catalog, then memory-maps each segment's files. Once
mapped, a segment can be unlinked safely (the mapping keeps the pages); between
the two steps it cannot. So a merge does not delete the segments it replaces: it
records them as *retired*, and they are deleted only while no reader is between
those two steps — readers hold a shared lock on ``readers.lock`` for that
moment, the writer deletes under an exclusive one taken without waiting (busy:
it tries again after its next merge or update, or when it next opens).
"""

from __future__ import annotations

import fcntl
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

READERS_LOCK = "readers.lock"


class ReaderPins:
    """The shared/exclusive lock that separates opening readers from deletion."""

    def __init__(self, cache: Path) -> None:
        self.path = cache / READERS_LOCK

    def _open(self) -> int | None:
        try:
            return os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        except OSError:
            try:  # a read-only cache directory: lock the existing file as it is
                return os.open(self.path, os.O_RDONLY)
            except OSError:
                return None

    @contextmanager
    def reading(self) -> Iterator[None]:
        """Held while a reader turns catalog names into mapped segments.

        (It waits only while a writer deletes retired segments: milliseconds.)
        """
        fd = self._open()
        try:
            if fd is not None:
                fcntl.flock(fd, fcntl.LOCK_SH)
            yield
        finally:
            if fd is not None:
                os.close(fd)  # closing releases the lock

    @contextmanager
    def deleting(self) -> Iterator[bool]:
        """True while no reader is opening a snapshot (then retired segments may go)."""
        fd = self._open()
        if fd is None:
            yield False
            return
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                yield False
                return
            yield True
        finally:
            os.close(fd)


def delete_segments(segments_dir: Path, names: list[str]) -> None:
    for name in names:
        shutil.rmtree(segments_dir / name, ignore_errors=True)
