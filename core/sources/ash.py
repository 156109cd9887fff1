"""Ash (dcramer/ash, a chat-bot agent) sessions and chat logs under ``~/.ash``.

Layout::

    sessions/<session_key>/context.jsonl          full LLM context (a tree)   -> the session
    sessions/<session_key>/state.json             provider ids + branch heads
    sessions/<session_key>/history.jsonl          text-only copy of the messages
    sessions/<session_key>/subagents/<id>.jsonl   a subagent's own context   -> SUBAGENT
    chats/<provider>/<chat_id>/history.jsonl      every message in the chat  -> own session

Session id = the session dir name (``telegram_123_456``). A chat log is its own
session ``chat-<provider>_<chat_id>``: one chat spans many sessions (threads) and
also holds group messages no session saw, so it cannot be an AUX of one of them.
A session's ``history.jsonl`` repeats context messages with the same ids, so it is
read only when ``context.jsonl`` is missing; changes to it or to ``state.json``
classify to the session's main file so the session is re-read.

Record schema (``context.jsonl``; the shapes Ash v1/v2 write, read leniently)::

    {"type":"session","version":"2","id":<uuid>,"created_at":…,"provider":…,"chat_id":…,"user_id":…}
    {"type":"message","id":…,"parent_id":…?,"role":"user|assistant|system","content":str|[blocks],
     "created_at"|"timestamp":…,"agent_session_id":…?}
    {"type":"tool_use","id":<tool id>,"message_id"|"parent_id":…,"name":…,"input":{…}}
    {"type":"tool_result","tool_use_id":…,"output":str,"success":bool}
    {"type":"compaction","id":…,"summary":…,"first_kept_entry_id":…,"branch_id":…?}
    {"type":"agent_session","id":…,"parent_tool_use_id":…,"agent_type":…,"agent_name":…}
    {"type":"agent_session_complete","agent_session_id":…,"result":…,"is_error":bool}

    state.json: {"provider":…, "chat_id":…, "branches":[{"branch_id":…, "head_message_id":…,
                 "fork_point_id":…?, "created_at":…}]}   (a {branch_id: {...}} map is accepted too)

Content blocks are Anthropic-style (text, thinking, tool_use, tool_result, image).

Tree rules (why the output looks the way it does):

* Messages are the tree nodes. ``parent_id`` names the parent; a message without
  one follows the previous message in file order (the v1 rule, so v1 files are a
  single chain). Tool uses hang on their ``message_id``, results on their tool
  use, subagent entries (``agent_session_id``) on the tool use that spawned them,
  anything else on the previous message — so a tool pair always lands on the
  branch of the message that made the call.
* Branch tips are the heads in ``state.json`` (a head with one unnamed chain below
  it is stale and extends to that chain's end) plus any leaf no head names. The
  default view is the path to the tip with the newest head message; each other
  branch's exclusive part follows it as one segment, in order of first line. Shared
  history is assigned newest-tip-first, so every entry appears once (only a
  branch's opening question may be repeated, below) and search covers every branch. Entries on the default path have ``branch=None``; the
  rest carry their branch id (``leaf:<id>`` for tips ``state.json`` does not know).
* Every other branch opens its own turn, so alternatives never merge into a turn
  of the default view: with its own first prompt, or, when it starts with a
  regenerated answer, with the question that answer replies to repeated
  (``uuid=None``, ``parent_uuid`` = the original). A system note right after that
  prompt marks the fork point (``parent_uuid`` = the message it forks from).
* A compaction with a ``branch_id`` belongs to that branch's segment only; an
  unscoped one sits where it was written.
* The session file is always re-read whole (``replace=True``): a new message can
  change which branch is the default. Chat logs are plain appends and are read
  incrementally.

This module finds the files, reads them and sums up the session; :mod:`.ash_records`
decodes the lines, :mod:`.ash_tree` builds the tree and its branch segments, and
:mod:`.ash_entries` turns the segments into entries.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

from core.config import Config
from core.model import Entry, FileMeta

from .base import MAIN, SUBAGENT, ReadResult, SourceFile
from .regular import read_regular

# The reading modules (.ash_records, .ash_tree, .ash_entries, .jsonl) are imported by the
# functions that read: finding the files, all a search with nothing new does here, needs none.

AGENT = "ash"
CHAT_PREFIX = "chat-"


def read_heads(path: Path) -> list[tuple[str, str]]:
    """(branch id, head message id) pairs from a session's state.json."""
    from .ash_records import _decode, _str
    from .jsonl import DECODE_ERRORS

    try:
        state = _decode(read_regular(path))
    except (OSError, *DECODE_ERRORS):
        return []
    branches = state.get("branches") if isinstance(state, dict) else None
    if isinstance(branches, dict):
        branches = [{"branch_id": k, **v} for k, v in branches.items() if isinstance(v, dict)]
    heads: list[tuple[str, str]] = []
    for branch in branches if isinstance(branches, list) else []:
        if isinstance(branch, dict):
            bid = _str(branch.get("branch_id") or branch.get("id"))
            head = _str(branch.get("head_message_id") or branch.get("head"))
            if bid and head:
                heads.append((bid, head))
    return heads


