"""A Codex session's identity and lineage: its id from the file name, the thread it
was forked or spawned from (``session_meta``), where that parent's rollout lies in
the same CODEX_HOME, and the ``FileMeta`` summed up from the read state.

Separate from the record decoding and parsing because these answer questions about
the session as a whole, asked by discovery (``classify``) and fork matching as well
as by the parser.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from core.model import FileMeta

from .base import SourceFile
from .codex_records import _State, _str

_ID_RE = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl(\.zst)?$", re.I
)


def session_id_from_name(name: str) -> str | None:
    match = _ID_RE.search(name)
    return match.group(1).lower() if match else None


def spawn_parent(meta: dict[str, Any]) -> str | None:
    """The parent thread of a spawned subagent rollout (``source.subagent``), if any."""
    source = meta.get("source")
    sub = source.get("subagent") if isinstance(source, dict) else None
    if sub is None:
        return None
    spawn = sub.get("thread_spawn") if isinstance(sub, dict) else None
    return _str(spawn.get("parent_thread_id") if isinstance(spawn, dict) else None) or _str(
        meta.get("parent_thread_id")
    )


def parent_of(meta: dict[str, Any]) -> tuple[str | None, bool]:
    """(thread whose history this rollout copied, is it a fork) from session_meta."""
    forked = _str(meta.get("forked_from_id"))
    return (forked, True) if forked else (spawn_parent(meta), False)


def locate_rollout(near: Path, session_id: str) -> Path | None:
    """The rollout of ``session_id`` in the CODEX_HOME that holds ``near``."""
    home = next(
        (p.parent for p in near.parents if p.name in ("sessions", "archived_sessions")), None
    )
    if home is None:
        return None
    pattern = f"*{session_id}.jsonl*"
    candidates = [
        *near.parent.glob(pattern),
        *(home / "sessions").rglob(pattern),
        *(home / "archived_sessions").glob(pattern),
    ]
    return next((c for c in candidates if c != near and c.is_file()), None)


def _meta(st: _State, file: SourceFile) -> FileMeta:
    m = st.meta
    return FileMeta(
        # (a rollout whose session_meta line is bad is still a session: named by its file)
        session_id=file.session_id or m.get("session_id") or file.path.name.split(".", 1)[0],
        cwd=m.get("cwd"),
        git_branch=m.get("git_branch"),
        title=m.get("title"),
        first_prompt=m.get("first_prompt"),
        first_timestamp=m.get("first_timestamp"),
        last_timestamp=m.get("last_timestamp"),
        version=m.get("version"),
    )
