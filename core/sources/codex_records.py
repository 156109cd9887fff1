"""Codex rollout lines, read and decoded: the file (``.jsonl`` or ``.jsonl.zst``) to
records, each checked for the field types the parser relies on, and the helpers that
read a payload's fields (content parts, tool outputs and arguments, injected text).

Separate from :mod:`.codex_parser` (what the records mean as entries) and
:mod:`.codex` (finding files, fork matching), so that decoding one line can be read
and changed on its own. ``_State``, the plain values an incremental read carries,
lives here because reading lines already advances it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from .fields import label, timestamp
from .jsonl import WRONG_SHAPE, Skips, check_shape, decode_object, iter_lines
from .regular import open_regular
from .tool_text import bounded

_decode = msgspec.json.Decoder().decode
MACHINERY = (
    "<environment_context",
    "<user_instructions",
    "<instructions>",
    "# agents.md instructions",
    "<turn_aborted",
    "<user_shell_command",
    "<subagent_notification",
    "<permissions instructions",
    "<collaboration_mode",
    "<personality_spec",
)
_IDE_HEAD, _IDE_REQUEST = "# Context from my IDE setup:", "## My request for Codex:"
_CALLS = {
    "function_call",
    "custom_tool_call",
    "local_shell_call",
    "web_search_call",
    "tool_search_call",
    "image_generation_call",
}
_OUTPUTS = {
    "function_call_output",
    "custom_tool_call_output",
    "tool_search_output",
    "local_shell_call_output",
}
_ITEMS = {"message", "reasoning", "agent_message", *_CALLS, *_OUTPUTS}
Record = tuple[int, dict[str, Any]]  # (line index, decoded object)


class _Line(msgspec.Struct):
    """The fields of a rollout line (envelope or legacy flat item) whose types the
    rules below rely on; a line with another type in one of them is skipped."""

    type: str | None = None
    payload: Any = None


class _Payload(msgspec.Struct):
    """The same for a payload (``response_item`` / ``event_msg`` / ``session_meta`` …)."""

    type: str | None = None
    role: str | None = None
    id: str | None = None
    call_id: str | None = None
    name: str | None = None


def _well_shaped(rec: dict[str, Any]) -> bool:
    payload = rec.get("payload")
    return check_shape(rec, _Line) and check_shape(payload if isinstance(payload, dict) else rec, _Payload)


def bound(text: str, full: bool, limit: int = 4000) -> str:
    """Keep head and tail of a huge tool payload while indexing (errors sit at the end)."""
    if full or len(text) <= limit:
        return text
    tail = limit // 4
    return bounded(text, limit - tail, tail)  # + the error/failure/version lines between


_ts = timestamp

_str = label  # (the name the codex modules import)


def parts_text(content: Any) -> str:
    """Text of a content list (input_text/output_text/summary_text parts; images as [image])."""
    if isinstance(content, str):
        return content
    out: list[str] = []
    for part in (
        [content] if isinstance(content, dict) else content if isinstance(content, list) else []
    ):
        if isinstance(part, str):
            out.append(part)
        elif isinstance(part, dict):
            if isinstance(part.get("text"), str):
                out.append(part["text"])
            elif str(part.get("type", "")).endswith("image"):
                out.append("[image]")
    return "\n".join(t for t in out if t)


def output_text(value: Any) -> str:
    """A tool output: plain string, a JSON ``{"output": …, "metadata": …}`` string, or parts."""
    if isinstance(value, str):
        if value.startswith("{") and '"output"' in value:
            try:
                inner = _decode(value)
            except msgspec.DecodeError:
                return value
            if isinstance(inner, dict) and isinstance(inner.get("output"), str):
                return inner["output"]
        return value
    if isinstance(value, dict) and "content" in value:
        return parts_text(value["content"])
    return (
        parts_text(value) if isinstance(value, dict | list) else "" if value is None else str(value)
    )


def _json_input(raw: Any, key: str) -> dict[str, Any] | None:
    """Tool arguments as a dict: parsed JSON when possible, else ``{key: raw}``."""
    if isinstance(raw, dict) or raw is None:
        return raw
    try:
        value = _decode(raw) if isinstance(raw, str) else None
    except msgspec.DecodeError:
        value = None
    return value if isinstance(value, dict) else {key: raw}


def is_machinery(text: str) -> bool:
    return text.lstrip()[:64].lower().startswith(MACHINERY)


def strip_ide_context(text: str) -> str:
    if text.startswith(_IDE_HEAD) and _IDE_REQUEST in text:
        return text.split(_IDE_REQUEST, 1)[1].strip() or text
    return text


def _zstd() -> Any | None:
    try:
        import zstandard
    except ImportError:
        return None
    return zstandard


def _decompress(path: Path, limit: int = -1) -> bytes:
    zstd = _zstd()
    if zstd is None:
        raise ImportError("zstandard is not installed: cannot read .jsonl.zst")
    with open_regular(path) as fh, zstd.ZstdDecompressor().stream_reader(fh) as reader:
        return reader.read(limit)


@dataclass(slots=True)
class _State:
    """What an incremental read needs to continue; plain values only (stored by the indexer)."""

    line: int = 0
    meta: dict[str, Any] = field(default_factory=dict)
    primary: list[str] = field(default_factory=list)  # kinds seen as primary records
    fallback: list[str] = field(default_factory=list)  # kinds emitted from event_msg
    calls: dict[str, str] = field(default_factory=dict)
    fork_parent: str | None = None  # parent rollout while copy matching is open
    fork_open: bool = False
    fork_matched: int = 0

    @classmethod
    def load(cls, data: dict[str, Any] | None) -> _State:
        return cls(**{k: data[k] for k in cls.__slots__ if k in data}) if data else cls()

    def dump(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}


def _records(path: Path, offset: int, st: _State, skips: Skips) -> tuple[list[Record], int]:
    """Decoded object lines from ``offset``: (records, offset after them); bad lines
    are counted in ``skips``."""
    if path.name.endswith(".zst"):  # a finished stream: its last line counts even without "\n"
        lines, end = _decompress(path).split(b"\n"), path.stat().st_size
    else:
        read = list(iter_lines(path, offset))
        lines, end = [line for _, _, line in read], read[-1][1] if read else offset
    records: list[Record] = []
    for raw in lines:
        st.line += 1
        if not raw.strip():
            continue
        rec, reason = decode_object(raw)
        if rec is not None and not _well_shaped(rec):
            rec, reason = None, WRONG_SHAPE
        if rec is not None:
            records.append((st.line - 1, rec))
        else:
            skips.add(reason or WRONG_SHAPE)
    return records, end


def _envelope(rec: dict[str, Any]) -> tuple[str, dict[str, Any]]:
    """(record type, payload) for enveloped and legacy flat lines alike."""
    payload = rec.get("payload")
    if isinstance(payload, dict):
        return str(rec.get("type") or ""), payload
    if rec.get("type") in _ITEMS:
        return "response_item", rec
    if "id" in rec and "timestamp" in rec and "type" not in rec:
        return "flat_header", rec
    return "", {}


def _kinds(records: list[Record]) -> set[str]:
    """Kinds that have a primary record here: "msg" (response messages), "compact"."""
    kinds: set[str] = set()
    for _, rec in records:
        kind, p = _envelope(rec)
        if kind == "compacted":
            kinds.add("compact")
        elif (
            kind == "response_item"
            and p.get("type") in ("message", "reasoning")
            and p.get("role") != "developer"
        ):
            kinds.add("msg")
    return kinds
