"""Ash records, read and decoded: complete lines of a ``context.jsonl`` or
``history.jsonl`` to objects, each checked for the field types the tree relies on,
and the helpers that read a record's fields (timestamps, ids, message text).

Separate from :mod:`.ash_tree` (which message hangs where) and :mod:`.ash_entries`
(records to entries), which both read records through these helpers.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from .fields import label, timestamp
from .jsonl import WRONG_SHAPE, Skips, check_shape, decode_object, iter_lines
from .tool_text import bounded

_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.encode


def bound(text: str, full: bool, limit: int = 4000) -> str:
    """Keep head and tail of huge tool payloads when indexing (errors sit at the end)."""
    if full or len(text) <= limit:
        return text
    tail = limit // 4
    return bounded(text, limit - tail, tail)  # + the error/failure/version lines between


def _ts(rec: dict[str, Any]) -> str | None:
    return timestamp(rec.get("created_at") or rec.get("timestamp"))


_str = label  # (the name the ash modules import)


def _read_lines(path: Path, offset: int = 0) -> tuple[list[bytes], int]:
    """Complete lines from ``offset`` and the bytes they span (a partial tail is left)."""
    read = list(iter_lines(path, offset))
    return [line for _, _, line in read], (read[-1][1] - offset) if read else 0


class _Record(msgspec.Struct):
    """The fields of a record whose types the tree and the emitter rely on (ids are
    hashed, compared and used as keys); a record with another type in one of them
    is skipped. Other fields are read leniently."""

    type: str | None = None
    id: str | None = None
    parent_id: str | None = None
    role: str | None = None
    message_id: str | None = None
    tool_use_id: str | None = None
    agent_session_id: str | None = None
    parent_tool_use_id: str | None = None
    name: str | None = None
    branch_id: str | None = None


def _well_shaped(rec: dict[str, Any]) -> bool:
    if not check_shape(rec, _Record):
        return False
    content = rec.get("content")
    blocks = content if isinstance(content, list) else ()
    return all(
        not isinstance(b, dict) or check_shape(b, _Record) for b in blocks
    )


def _decode_lines(
    lines: list[bytes], first_index: int = 0, skips: Skips | None = None
) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    skips = skips if skips is not None else Skips()
    records: list[tuple[int, dict[str, Any]]] = []
    for index, raw in enumerate(lines, first_index):
        if not raw.strip():
            continue
        rec, reason = decode_object(raw)
        if rec is not None and not _well_shaped(rec):
            rec, reason = None, WRONG_SHAPE
        if rec is not None:
            records.append((index, rec))
        else:
            skips.add(reason or WRONG_SHAPE)
    return records, skips.total


def message_text(rec: dict[str, Any]) -> str:
    """The readable text of a message record (text blocks; images as [image])."""
    content = rec.get("content")
    if not isinstance(content, list):
        return _text(content)
    texts = []
    for block in content:
        if (
            isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        ):
            texts.append(block["text"])
        elif isinstance(block, dict) and block.get("type") in ("image", "image_url"):
            texts.append("[image]")
    return "\n".join(t for t in texts if t)


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            _text(v.get("text", "") if isinstance(v, dict) else v) for v in value
        ).strip()
    return "" if value is None else _encode(value).decode()
