"""Codex records to entries: the rules of :mod:`.codex` applied line by line (primary
response items over their ``event_msg`` copies, machinery dropped, tool calls named),
with the session's metadata (ids, cwd, model, title, first prompt) and token usage
noted in ``_State`` as the records go by.

Separate from :mod:`.codex_records` (decoding lines) and :mod:`.codex` (finding
files, incremental reads, fork matching): this is the part that knows what each
record type means.
"""

from __future__ import annotations

from typing import Any

import msgspec

from core.model import COMPACTION_TEXT, Entry, Usage

from .base import EntryCollector
from .codex_records import (
    _CALLS,
    _OUTPUTS,
    Record,
    _envelope,
    _json_input,
    _State,
    _str,
    _ts,
    bound,
    is_machinery,
    output_text,
    parts_text,
    strip_ide_context,
)
from .codex_session import parent_of
from .jsonl import UNREADABLE, Skips
from .usage_fields import codex_running_total, codex_usage

_MAX_CALLS = 1000  # call_id -> tool name pairs kept across incremental reads


class _Parser(EntryCollector):
    """Decoded records -> entries, updating ``_State`` (meta, call names) as it goes."""

    def __init__(self, st: _State, sidechain: bool, full: bool, skips: Skips | None = None) -> None:
        super().__init__(sidechain)
        self.st, self.full = st, full
        self.skips = skips if skips is not None else Skips()
        self.usage: list[Usage] = []

    def feed(self, records: list[Record]) -> list[Entry]:
        for index, rec in records:
            kept = len(self.entries)
            try:
                self._record(index, rec)
            except Exception:  # a shape nobody foresaw costs this line only
                del self.entries[kept:]
                self.skips.add(UNREADABLE)
        return self.entries

    def _record(self, index: int, rec: dict[str, Any]) -> None:
        kind, payload = _envelope(rec)
        ts = _ts(rec.get("timestamp"))
        if ts:
            self.st.meta.setdefault("first_timestamp", ts)
            self.st.meta["last_timestamp"] = ts
        handler = getattr(self, f"_on_{kind}", None)
        if handler is not None:
            handler(payload, ts, index)

    def _on_session_meta(self, p: dict[str, Any], ts: str | None, index: int) -> None:
        meta = self.st.meta
        if "session_id" in meta:
            return  # a copied ancestor's meta inside a fork: the first one is ours
        git = p.get("git")
        meta.update(
            session_id=_str(p.get("id")) or _str(p.get("session_id")),
            cwd=_str(p.get("cwd")),
            git_branch=_str(git.get("branch")) if isinstance(git, dict) else None,
            version=_str(p.get("cli_version")),
        )
        parent, forked = parent_of(p)
        if parent:
            meta.update(parent=parent, forked=forked, parent_line=index, parent_ts=ts)

    def _on_flat_header(self, p: dict[str, Any], ts: str | None, index: int) -> None:
        self.st.meta.setdefault("session_id", _str(p.get("id")))  # (its time: ``_record``'s)

    def _on_turn_context(self, p: dict[str, Any], ts: str | None, index: int) -> None:
        if not self.st.meta.get("cwd") and _str(p.get("cwd")):
            self.st.meta["cwd"] = p["cwd"]
        if _str(p.get("model")):
            self.st.meta["model"] = p["model"]  # what the next token_count events bill

    def _on_compacted(self, p: dict[str, Any], ts: str | None, index: int) -> None:
        self._add("system", "compaction", COMPACTION_TEXT, ts, index)

    def _on_response_item(self, p: dict[str, Any], ts: str | None, index: int) -> None:
        ptype = p.get("type")
        if ptype == "message":
            self._message(p.get("role"), parts_text(p.get("content")), ts, index, _str(p.get("id")))
        elif ptype == "reasoning":
            text = parts_text(p.get("summary")) or parts_text(p.get("content"))
            if text:
                self._add("assistant", "thinking", text, ts, index)
        elif ptype in _CALLS:
            self._call(ptype, p, ts, index)
        elif ptype in _OUTPUTS:
            call_id = _str(p.get("call_id"))
            text = output_text(p.get("output"))
            if ptype == "tool_search_output" and isinstance(p.get("tools"), list):
                # (a tool without a name is left out: it was listed as "None")
                text = ", ".join(t["name"] for t in p["tools"] if isinstance(t, dict) and _str(t.get("name")))
            self._add(
                "tool",
                "tool_result",
                bound(text, self.full),
                ts,
                index,
                parent=call_id,
                tool=self.st.calls.get(call_id or ""),
            )
        elif (
            ptype == "agent_message"
        ):  # a message from another agent (collab): a note, not a prompt
            text = parts_text(p.get("content"))
            if text:
                self._add("system", "text", bound(text, self.full), ts, index)

    def _on_event_msg(self, p: dict[str, Any], ts: str | None, index: int) -> None:
        etype = p.get("type")
        if etype == "token_count":
            info = p.get("info")
            previous = self.st.meta.get("token_total")
            found = codex_usage(info, model=self.st.meta.get("model"), timestamp=ts, previous=previous)
            if found is not None:
                self.usage.append(found)
            total = codex_running_total(info)
            if total is not None:  # (kept in the file's state: counts only, each bounded)
                self.st.meta["token_total"] = total
        elif etype == "thread_name_updated":
            if _str(p.get("thread_name") or p.get("name")):
                self.st.meta["title"] = p.get("thread_name") or p.get("name")
        elif etype in ("error", "stream_error", "warning"):  # shown in Codex's terminal: a note of the turn
            message = p.get("message")
            if isinstance(message, str) and message.strip():
                label = "Warning" if etype == "warning" else "Error"
                self._add("system", "text", bound(f"{label}: {message.strip()}", self.full), ts, index, notice=True)
        elif etype == "context_compacted":
            if "compact" not in self.st.primary:
                self._fallback("compact")
                self._add("system", "compaction", COMPACTION_TEXT, ts, index)
        elif (
            etype in ("user_message", "agent_message", "agent_reasoning")
            and "msg" not in self.st.primary
        ):
            self._fallback("msg")
            text = p.get("text" if etype == "agent_reasoning" else "message")
            text = text if isinstance(text, str) else ""
            if etype == "agent_reasoning":
                if text:
                    self._add("assistant", "thinking", text, ts, index)
            else:
                text = text or ("[image]" if etype == "user_message" and p.get("images") else "")
                self._message(
                    "user" if etype == "user_message" else "assistant", text, ts, index, None
                )

    def _message(self, role: Any, text: str, ts: str | None, index: int, uid: str | None) -> None:
        if role == "user" and text and not is_machinery(text):
            text = strip_ide_context(text)
            self.st.meta.setdefault("first_prompt", text[:500])
            self._add("user", "text", text, ts, index, uid=uid, starts=True)
        elif role == "assistant" and text:
            self._add("assistant", "text", text, ts, index, uid=uid)

    def _call(self, ptype: str, p: dict[str, Any], ts: str | None, index: int) -> None:
        call_id = _str(p.get("call_id"))
        name = _str(p.get("name")) or ptype.removesuffix("_call")
        action: dict[str, Any] = p["action"] if isinstance(p.get("action"), dict) else {}
        if ptype in ("function_call", "tool_search_call"):
            raw, tool_input = p.get("arguments"), _json_input(p.get("arguments"), "arguments")
        elif ptype == "custom_tool_call":
            raw, tool_input = p.get("input"), _json_input(p.get("input"), "input")
        elif ptype in ("local_shell_call", "web_search_call"):
            name = "shell" if ptype == "local_shell_call" else name
            raw, tool_input = action.get("command") or action.get("query"), action
        else:
            raw, tool_input = p.get("revised_prompt"), None
        command = tool_input.get("command") if tool_input else None
        if isinstance(command, list):  # shell calls read best as the command line
            raw = " ".join(str(part) for part in command)
        if not isinstance(raw, str):
            raw = "" if raw is None else msgspec.json.encode(raw).decode()
        if call_id:
            self.st.calls[call_id] = name
            if len(self.st.calls) > _MAX_CALLS:
                self.st.calls.pop(next(iter(self.st.calls)))
        self._add(
            "assistant",
            "tool_use",
            bound(raw, self.full),
            ts,
            index,
            uid=call_id,
            tool=name,
            tool_input=tool_input,
        )

    def _fallback(self, kind: str) -> None:
        if kind not in self.st.fallback:
            self.st.fallback.append(kind)
