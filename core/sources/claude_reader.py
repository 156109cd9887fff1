"""One Claude Code file's records to entries: the turn rules of SPEC §2, compaction,
summaries, titles, replayed records counted once, token usage, and the session's
metadata (cwd, branch, slug, times, aliases), carried between incremental reads.

Separate from :mod:`.claude` (finding the files and walking their blocks of lines)
and :mod:`.claude_records` (decoding them): this is the part that knows what a
record means.
"""

from __future__ import annotations

from typing import Any

import msgspec

from core.model import COMPACTION_TEXT, Entry, FileMeta, Usage

from .base import SUBAGENT, ReadResult, SourceFile
from .claude_notices import (
    command_name,
    command_output,
    compaction_summary,
    hook_notice,
    ide_context,
    is_command_output,
    is_ide_context,
    is_task_notification,
    system_notice,
    task_notification,
)
from .claude_records import Body, Record, content_digest, decode_record, is_ignorable, raw_to_obj, usage_fields
from .claude_text import _SHELL_TAGS, bound, is_shell_output, prompt_text, result_text, tool_use_text
from .fields import timestamp
from .jsonl import UNREADABLE, WRONG_SHAPE, Skips
from .usage_fields import claude_usage

RECENT_UUIDS = 64  # uuids remembered across incremental reads (replay duplicates sit close)
HOOKS_REMEMBERED = 16  # hook notices of the turn remembered, each shown once a turn


