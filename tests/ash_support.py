"""Small Ash records and the helpers the in-process Ash adapter tests share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from core.model import Entry
from core.sources.ash import AshSource
from core.sources.ash_entries import _Emitter
from core.sources.ash_tree import _Item, _Tree

SRC = AshSource()
T1 = "2026-02-01T10:01:00+00:00"
T2 = "2026-02-01T10:02:00+00:00"
T3 = "2026-02-01T10:03:00+00:00"
T4 = "2026-02-01T10:04:00+00:00"
Z1, Z2, Z3, Z4 = (f"2026-02-01T10:0{n}:00.000Z" for n in (1, 2, 3, 4))
LONG = "".join(f"{i:05d} " for i in range(3000))  # 18000 characters, every cut visible


def E(role: str, type_: str, text: str, index: int = 0, **kw: Any) -> Entry:
    return Entry(role=role, type=type_, text=text, entry_index=index, **kw)


def msg(mid: str | None, role: str, content: Any, parent: str | None = None, ts: str | None = None, **kw: Any) -> dict:
    rec: dict[str, Any] = {"type": "message", "role": role, "content": content, **kw}
    if mid is not None:
        rec["id"] = mid
    if parent is not None:
        rec["parent_id"] = parent
    if ts is not None:
        rec["created_at"] = ts
    return rec


def tree(*recs: dict, heads: list[tuple[str, str]] | None = None) -> _Tree:
    return _Tree(list(enumerate(recs)), heads or [])


def item(index: int, rec: dict, **kw: Any) -> _Item:
    return _Item(index, rec, rec.get("type", "message"), **kw)


def emit(*items: _Item, full: bool = False, side_file: bool = False, label: str | None = None) -> _Emitter:
    emitter = _Emitter(full, side_file, list(items))
    for it in items:
        emitter.item(it, label)
    return emitter


def lines(path: Path, *recs: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("a", encoding="utf-8") as fh:
        for rec in recs:
            fh.write((rec if isinstance(rec, str) else json.dumps(rec)) + "\n")
    return path


def fork_records() -> list[dict]:
    """plan -> where? -> paris -> paris ok (untimed) | where? -> rome (newest)."""
    return [
        msg("u1", "user", "plan", ts=T1),
        msg("a1", "assistant", "where", parent="u1", ts=T2),
        msg("u2", "user", "paris", parent="a1", ts=T3),
        msg("a2", "assistant", "paris ok", parent="u2"),
        msg("u3", "user", "rome", parent="a1", ts=T4),
    ]
