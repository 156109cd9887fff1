"""Session rows, assembled from the rows of the files a session's records came from.

A session is listed only when its main files hold at least one message: a
summary-only file, an empty parent of a "Warmup" subagent, or a lone subagent file
is attached data, not a conversation.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

from core.config import Config
from core.sources import MAIN
from core.timeutil import parse_ts


@dataclass(slots=True)
class Changes:
    """Sessions whose rows must be recomputed, and sessions that are gone."""

    changed: set[str] = field(default_factory=set)
    removed: set[str] = field(default_factory=set)
    new: set[str] = field(default_factory=set)


_FILE_COLS = ("file_id", "agent", "kind", "project_key", "order_key", "n_messages", "n_turns", "skipped", "meta", "mtime_ns", "summaries")


def rebuild(db, session_ids: Iterable[str], config: Config) -> Changes:
    """Recompute the rows of these sessions from their files."""
    changes = Changes()
    wanted = sorted({s for s in session_ids if s})
    for start in range(0, len(wanted), 500):
        batch = wanted[start : start + 500]
        marks = ",".join("?" * len(batch))
        files: dict[str, list[dict]] = {sid: [] for sid in batch}
        for r in db.execute(f"SELECT session_id, {', '.join(_FILE_COLS)} FROM files WHERE session_id IN ({marks})", batch):
            files[r[0]].append(dict(zip(_FILE_COLS, r[1:])))
        existing = {r[0]: r[1:] for r in db.execute(f"SELECT session_id, continues, summary FROM sessions WHERE session_id IN ({marks})", batch)}
        upserts = []
        for sid in batch:
            existed = existing.get(sid)
            row = _assemble(sid, files[sid], config)
            if row is None:
                if existed:
                    db.execute("DELETE FROM sessions WHERE session_id=?", (sid,))
                    changes.removed.add(sid)
                continue
            if existed:
                # Resolved across files by apply_links (and only there: a fresh build
                # and an append must label a session alike); an append keeps them.
                row["continues"] = existed[0]
                row["summary"] = existed[1]
            upserts.append(row)
            changes.changed.add(sid)
            if not existed:
                changes.new.add(sid)
        if upserts:
            cols = ", ".join(upserts[0])
            marks = ", ".join("?" * len(upserts[0]))
            db.executemany(f"INSERT OR REPLACE INTO sessions({cols}) VALUES({marks})", [tuple(r.values()) for r in upserts])
    return changes


def _assemble(sid: str, rows: list[dict], config: Config) -> dict | None:
    for r in rows:
        r["meta_d"] = json.loads(r["meta"] or "{}")
    order = lambda r: (r["meta_d"].get("first_timestamp") or "", r["order_key"])  # noqa: E731
    mains = sorted((r for r in rows if r["kind"] == MAIN), key=order)
    others = sorted((r for r in rows if r["kind"] != MAIN), key=order)
    if not mains:
        # Subagent transcripts whose parent transcript is gone: the only record of
        # that conversation, so it is listed (its subagent files stand in for it) —
        # unless all that is left are Claude Code's "Warmup" pings.
        mains, others = [r for r in others if not _is_warmup(r)], []
    if sum(r["n_messages"] for r in mains) == 0:
        return None
    ordered = mains + others
    metas = [r["meta_d"] for r in ordered]
    main_metas = [r["meta_d"] for r in mains]
    firsts = [m.get("first_timestamp") for m in metas if m.get("first_timestamp")]
    lasts = [m.get("last_timestamp") for m in metas if m.get("last_timestamp")]
    aliases: list[str] = []
    for m in metas:
        for a in m.get("aliases") or ():
            if a not in aliases and a != sid:
                aliases.append(a)
    return {
        "session_id": sid,
        "agent": mains[0]["agent"],
        "project_key": mains[0]["project_key"],
        "cwd": _first(m.get("cwd") for m in main_metas) or _first(m.get("cwd") for m in metas),
        "git_branch": _first(m.get("git_branch") for m in reversed(main_metas)),
        "slug": _first(m.get("slug") for m in reversed(main_metas)),
        "summary": None,  # set by apply_links: a summary may describe another session
        "title": _first(m.get("title") for m in reversed(main_metas)),
        "first_prompt": _first(m.get("first_prompt") for m in main_metas),
        "first_ts": min(firsts, key=parse_ts) if firsts else None,  # by time: offsets differ
        "last_ts": max(lasts, key=parse_ts) if lasts else None,
        "turn_count": sum(r["n_turns"] for r in mains),
        "message_count": sum(r["n_messages"] for r in ordered),
        "file_ids": json.dumps([r["file_id"] for r in ordered]),
        "skipped": sum(r["skipped"] for r in ordered),
        "continues": None,
        "aliases": json.dumps(aliases),
        "user": config.user,
        "mtime_ns": max(r["mtime_ns"] for r in ordered),
    }


def apply_links(db, links: dict[str, str], summaries: dict[str, list[str]]) -> Changes:
    """Store continuation links and summaries resolved across files."""
    changes = Changes()
    # Only sessions that have a link or summary now, or are given one, can change (not
    # every session: at 100,000 sessions that dict was the peak of a cold index's memory).
    current = {sid: (cont, summ) for sid, cont, summ in db.execute(
        "SELECT session_id, continues, summary FROM sessions WHERE continues IS NOT NULL OR summary IS NOT NULL")}
    for sid in (links.keys() | summaries.keys()) - current.keys():
        row = db.execute("SELECT continues, summary FROM sessions WHERE session_id=?", (sid,)).fetchone()
        if row is not None:
            current[sid] = (row[0], row[1])
    for sid, (cont, summ) in current.items():
        new_cont = links.get(sid)
        texts = summaries.get(sid)
        new_summ = texts[-1] if texts else None
        if new_cont != cont or new_summ != summ:
            db.execute("UPDATE sessions SET continues=?, summary=? WHERE session_id=?", (new_cont, new_summ, sid))
            changes.changed.add(sid)
    return changes


def _is_warmup(row: dict) -> bool:
    """Claude Code 2.0 starts each subagent with a one-word "Warmup" prompt."""
    return (row["meta_d"].get("first_prompt") or "").strip() == "Warmup"


def _first(values):
    for v in values:
        if v:
            return v
    return None
