"""Streaming JSONL reading shared by the line-based adapters.

Reads complete lines from a byte offset without loading the file: a half-written
last line (no trailing newline yet) is left for the next read, so the indexer's
stored offset always sits on a record boundary.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path


def iter_lines(path: Path, offset: int = 0) -> Iterator[tuple[int, int, bytes]]:
    """Yield ``(line_index_from_offset, end_offset, line)`` for complete lines.

    ``end_offset`` is the byte position just after the line's newline; the last
    yielded value is where the next read should start.
    """
    with open(path, "rb") as handle:
        if offset:
            handle.seek(offset)
        position = offset
        for index, line in enumerate(handle):
            if not line.endswith(b"\n"):
                return  # partial last line: picked up once it is complete
            position += len(line)
            yield index, position, line


def count_lines_before(path: Path, offset: int) -> int:
    """How many complete lines precede ``offset`` (entry_index of the next line)."""
    count = 0
    with open(path, "rb") as handle:
        remaining = offset
        while remaining > 0:
            chunk = handle.read(min(remaining, 1 << 20))
            if not chunk:
                break
            count += chunk.count(b"\n")
            remaining -= len(chunk)
    return count