class AshSource:
    """The ``Source`` for Ash sessions and chat logs."""

    agent = AGENT
    append_only = False

    def watch_roots(self, config: Config) -> list[Path]:
        return [config.ash_home / "sessions", config.ash_home / "chats"]

    def discover(self, config: Config) -> Iterator[SourceFile]:
        sessions, chats = self.watch_roots(config)
        seen: set[Path] = set()
        found = [
            *sessions.glob("*/context.jsonl"),
            *sessions.glob("*/history.jsonl"),
            *sessions.glob("*/subagents/*.jsonl"),
            *chats.glob("*/*/history.jsonl"),
        ]
        for path in sorted(found):
            file = self.classify(path, config)
            if file is not None and file.path not in seen:
                seen.add(file.path)
                yield file

    def classify(self, path: Path, config: Config) -> SourceFile | None:
        sessions, chats = self.watch_roots(config)
        if path.is_relative_to(chats):
            rel = path.relative_to(chats).parts
            if len(rel) == 3 and rel[2] == "history.jsonl":
                return SourceFile(
                    path=path,
                    agent=AGENT,
                    project_key=rel[0],
                    session_id=f"{CHAT_PREFIX}{rel[0]}_{rel[1]}",
                    order_key=rel[2],
                )
            return None
        if not path.is_relative_to(sessions):
            return None
        rel = path.relative_to(sessions).parts
        key = rel[0] if rel else ""
        provider = key.split("_", 1)[0]
        if len(rel) == 3 and rel[1] == "subagents" and path.suffix == ".jsonl":
            return SourceFile(
                path=path,
                agent=AGENT,
                kind=SUBAGENT,
                project_key=provider,
                session_id=path.stem,
                parent_session_id=key,
                order_key=path.name,
            )
        if len(rel) != 2 or rel[1] not in ("context.jsonl", "history.jsonl", "state.json"):
            return None
        main = sessions / key / "context.jsonl"
        if not main.is_file():  # (only a regular file is read: core/sources/regular.py)
            main = sessions / key / "history.jsonl"
            if not main.is_file():
                return None
        return SourceFile(
            path=main, agent=AGENT, project_key=provider, session_id=key, order_key=main.name
        )

    def read(
        self,
        file: SourceFile,
        *,
        offset: int = 0,
        state: dict[str, Any] | None = None,
        full_text: bool = False,
    ) -> ReadResult:
        from .ash_entries import _Emitter
        from .ash_records import _decode_lines, _read_lines
        from .ash_tree import _Tree
        from .jsonl import UNREADABLE, Skips

        try:
            if file.path.name == "history.jsonl":
                return self._read_history(file, offset, state or {}, full_text)
            lines, used = _read_lines(file.path)
        except OSError as exc:
            return ReadResult([], FileMeta(session_id=file.session_id), 0, error=str(exc))
        skips = Skips()
        records, _ = _decode_lines(lines, 0, skips)
        heads = read_heads(file.path.parent / "state.json") if file.kind == MAIN else []
        tree = _Tree(records, heads)
        emitter = _Emitter(full_text, file.kind == SUBAGENT, tree.items)
        for label, fork, items in tree.ordered():
            emitter.segment(label, fork, items, tree)
        skips.add(UNREADABLE, emitter.unreadable)
        return ReadResult(
            entries=emitter.entries,
            meta=_meta(file, emitter.entries, tree.header),
            offset=used,
            skipped=skips.total,
            reasons=skips.counts,
            replace=True,
            state={},
        )

    def _read_history(
        self, file: SourceFile, offset: int, state: dict[str, Any], full: bool
    ) -> ReadResult:
        """A text-only message log: plain appends, read incrementally."""
        from .ash_entries import _Emitter
        from .ash_records import _decode_lines, _read_lines
        from .ash_tree import _Item
        from .jsonl import UNREADABLE, Skips

        if offset > file.path.stat().st_size:
            offset, state = 0, {}
        line = state.get("line", 0) if offset else 0
        lines, used = _read_lines(file.path, offset)
        skips = Skips()
        records, _ = _decode_lines(lines, line, skips)
        items = [_Item(i, {**r, "type": "message"}, "message") for i, r in records]
        emitter = _Emitter(full, False, [])
        for item in items:
            emitter.item(item, None)
        skips.add(UNREADABLE, emitter.unreadable)
        meta = _meta(file, emitter.entries, {})
        if offset:  # earlier lines are not re-read: carry what they told us
            meta = FileMeta(
                session_id=meta.session_id,
                first_prompt=state.get("first_prompt") or meta.first_prompt,
                first_timestamp=state.get("first_timestamp") or meta.first_timestamp,
                last_timestamp=meta.last_timestamp or state.get("last_timestamp"),
            )
        new_state = {
            "line": line + len(lines),
            "first_prompt": meta.first_prompt,
            "first_timestamp": meta.first_timestamp,
            "last_timestamp": meta.last_timestamp,
        }
        return ReadResult(
            entries=emitter.entries,
            meta=meta,
            offset=offset + used,
            skipped=skips.total,
            reasons=skips.counts,
            replace=not offset,
            state=new_state,
        )


def _meta(file: SourceFile, entries: list[Entry], header: dict[str, Any]) -> FileMeta:
    from .ash_records import _str, _ts

    stamps = sorted(e.timestamp for e in entries if e.timestamp)
    prompt = next(
        (e.text for e in entries if e.starts_turn and not e.branch and not e.is_sidechain), None
    )
    version = header.get("version")
    header_id = _str(header.get("id"))
    return FileMeta(
        session_id=file.session_id,
        cwd=_str(header.get("cwd")),
        first_prompt=prompt[:500] if prompt else None,
        first_timestamp=stamps[0] if stamps else _ts(header),
        last_timestamp=stamps[-1] if stamps else _ts(header),
        version=str(version) if version is not None else None,
        aliases=(header_id,) if header_id and header_id != file.session_id else (),
    )
