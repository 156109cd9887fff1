"""Streaming JSONL reading shared by the line-based adapters.

Reads complete lines from a byte offset without loading the file: a half-written
last line (no trailing newline yet) is left for the next read, so the indexer's
stored offset always sits on a record boundary.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from .regular import open_regular


def iter_lines(path: Path, offset: int = 0) -> Iterator[tuple[int, int, bytes]]:
    """Yield ``(line_index_from_offset, end_offset, line)`` for complete lines.

    ``end_offset`` is the byte position just after the line's newline; the last
    yielded value is where the next read should start.
    """
    with open_regular(path) as handle:
        if offset:
            handle.seek(offset)
        position = offset
        for index, line in enumerate(handle):
            if not line.endswith(b"\n"):
                return  # partial last line: picked up once it is complete
            position += len(line)
            yield index, position, line


# 1 MB: reading an 18 MB session back (a messages call) held ~62 MB at its peak with 8 MB blocks
# (the block, its copy before the carry, and the records decoded from it), ~13 MB with 1 MB ones;
# no slower (reading the bench's six largest files: 0.26-0.29 against 0.33-0.34 CPU-s), and
# most sessions are smaller than a block either way (issue 35).
BLOCK_BYTES = 1 << 20


def iter_blocks(path: Path, offset: int = 0, block_bytes: int = BLOCK_BYTES) -> Iterator[tuple[int, bytes]]:
    """Yield ``(end_offset, block)`` where each block is whole lines (ends in ``\n``).

    Decoding a block of lines in one call keeps the per-line work in C; a
    half-written last line stays unread, as with :func:`iter_lines`.
    """
    with open_regular(path) as handle:
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


# --- one line, decoded or counted ---------------------------------------------------
#
# A bad line costs that line only: it is skipped and counted under one of these
# reasons (what ``relay-search index --stats`` shows per file), never raised.
INVALID_JSON = "invalid JSON"
INVALID_UTF8 = "invalid UTF-8"
NOT_OBJECT = "not an object"
WRONG_SHAPE = "wrong shape"
TOO_DEEP = "too deeply nested"
UNREADABLE = "unreadable record"  # the adapter failed on it (a shape nobody foresaw)

# Deepest nesting a record read whole may have. No agent writes more than ~10
# levels; the decoder itself gives up near Python's recursion limit, which depends
# on how deep the calling stack already is, so without a fixed limit the indexer
# and a reader could disagree about a line nested ~900 levels deep.
MAX_DEPTH = 128
WALK_FIRST = 64  # containers too_deep walks before it asks the raw bytes

_decode_any = msgspec.json.Decoder().decode


class Skips:
    """Lines skipped by one read, counted by reason."""

    __slots__ = ("counts",)

    def __init__(self, counts: dict[str, int] | None = None) -> None:
        self.counts: dict[str, int] = dict(counts or {})

    def add(self, reason: str, n: int = 1) -> None:
        if n:
            self.counts[reason] = self.counts.get(reason, 0) + n

    @property
    def total(self) -> int:
        return sum(self.counts.values())


def decode_error(exc: BaseException) -> str:
    """The skip reason for an exception a JSON decoder raised on one line."""
    if isinstance(exc, UnicodeDecodeError):
        return INVALID_UTF8
    if isinstance(exc, RecursionError):
        return TOO_DEEP
    if isinstance(exc, msgspec.ValidationError):
        return WRONG_SHAPE
    return INVALID_JSON


DECODE_ERRORS = (msgspec.DecodeError, UnicodeDecodeError, RecursionError)


def too_deep(value: Any, raw: bytes | msgspec.Raw | None = None, limit: int = MAX_DEPTH) -> bool:
    """Whether ``value`` (decoded from ``raw``, when given) nests deeper than ``limit``.

    The walk (iterative: a recursive one would hit the very limit it guards)
    starts at once, and most values end it within a few containers (a tool
    result is a list of a text block or two). Past :data:`WALK_FIRST` containers
    the raw bytes are asked first: only a line with more than ``limit`` brackets
    can be too deep. (Counting them first read every tool result's bytes twice
    more: a tenth of a cold index's parsing.)
    """
    if not isinstance(value, (dict, list)):
        return False
    stack: list[tuple[Any, int]] = [(value, 1)]
    walked = 0
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        walked += 1
        if walked == WALK_FIRST and raw is not None:
            data = raw if isinstance(raw, bytes) else bytes(raw)
            if data.count(b"{") + data.count(b"[") <= limit:
                return False
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False


# --- what agents write that a strict decoder refuses ---------------------------------------
#
# Node's JSON.stringify writes a lone surrogate as an escape ("\ud83d") when a string
# was cut mid-emoji (Claude Code and Gemini CLI are Node programs), and an editor may
# start a file with a byte-order mark. Both cost nothing but the half character: a
# line the decoder refuses is repaired and decoded again (never on the fast path).
BOM = b"\xef\xbb\xbf"
_SURROGATE_ESCAPE = re.compile(rb"(\\+)u[dD]([89a-fA-F])[0-9a-fA-F]{2}")


def repair(raw: bytes) -> bytes | None:
    """``raw`` without a leading byte-order mark and with each lone surrogate escape
    replaced by ``\ufffd`` (a pair stays); None when there is neither."""
    fixed = raw[len(BOM):] if raw.startswith(BOM) else raw
    if b"\\u" in fixed or b"\\U" in fixed:
        fixed = _lone_surrogates_replaced(fixed)
    return fixed if fixed != raw else None


def _lone_surrogates_replaced(raw: bytes) -> bytes:
    # (an odd run of backslashes escapes the "u"; an even one is a literal backslash)
    escapes = [m for m in _SURROGATE_ESCAPE.finditer(raw) if len(m.group(1)) % 2]
    out: list[bytes] = []
    last = i = 0
    while i < len(escapes):
        m = escapes[i]
        high = m.group(2) in b"89abAB"
        following = escapes[i + 1] if i + 1 < len(escapes) else None
        if high and following is not None and following.start() == m.end() and len(following.group(1)) == 1 \
                and following.group(2) not in b"89abAB":
            i += 2  # a pair: one character, kept
            continue
        out.append(raw[last : m.end(1)] + b"ufffd")
        last = m.end()
        i += 1
    out.append(raw[last:])
    return b"".join(out)


def decode_object(raw: bytes) -> tuple[dict[str, Any] | None, str | None]:
    """One JSONL line as a dict, or ``(None, reason)`` for a line to skip."""
    try:
        value = _decode_any(raw)
    except DECODE_ERRORS as exc:
        fixed = repair(raw) if isinstance(exc, msgspec.DecodeError) else None
        if fixed is None:
            return None, decode_error(exc)
        return decode_object(fixed)
    if not isinstance(value, dict):
        return None, NOT_OBJECT
    if too_deep(value, raw):
        return None, TOO_DEEP
    return value, None


def check_shape(value: dict[str, Any], shape: type) -> bool:
    """Whether the fields an adapter uses have the types it expects (``shape`` is a
    msgspec Struct naming them; other fields are ignored)."""
    try:
        msgspec.convert(value, shape)
    except msgspec.ValidationError:
        return False
    return True
