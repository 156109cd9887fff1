"""Codex CLI rollouts: ``$CODEX_HOME/sessions/YYYY/MM/DD/rollout-*.jsonl`` and
``$CODEX_HOME/archived_sessions/*.jsonl`` (optionally ``.jsonl.zst``).

One rollout file is one session. Its lines are envelopes
``{"timestamp", "type", "payload"}`` of type ``session_meta``, ``response_item``,
``event_msg``, ``turn_context`` and ``compacted``; the oldest rollouts are "flat"
(a ``{"id", "timestamp"}`` header, then bare response items).

Why the rules below:

* **Each message is written twice.** The model-facing ``response_item`` and the
  UI-facing ``event_msg`` (``user_message``, ``agent_message``,
  ``agent_reasoning``, ``context_compacted``) describe the same thing, in either
  order. Response items (and ``compacted`` lines) are the primary source; the
  events are used only while a file has no primary record of that kind (legacy or
  truncated files). An incremental read that fell back to events and then meets a
  primary record re-reads the whole file (``replace=True``), so nothing counts twice.
* **Machinery is not a prompt.** Developer messages and the user-role text Codex
  injects (``<environment_context>``, ``<user_instructions>``, AGENTS.md, …) are
  dropped, as the Claude adapter drops its machinery; the VS Code wrapper ("# Context
  from my IDE setup … ## My request for Codex:") is cut down to the typed request.
* **Forks keep copied history once.** A forked (``forked_from_id``) or spawned
  subagent rollout starts with a copy of its parent's history, re-serialized and
  often re-stamped, so neither bytes nor timestamps identify it. The copied prefix
  is found by content: the parent rollout is located by id in the same CODEX_HOME,
  both are parsed into entries, and the fork's leading entries equal to the
  parent's, in order (role, type, text, tool), are dropped; a system entry marks
  where the fork came from. Without the parent file everything is kept.
* Subagent rollouts (``source.subagent.thread_spawn``) are attached to their
  parent thread; ``classify`` peeks at the first line to know.

This module finds the files, reads them (incrementally) and drops a fork's copied
history; :mod:`.codex_records` decodes the lines, :mod:`.codex_parser` turns them
into entries and :mod:`.codex_session` names the session and its parent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

from core.config import Config
from core.model import Entry, FileMeta

from .base import MAIN, SUBAGENT, ReadResult, SourceFile
from .regular import read_regular

# The reading modules are imported by the methods that read: finding the files, all a
# search with nothing new does here, needs none of them.
if TYPE_CHECKING:
    from .codex_records import _State

AGENT = "codex"
_HEAD_BYTES = 512 * 1024  # a session_meta line carries the base instructions
_MARKER = "codex:fork"  # uuid of the entry that says where a fork came from


def _key(entry: Entry) -> tuple[str, str, str, str | None]:
    return entry.role, entry.type, entry.text, entry.tool_name


class CodexSource:
    """The ``Source`` for Codex CLI rollouts."""

    agent = AGENT
    append_only = True

    def watch_roots(self, config: Config) -> list[Path]:
        return [config.codex_home / "sessions", config.codex_home / "archived_sessions"]

    def discover(self, config: Config) -> Iterator[SourceFile]:
        sessions, archived = self.watch_roots(config)
        found = [
            *sessions.rglob("rollout-*.jsonl"),
            *sessions.rglob("rollout-*.jsonl.zst"),
            *archived.glob("*.jsonl"),
            *archived.glob("*.jsonl.zst"),
        ]
        for path in sorted(found):
            file = self.classify(path, config)
            if file is not None:
                yield file

    def classify(self, path: Path, config: Config) -> SourceFile | None:
        if not path.name.endswith((".jsonl", ".jsonl.zst")):
            return None
        sessions, archived = self.watch_roots(config)
        if not (
            path.parent == archived
            or (sessions in path.parents and path.name.startswith("rollout-"))
        ):
            return None
        from .codex_session import session_id_from_name

        parent, cwd = self._peek(path)
        return SourceFile(
            path=path,
            agent=AGENT,
            kind=SUBAGENT if parent else MAIN,
            project_key=cwd or AGENT,
            parent_session_id=parent,
            session_id=session_id_from_name(path.name),
            order_key=path.name,
        )

    @staticmethod
    def _peek(path: Path) -> tuple[str | None, str | None]:
        """(parent thread of a spawned subagent, cwd) from the session_meta first line.

        Projects are keyed by cwd: a rollout's path names only its date.
        """
        from .codex_records import _decompress, _str
        from .codex_session import spawn_parent
        from .jsonl import decode_object

        try:
            if path.name.endswith(".zst"):
                head = _decompress(path, _HEAD_BYTES)
            else:
                head = read_regular(path, _HEAD_BYTES)
            rec, _ = decode_object(head.split(b"\n", 1)[0])  # (repaired as every line is: a BOM)
        except Exception:  # unreadable heads are read (and reported) later
            return None, None
        if not isinstance(rec, dict):
            return None, None
        payload = rec.get("payload")
        if not isinstance(payload, dict) or rec.get("type") != "session_meta":
            return None, None
        return spawn_parent(payload), _str(payload.get("cwd"))

    def read(
        self,
        file: SourceFile,
        *,
        offset: int = 0,
        state: dict[str, Any] | None = None,
        full_text: bool = False,
    ) -> ReadResult:
        from .codex_parser import _Parser
        from .codex_records import _kinds, _records, _State
        from .codex_session import _meta
        from .jsonl import Skips

        compressed = file.path.name.endswith(".zst")
        try:
            size = file.path.stat().st_size
            if compressed and offset and offset == size:  # unchanged stream: nothing new
                st = _State.load(state)
                return ReadResult([], _meta(st, file), offset, replace=False, state=st.dump())
            offset = 0 if offset > size or compressed else offset
            st = _State.load(state) if offset else _State()
            skips = Skips()
            records, end = _records(file.path, offset, st, skips)
        except Exception as exc:  # unreadable input is reported, never raised
            return ReadResult(
                [], FileMeta(session_id=file.session_id), 0, error=str(exc) or type(exc).__name__
            )
        kinds = _kinds(records)
        if offset and kinds & set(st.fallback):  # events stood in for records that now exist
            return self.read(file, full_text=full_text)
        st.primary = sorted(set(st.primary) | kinds)
        parser = _Parser(st, file.kind == SUBAGENT, full_text, skips)
        entries = parser.feed(records)
        entries = self._drop_copied(entries, st, file, full_text, first=not offset)
        return ReadResult(
            entries=entries,
            meta=_meta(st, file),
            offset=end,
            skipped=skips.total,
            reasons=skips.counts,
            replace=not offset,
            state=st.dump(),
            usage=parser.usage,
        )

    def parse_all(self, path: Path, full_text: bool = False) -> list[Entry]:
        """Every entry of a rollout, its own copied history included (fork matching)."""
        from .codex_parser import _Parser
        from .codex_records import _kinds, _records, _State
        from .jsonl import Skips

        st = _State()
        try:
            records = _records(path, 0, st, Skips())[0]
        except Exception:  # a missing or broken parent: nothing to match against
            return []
        st.primary = sorted(_kinds(records))
        return _Parser(st, False, full_text).feed(records)

    def _drop_copied(
        self, entries: list[Entry], st: _State, file: SourceFile, full: bool, first: bool
    ) -> list[Entry]:
        """Drop the fork's leading entries that repeat its parent's, in order."""
        from .codex_session import locate_rollout

        parent_id = st.meta.get("parent")
        if first and parent_id:
            found = locate_rollout(file.path, parent_id)
            st.fork_parent = str(found) if found else None
            st.fork_open, st.fork_matched = found is not None, 0
            entries = [self._marker(st.meta, file), *entries]
        if not st.fork_open or not st.fork_parent:
            return entries
        parent = self.parse_all(Path(st.fork_parent), full)
        kept: list[Entry] = []
        dropped_prompt = False
        for entry in entries:
            if entry.uuid == _MARKER:
                kept.append(entry)
            elif (
                st.fork_open
                and st.fork_matched < len(parent)
                and _key(parent[st.fork_matched]) == _key(entry)
            ):
                st.fork_matched += 1
                dropped_prompt = dropped_prompt or entry.starts_turn
            else:
                st.fork_open, st.fork_parent = False, None
                kept.append(entry)
        if dropped_prompt:  # the session is summarized by its own first prompt, not the parent's
            own = next((e.text for e in kept if e.starts_turn), None)
            st.meta.pop("first_prompt", None)
            if own:
                st.meta["first_prompt"] = own[:500]
        return kept

    @staticmethod
    def _marker(meta: dict[str, Any], file: SourceFile) -> Entry:
        label = "Forked from" if meta.get("forked") else "Spawned by"
        return Entry(
            role="system",
            type="text",
            text=f"{label} session {meta['parent']}",
            timestamp=meta.get("parent_ts"),
            uuid=_MARKER,
            parent_uuid=meta["parent"],
            is_sidechain=file.kind == SUBAGENT,
            entry_index=meta.get("parent_line", 0),
        )
