"""Gemini CLI chat recordings: ``~/.gemini/tmp/<project>/chats/session-*.json|jsonl``.

Two formats, both read whole every time (``replace=True``) because neither is a
plain append log:

* **Legacy ``.json``** — one ``ConversationRecord`` object, rewritten whole on
  every change. ``entry_index`` is the message's index in ``messages``. When
  Gemini resumes a legacy chat it migrates it to ``<same name>.jsonl``; the
  ``.json`` is then skipped so the chat is not listed twice.
* **``.jsonl`` (2026-04+)** — a metadata header line, then message records
  *upserted by id* (a message is re-appended in full each time its tool calls,
  results or tokens change; it keeps its first position), ``{"$set": {…}}``
  metadata patches and ``{"$rewindTo": id}`` which removes that message and
  everything after it (an unknown id clears the chat) — the replay rules of
  gemini-cli's ``loadConversationRecord``. ``entry_index`` is the line of the
  record in effect. ``$set.messages`` (a history snapshot written after
  compression/masking) is used only when no message lines exist, so a
  compression never hides the conversation.

Subagent recordings live in ``chats/<parent session id>/<id>.jsonl`` and are
attached to their parent. The project is the ``<project>`` dir (a slug, or the
sha256 project hash in older versions); the cwd comes from the recording's
``directories``, else the dir's ``.project_root`` marker, else
``~/.gemini/projects.json``.

A ``user`` message is a typed prompt unless its ``displayContent`` holds only
function responses: that is the CLI's own "Please continue." after a tool, which
is dropped like other agents' machinery. The prompt text is ``displayContent``
when present (``/init``, not the expanded template). ``info``/``error``/``warning``
messages become system notes that never start a turn.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from core.config import Config
from core.model import FileMeta, Usage

from .base import MAIN, SUBAGENT, EntryCollector, ReadResult, SourceFile
from .fields import timestamp
from .jsonl import (
    DECODE_ERRORS,
    INVALID_UTF8,
    NOT_OBJECT,
    TOO_DEEP,
    UNREADABLE,
    WRONG_SHAPE,
    Skips,
    check_shape,
    decode_error,
    decode_object,
    iter_lines,
    repair,
    too_deep,
)
from .regular import read_regular
from .tool_text import bounded
from .usage_fields import gemini_usage

AGENT = "gemini"
_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.encode
_SYSTEM_TYPES = {"info", "error", "warning"}


def bound(text: str, full: bool, limit: int = 4000) -> str:
    """Keep head and tail of huge tool payloads when indexing (errors sit at the end)."""
    if full or len(text) <= limit:
        return text
    tail = limit // 4
    return bounded(text, limit - tail, tail)  # + the error/failure/version lines between


_ts = timestamp


def _parts(content: Any) -> list[Any]:
    if content is None:
        return []
    return content if isinstance(content, list) else [content]


def parts_text(content: Any) -> str:
    """Text of a PartListUnion: a string, a part, or a list of them."""
    out: list[str] = []
    for part in _parts(content):
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str) and not part.get("thought"):
                out.append(part["text"])
            elif "inlineData" in part or "fileData" in part:
                out.append("[image]" if "image" in str(part).lower() else "[file]")
    return "\n".join(t for t in out if t)


def _only_function_responses(content: Any) -> bool:
    parts = _parts(content)
    return bool(parts) and all(isinstance(p, dict) and "functionResponse" in p for p in parts)


def _response_text(result: Any) -> str:
    """Tool output from ``result`` (functionResponse parts) or plain values."""
    out: list[str] = []
    for part in _parts(result):
        if not isinstance(part, dict):
            out.append(str(part))
            continue
        resp = part.get("functionResponse")
        if isinstance(resp, dict):
            body = resp.get("response")
            if isinstance(body, dict):
                value = body.get("output", body.get("error", body))
                out.append(value if isinstance(value, str) else _encode(value).decode())
            elif body is not None:
                out.append(str(body))
        elif isinstance(part.get("text"), str):
            out.append(part["text"])
    return "\n".join(t for t in out if t)


class _Builder(EntryCollector):
    """Turns resolved message records into entries."""

    def __init__(self, full: bool, sidechain: bool) -> None:
        self.full = full
        super().__init__(sidechain)
        self.first_prompt: str | None = None
        self.usage: list[Usage] = []

    def message(self, msg: dict[str, Any], index: int) -> None:
        mtype = msg.get("type")
        ts = _ts(msg.get("timestamp"))
        uid = msg.get("id") if isinstance(msg.get("id"), str) else None
        if mtype == "user":
            self._user(msg, ts, uid, index)
        elif mtype in ("gemini", "model", "assistant"):
            self._gemini(msg, ts, uid, index)
            found = gemini_usage(msg.get("tokens"), message_id=uid, model=msg.get("model"), timestamp=ts)
            if found is not None:
                self.usage.append(found)
        else:
            text = parts_text(msg.get("content"))
            if text:
                self._add("system", "text", text, ts, index, uid=uid)

    def _user(self, msg: dict[str, Any], ts: str | None, uid: str | None, index: int) -> None:
        display = msg.get("displayContent")
        content = msg.get("content")
        if _only_function_responses(content):
            for part in _parts(content):
                resp = part["functionResponse"]
                name = resp.get("name") if isinstance(resp, dict) else None
                call = resp.get("id") if isinstance(resp, dict) else None
                self._add(
                    "tool",
                    "tool_result",
                    bound(_response_text([part]), self.full),
                    ts,
                    index,
                    parent=call,
                    tool=name,
                )
            return
        if display is not None and _only_function_responses(display):
            return  # the CLI continuing after a tool by itself: nobody typed this
        text = parts_text(display) if display is not None else ""
        text = text or parts_text(content)
        if self.first_prompt is None and text:
            self.first_prompt = text[:500]
        self._add("user", "text", text, ts, index, uid=uid, starts=True)

    def _gemini(self, msg: dict[str, Any], ts: str | None, uid: str | None, index: int) -> None:
        thoughts = [t for t in _parts(msg.get("thoughts")) if isinstance(t, dict)]
        thinking = "\n\n".join(
            ": ".join(
                s for s in (t.get("subject"), t.get("description")) if isinstance(s, str) and s
            )
            for t in thoughts
        ).strip()
        if thinking:
            self._add("assistant", "thinking", thinking, ts, index, uid=uid)
        text = parts_text(msg.get("content"))
        if text:
            self._add("assistant", "text", text, ts, index, uid=uid)
        for call in _parts(msg.get("toolCalls")):
            if isinstance(call, dict):
                self._tool(call, ts, index)

    def _tool(self, call: dict[str, Any], ts: str | None, index: int) -> None:
        name = call.get("name") if isinstance(call.get("name"), str) else None
        call_id = call.get("id") if isinstance(call.get("id"), str) else None
        args = call.get("args")
        tool_input = args if isinstance(args, dict) else None
        raw = _encode(args).decode() if args is not None else ""
        when = _ts(call.get("timestamp")) or ts
        self._add(
            "assistant",
            "tool_use",
            bound(raw, self.full),
            when,
            index,
            uid=call_id,
            tool=name,
            tool_input=tool_input,
        )
        output = _response_text(call.get("result"))
        if not output and isinstance(call.get("resultDisplay"), str):
            output = call["resultDisplay"]
        status = call.get("status")
        if output or status in ("success", "error", "cancelled"):
            if not output and status != "success":
                output = f"[{status}]"
            self._add(
                "tool",
                "tool_result",
                bound(output, self.full),
                when,
                index,
                parent=call_id,
                tool=name,
            )



class _Message(msgspec.Struct):
    """The fields of a message record whose types the replay and the builder rely
    on; a record with another type in one of them is skipped."""

    id: str
    type: str | None = None


def _record_shape(rec: dict[str, Any]) -> bool:
    if "$rewindTo" in rec:
        return isinstance(rec["$rewindTo"], str)
    if "id" in rec:
        return check_shape(rec, _Message)
    if "$set" in rec:
        return isinstance(rec["$set"], dict)
    if "sessionId" in rec:  # the metadata header
        return isinstance(rec["sessionId"], str)
    return True  # a record kind we do not know (ignored)


def replay_jsonl(
    lines: list[bytes], skips: Skips | None = None
) -> tuple[dict[str, Any], list[tuple[int, dict[str, Any]]], int]:
    """Replay a .jsonl recording: (metadata, [(line, message)] in order, skipped lines)."""
    skips = skips if skips is not None else Skips()
    meta: dict[str, Any] = {}
    messages: dict[str, tuple[int, dict[str, Any]]] = {}  # dicts keep first-insert order
    snapshot: list[tuple[int, dict[str, Any]]] = []
    for index, raw in enumerate(lines):
        if not raw.strip():
            continue
        rec, reason = decode_object(raw)
        if rec is None or not _record_shape(rec):
            skips.add(reason or WRONG_SHAPE)
        elif isinstance(rec.get("$rewindTo"), str):
            ids = list(messages)
            cut = ids.index(rec["$rewindTo"]) if rec["$rewindTo"] in ids else 0
            for mid in ids[cut:]:
                del messages[mid]
        elif isinstance(rec.get("id"), str):
            messages[rec["id"]] = (index, rec)  # an existing id keeps its first position
        elif isinstance(rec.get("$set"), dict):
            patch = rec["$set"]
            meta.update({k: v for k, v in patch.items() if k != "messages"})
            if isinstance(patch.get("messages"), list):
                snapshot = [(index, m) for m in patch["messages"] if isinstance(m, dict)]
        elif isinstance(rec.get("sessionId"), str):
            meta.update({k: v for k, v in rec.items() if k != "messages"})
    resolved = list(messages.values()) or snapshot
    return meta, resolved, skips.total


def _decode_whole(data: bytes, skips: Skips) -> tuple[dict[str, Any] | None, str | None]:
    """A legacy ``.json`` chat: one record for the whole chat, so a bad byte in it
    is replaced (U+FFFD) and counted rather than costing every message."""
    try:
        record = _decode(data)
    except msgspec.DecodeError as exc:
        fixed = repair(data)  # (a byte-order mark; a lone surrogate escape: the half character)
        if fixed is None:
            return None, f"{decode_error(exc)} (the whole chat is one record)"
        return _decode_whole(fixed, skips)
    except UnicodeDecodeError:
        skips.add(INVALID_UTF8)
        return _decode_whole(data.decode("utf-8", "replace").encode(), skips)
    except DECODE_ERRORS as exc:  # mid-rewrite or corrupt: retried on next change
        return None, f"{decode_error(exc)} (the whole chat is one record)"
    if not isinstance(record, dict):
        return None, "not a chat record"
    if too_deep(record, data):
        return None, f"{TOO_DEEP} (the whole chat is one record)"
    return record, None


class GeminiSource:
    """The ``Source`` for Gemini CLI chat recordings."""

    agent = AGENT
    append_only = False

    def watch_roots(self, config: Config) -> list[Path]:
        return [config.gemini_home / "tmp"]

    def discover(self, config: Config) -> Iterator[SourceFile]:
        root = config.gemini_home / "tmp"
        found = [
            *root.glob("*/chats/session-*.json"),
            *root.glob("*/chats/session-*.jsonl"),
            *root.glob("*/chats/*/*.jsonl"),
        ]
        for path in sorted(found):
            file = self.classify(path, config)
            if file is not None:
                yield file

    def classify(self, path: Path, config: Config) -> SourceFile | None:
        root = config.gemini_home / "tmp"
        try:
            rel = path.relative_to(root).parts
        except ValueError:
            return None
        name = path.name
        if len(rel) == 3 and rel[1] == "chats" and name.startswith("session-"):
            if name.endswith(".json") and path.with_suffix(".jsonl").is_file():  # (a FIFO there hides nothing)
                return None  # migrated to .jsonl by a resume: read that one only
            if name.endswith((".json", ".jsonl")):
                return SourceFile(
                    path=path, agent=AGENT, kind=MAIN, project_key=rel[0], order_key=name
                )
        if len(rel) == 4 and rel[1] == "chats" and name.endswith(".jsonl"):
            return SourceFile(
                path=path,
                agent=AGENT,
                kind=SUBAGENT,
                project_key=rel[0],
                session_id=path.stem,
                parent_session_id=rel[2],
                order_key=name,
            )
        return None

    def read(
        self,
        file: SourceFile,
        *,
        offset: int = 0,
        state: dict[str, Any] | None = None,
        full_text: bool = False,
    ) -> ReadResult:
        try:
            if file.path.suffix == ".jsonl":
                lines = list(iter_lines(file.path))
            else:
                data = read_regular(file.path)
        except OSError as exc:
            return ReadResult([], FileMeta(session_id=file.session_id), 0, error=str(exc))
        skips = Skips()
        if file.path.suffix == ".json":
            record, error = _decode_whole(data, skips)
            if record is None:
                return ReadResult([], FileMeta(session_id=file.session_id), 0, error=error)
            raw = record.get("messages")
            items = list(enumerate(raw)) if isinstance(raw, list) else []
            objects = [(i, m) for i, m in items if isinstance(m, dict)]
            messages = [(i, m) for i, m in objects if _record_shape(m)]
            skips.add(NOT_OBJECT, len(items) - len(objects))
            skips.add(WRONG_SHAPE, len(objects) - len(messages))
            meta, used = record, len(data)
        else:
            used = lines[-1][1] if lines else 0
            meta, messages, _ = replay_jsonl([line for _, _, line in lines], skips)
        builder = _Builder(full_text, file.kind == SUBAGENT)
        for index, msg in messages:
            kept = len(builder.entries)
            try:
                builder.message(msg, index)
            except Exception:  # a shape nobody foresaw costs this message only
                del builder.entries[kept:]
                skips.add(UNREADABLE)
        return ReadResult(
            entries=builder.entries,
            meta=self._meta(file, meta, builder),
            offset=used,
            skipped=skips.total,
            reasons=skips.counts,
            replace=True,
            state={},
            usage=builder.usage,
        )

    def _meta(self, file: SourceFile, meta: dict[str, Any], builder: _Builder) -> FileMeta:
        stamps = [e.timestamp for e in builder.entries if e.timestamp]
        first = _ts(meta.get("startTime"))
        last = _ts(meta.get("lastUpdated"))
        sid = meta.get("sessionId") if isinstance(meta.get("sessionId"), str) else None
        title = meta.get("summary") if isinstance(meta.get("summary"), str) else None
        return FileMeta(
            # (a chat whose header line is bad is still a session: named by its file)
            session_id=file.session_id or sid or file.path.stem,
            cwd=self._cwd(file, meta),
            title=title,
            first_prompt=builder.first_prompt,
            # (every entry's time: a chat's messages are not always in time order)
            first_timestamp=min(filter(None, [first, *stamps]), default=None),
            last_timestamp=max(filter(None, [last, *stamps]), default=None),
        )

    def _cwd(self, file: SourceFile, meta: dict[str, Any]) -> str | None:
        dirs = meta.get("directories")
        if isinstance(dirs, list) and dirs and isinstance(dirs[0], str):
            return dirs[0]
        project_dir = (
            file.path.parent.parent if file.kind == MAIN else file.path.parent.parent.parent
        )
        marker = project_dir / ".project_root"
        try:
            if marker.is_file():
                return read_regular(marker).decode("utf-8").strip() or None
            registry = _decode(read_regular(project_dir.parent.parent / "projects.json"))
        except (OSError, *DECODE_ERRORS):
            return None
        projects = registry.get("projects") if isinstance(registry, dict) else None
        if isinstance(projects, dict):
            for path, slug in projects.items():
                if slug == project_dir.name:
                    return path
        return None
