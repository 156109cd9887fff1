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


BLOCK_BYTES = 8 << 20


def iter_blocks(path: Path, offset: int = 0, block_bytes: int = BLOCK_BYTES) -> Iterator[tuple[int, bytes]]:
    """Yield ``(end_offset, block)`` where each block is whole lines (ends in ``\n``).

    Decoding a block of lines in one call keeps the per-line work in C; a
    half-written last line stays unread, as with :func:`iter_lines`.
    """
    with open(path, "rb") as handle:
        if offset:
            handle.seek(offset)
        position = offset
        carry = b""
        while True:
            data = handle.read(block_bytes)
            if not data:
                return
            if carry:
                data = carry + data
            cut = data.rfind(b"\n")
            if cut < 0:
                carry = data
                continue
            block, carry = data[: cut + 1], data[cut + 1 :]
            position += len(block)
            yield position, block