class _FileReader:
    """Turns one file's records into entries; carries state between reads."""

    def __init__(self, file: SourceFile, state: dict[str, Any] | None, full_text: bool) -> None:
        state = state or {}
        self.file = file
        self.full_text = full_text
        self.entries: list[Entry] = []
        self.skips = Skips()
        self.summaries: list[tuple[str, str]] = []
        self.uuids: list[str] = []
        self.record_keys: list[str] = []
        self.key: str | None = None  # of the record being read
        self.ts: str | None = None  # its time, when readable (core.timeutil)
        self.recent: list[str] = list(state.get("recent", ()))
        self.seen: set[str] = set(self.recent)
        self.meta: dict[str, Any] = dict(state.get("meta", {}))
        self.aliases: list[str] = list(self.meta.pop("aliases", ()))
        self.usage: list[Usage] = []

    def feed(self, line: bytes, entry_index: int) -> None:
        if is_ignorable(line) or not line.strip():
            return
        record, reason = decode_record(line)
        if record is None:
            self.skips.add(reason or WRONG_SHAPE)
            return
        self.feed_record(record, entry_index)

    def feed_record(self, record: Record, entry_index: int) -> None:
        """One record; a failure on a shape nobody foresaw costs this record only."""
        kept = len(self.entries)
        try:
            self._record(record, entry_index)
        except Exception:
            del self.entries[kept:]
            self.skips.add(UNREADABLE)

    def _record(self, record: Record, entry_index: int) -> None:
        kind = record.type
        if kind == "summary":
            if record.summary:
                self.summaries.append((record.leafUuid or "", record.summary))
            return
        if kind in ("custom-title", "ai-title"):
            title = record.customTitle or record.aiTitle
            if title and (kind == "custom-title" or not self.meta.get("custom_title")):
                self.meta["title"] = title
                if kind == "custom-title":
                    self.meta["custom_title"] = True
            return
        if kind not in ("user", "assistant", "system", "attachment"):
            return  # progress, snapshots, queue operations, …
        uuid = record.uuid
        self.key = None
        if uuid:
            # A replayed record (continue / resume) repeats its uuid *and* content
            # (not always its timestamp); the same uuid on a different message is a
            # writer's bug, not a replay, and both are kept.
            key = f"{uuid}@{content_digest(record.message)}"
            if key in self.seen:
                return  # counted once
            self.seen.add(key)
            self.recent.append(key)
            self.key = key
            if not record.isMeta:
                # (a /clear'd session copies the previous one's meta caveat: sharing
                # that record does not make it a continuation)
                self.uuids.append(uuid)
                self.record_keys.append(key)  # the same rule across files
        self.ts = timestamp(record.timestamp)  # once per record: its entries share it
        if not self.full_text:
            # (reading a conversation back needs neither the file's metadata nor its
            # token usage: the catalog has both; they were a quarter of the time to
            # open a long session)
            self._note_meta(record, timed=not record.isMeta)
            if kind == "assistant" and record.message is not None:
                self._note_usage(record, record.message)
        if kind == "system":
            if record.subtype == "compact_boundary":
                self._add(record, entry_index, "system", "compaction", COMPACTION_TEXT)
            elif record.subtype == "local_command" and isinstance(record.content, str) and (
                name := command_name(record.content)
            ):
                self.meta["command"] = name  # (its output follows in a record of its own)
            elif found := system_notice(record, self.meta.get("command")):
                self._notice(record, entry_index, found[1], found[0])
            return
        if kind == "attachment":
            # a hook that runs on every tool call says the same each time: once a turn
            seen = self.meta.setdefault("hooks", [])
            if (text := hook_notice(record.attachment)) and text not in seen:
                seen.append(text)
                del seen[:-HOOKS_REMEMBERED]
                self._notice(record, entry_index, text)
            return
        if record.isCompactSummary and kind == "user":
            self._compaction_summary(record, entry_index)
            return
        if record.isMeta or record.isVisibleInTranscriptOnly:
            return
        body = record.message
        if body is None:
            self.skips.add(WRONG_SHAPE)
            return
        if kind == "user":
            self._user(record, body, entry_index)
        else:
            self._assistant(record, body, entry_index)

    def _note_meta(self, record: Record, *, timed: bool = True) -> None:
        meta = self.meta
        if record.sessionId and record.sessionId not in self.aliases:
            self.aliases.append(record.sessionId)
        if record.cwd and not meta.get("cwd"):
            meta["cwd"] = record.cwd
        if record.gitBranch:
            meta["git_branch"] = record.gitBranch
        if record.slug:
            meta["slug"] = record.slug
        if record.version:
            meta["version"] = record.version
        ts = self.ts if timed else None  # a copied caveat says when another session began
        if ts:
            if not meta.get("first_timestamp") or ts < meta["first_timestamp"]:
                meta["first_timestamp"] = ts
            if not meta.get("last_timestamp") or ts > meta["last_timestamp"]:
                meta["last_timestamp"] = ts

    def _note_usage(self, record: Record, body: Body) -> None:
        found = claude_usage(
            usage_fields(body.usage), message_id=body.id, request_id=record.requestId,
            model=body.model, timestamp=self.ts, uuid=record.uuid,
        )
        if found is not None:
            self.usage.append(found)

    def _add(self, record: Record, entry_index: int, role: str, kind: str, text: str, **extra) -> None:
        self.entries.append(
            Entry(
                role=role,
                type=kind,
                text=text,
                timestamp=self.ts,
                uuid=record.uuid,
                parent_uuid=record.parentUuid,
                is_sidechain=bool(record.isSidechain),
                entry_index=entry_index,
                record_key=self.key,
                **extra,
            )
        )

    def _notice(self, record: Record, entry_index: int, text: str, kind: str = "text") -> None:
        """A system message of what Claude Code showed (:mod:`.claude_notices`), bounded while indexing."""
        self._add(record, entry_index, "system", kind, text if self.full_text else bound(text), notice=True)

    def _compaction_summary(self, record: Record, entry_index: int) -> None:
        content = record.message.content if record.message is not None else None
        if isinstance(content, list):
            content = "\n".join(b.text for b in content if b.type == "text" and b.text)
        if isinstance(content, str) and (text := compaction_summary(content)):
            self._notice(record, entry_index, text, "summary")

    def _machinery(self, record: Record, text: str, entry_index: int) -> bool:
        """Whether ``text`` is machinery that shows something (command output, IDE context, a
        task notification: added as a notice) or names a command; False for anything else."""
        if is_command_output(text):
            if out := command_output(text, self.meta.get("command")):
                self._notice(record, entry_index, out)
        elif is_ide_context(text) or is_task_notification(text):
            if found := ide_context(text) if is_ide_context(text) else task_notification(text):
                self._notice(record, entry_index, found)
        else:
            if "<command-name>" in text and (name := command_name(text)):
                self.meta["command"] = name
            return False
        return True

    def _user(self, record: Record, body: Body, entry_index: int) -> None:
        content = body.content
        if content is None:
            self.skips.add(WRONG_SHAPE)
            return
        if isinstance(content, str):
            if is_shell_output(content):
                self._shell_output(record, content, entry_index)
            elif self._machinery(record, content, entry_index):
                pass
            elif content.strip() and (typed := prompt_text(content)):
                self._prompt(record, typed, entry_index)
            return
        texts: list[str] = []
        shown: list[str] = []  # machinery blocks that show something: after the prompt
        images = 0
        for block in content:
            if block.type == "tool_result":
                text = result_text(raw_to_obj(block.content))
                if not self.full_text:
                    text = bound(text)
                self._add(record, entry_index, "tool", "tool_result", text, call_id=_text_id(block.tool_use_id))
            elif block.type == "text" and block.text and is_shell_output(block.text):
                self._shell_output(record, block.text, entry_index)
            elif block.type == "text" and block.text and (
                is_ide_context(block.text) or is_task_notification(block.text) or is_command_output(block.text)
            ):
                shown.append(block.text)
            elif block.type == "text" and block.text:
                texts.append(block.text)
            elif block.type in ("image", "document"):
                images += 1
        prompt = [typed for t in texts if (typed := prompt_text(t))]
        if prompt:
            text = "\n\n".join(prompt)
            if images:
                text += "\n" + " ".join(["[image]"] * images)
            self._prompt(record, text, entry_index)
        elif images and not texts and not shown:
            self._prompt(record, " ".join(["[image]"] * images), entry_index)
        for text in shown:
            self._machinery(record, text, entry_index)

    def _shell_output(self, record: Record, text: str, entry_index: int) -> None:
        text = _SHELL_TAGS.sub("", text).strip()
        self._add(record, entry_index, "tool", "tool_result", text if self.full_text else bound(text))

    def _prompt(self, record: Record, text: str, entry_index: int) -> None:
        self.meta.pop("hooks", None)
        if not self.meta.get("first_prompt"):
            self.meta["first_prompt"] = text[:500]
        self._add(record, entry_index, "user", "text", text, starts_turn=True)

    def _assistant(self, record: Record, body: Body, entry_index: int) -> None:
        content = body.content
        if isinstance(content, str):
            if content.strip():
                self._add(record, entry_index, "assistant", "text", content)
            return
        for block in content or ():
            if block.type == "text":
                if block.text and block.text.strip():
                    self._add(record, entry_index, "assistant", "text", block.text)
            elif block.type == "thinking":
                if block.thinking and block.thinking.strip():
                    self._add(record, entry_index, "assistant", "thinking", block.thinking)
            elif block.type in ("tool_use", "server_tool_use"):
                name = block.name or "tool"
                tool_input = raw_to_obj(block.input)
                if not isinstance(tool_input, dict):
                    tool_input = {}
                self._add(
                    record,
                    entry_index,
                    "assistant",
                    "tool_use",
                    tool_use_text(name, tool_input),
                    tool_name=name,
                    tool_input=tool_input,
                    call_id=_text_id(block.id),
                )

    def result(self, offset: int, *, replace: bool, lines: int) -> ReadResult:
        if self.file.kind == SUBAGENT and self.entries and not self.meta.get("opened"):
            # A subagent's prompt may live only in the parent's Task call (2.0.x files
            # that open with the reply): its work still forms a turn, so it is indexed
            # and read like any other.
            at = next((i for i, e in enumerate(self.entries) if not e.notice), None)  # (a hook's notice is no prompt)
            if at is not None and not self.entries[at].starts_turn:
                self.entries[at] = msgspec.structs.replace(self.entries[at], starts_turn=True)
            self.meta["opened"] = True
        meta = self.meta
        session_id = self.file.session_id
        if self.file.kind == SUBAGENT:
            session_id = self.file.parent_session_id or (self.aliases[0] if self.aliases else None)
        elif session_id is None:
            session_id = self.aliases[0] if self.aliases else self.file.path.stem
        file_meta = FileMeta(
            session_id=session_id,
            cwd=meta.get("cwd"),
            git_branch=meta.get("git_branch"),
            slug=meta.get("slug"),
            title=meta.get("title"),
            first_prompt=meta.get("first_prompt"),
            first_timestamp=meta.get("first_timestamp"),
            last_timestamp=meta.get("last_timestamp"),
            version=meta.get("version"),
            aliases=tuple(self.aliases),
        )
        state = {
            "recent": self.recent[-RECENT_UUIDS:],
            "meta": {**meta, "aliases": self.aliases},
            "lines": lines,
        }
        return ReadResult(
            entries=self.entries,
            meta=file_meta,
            offset=offset,
            skipped=self.skips.total,
            reasons=self.skips.counts,
            replace=replace,
            state=state,
            summaries=self.summaries,
            uuids=self.uuids,
            record_keys=self.record_keys,
            usage=self.usage,
        )


def _text_id(value: object) -> str | None:
    """A block's id as a pairing key (a tool result names its call's), when it is a string."""
    return value if isinstance(value, str) and value else None
