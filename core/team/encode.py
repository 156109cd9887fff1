"""Rows as the team store takes them: text without NULs, JSON jsonb accepts,
postings as PostgreSQL binary COPY data built in numpy (millions of rows), and the
digest that tells whether a session's row changed since the last sync."""

from __future__ import annotations

import hashlib
import json
from typing import Any

import numpy as np

from core.index.segment import TOOL_FIELD
from core.model import Message

TERM_MASK = (1 << 48) - 1
_PGCOPY_HEADER = b"PGCOPY\n\xff\r\n\x00" + (0).to_bytes(4, "big") + (0).to_bytes(4, "big")
_POSTING_ROW = np.dtype([
    ("n", ">i2"), ("l1", ">i4"), ("term", ">i8"), ("l2", ">i4"), ("field", ">i2"),
    ("l3", ">i4"), ("doc", ">i8"), ("l4", ">i4"), ("tf", ">f4"), ("l5", ">i4"), ("dl", ">f4"),
])  # fmt: skip


def session_digest(row: dict[str, Any], paths: list[str]) -> str:
    data = {k: v for k, v in row.items() if k != "file_ids"}
    text = json.dumps(data, sort_keys=True, default=str) + "\n" + "\n".join(paths)
    return hashlib.sha1(text.encode()).hexdigest()


def message_row(file_id: int, m: Message) -> tuple:
    return (
        file_id, m.sequence, m.role, m.type, clean(m.text or ""), m.timestamp, m.uuid, m.parent_uuid,
        bool(m.is_sidechain), m.entry_index, m.turn, m.tool_name,
        to_json(m.tool_input) if m.tool_input is not None else None, m.branch,
    )  # fmt: skip


def postings_binary(p, ids: np.ndarray) -> bytes:
    """Postings as PostgreSQL binary COPY data, built in numpy (millions of rows)."""
    n = p.term.shape[0]
    rows = np.empty(n, dtype=_POSTING_ROW)
    rows["n"] = 5
    rows["l1"], rows["l2"], rows["l3"], rows["l4"], rows["l5"] = 8, 2, 8, 4, 4
    term = np.asarray(p.term, dtype=np.int64)
    is_tool = term >= TOOL_FIELD
    rows["term"] = term & TERM_MASK
    rows["field"] = is_tool.astype(np.int16)
    doc = np.asarray(p.doc, dtype=np.int64)
    rows["doc"] = ids[doc]
    rows["tf"] = p.tf
    rows["dl"] = np.where(is_tool, np.asarray(p.len_tool)[doc], np.asarray(p.len_main)[doc])
    return _PGCOPY_HEADER + rows.tobytes() + (-1).to_bytes(2, "big", signed=True)


def clean(text: str) -> str:
    """PostgreSQL text cannot hold NUL characters."""
    return text.replace("\x00", "\ufffd") if "\x00" in text else text


def clean_opt(text: str | None) -> str | None:
    return clean(text) if isinstance(text, str) else text


def to_json(value: Any) -> str:
    text = json.dumps(value, ensure_ascii=False, default=str)
    if "\\u0000" in text:  # jsonb rejects \u0000 too
        text = json.dumps(_strip_nul(value), ensure_ascii=False, default=str)
    return clean(text)


def _strip_nul(value: Any) -> Any:
    if isinstance(value, str):
        return clean(value)
    if isinstance(value, dict):
        return {clean(str(k)): _strip_nul(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_strip_nul(v) for v in value]
    return value
