"""Claude Code's JSONL records, decoded fast.

msgspec structs name only the fields relay-search uses, so the bulky parts of a
record (``progress`` payloads, ``toolUseResult`` copies, snapshots) are skipped in C
without building Python objects. A block of lines is decoded in one call; a line
that does not fit the typed shape (``message`` as a string, non-object blocks, null
content) takes a slower generic path; one that is not a JSON object is ``None``.
The structs hold plain values only, so the cyclic GC need not track them (``gc=False``).
"""

from __future__ import annotations

import zlib
from typing import Any

import msgspec
import numpy as np

from .jsonl import DECODE_ERRORS, INVALID_JSON, MAX_DEPTH, NOT_OBJECT, WRONG_SHAPE, decode_error, repair, too_deep


class Block(msgspec.Struct, gc=False):
    type: str = ""
    text: str | None = None
    thinking: str | None = None
    name: str | None = None
    id: str | None = None
    input: msgspec.Raw = msgspec.Raw(b"null")
    content: msgspec.Raw = msgspec.Raw(b"null")
    tool_use_id: str | None = None
    is_error: bool | None = None


class Body(msgspec.Struct, gc=False):
    role: str | None = None
    content: str | list[Block] | None = None
    id: str | None = None  # the API response's id (usage dedupe)
    model: str | None = None
    usage: msgspec.Raw = msgspec.Raw(b"null")  # decoded only for assistant records


class Record(msgspec.Struct, gc=False):
    type: str | None = None
    subtype: str | None = None
    uuid: str | None = None
    parentUuid: str | None = None
    sessionId: str | None = None
    timestamp: str | None = None
    isSidechain: bool | None = None
    isMeta: bool | None = None
    isCompactSummary: bool | None = None
    isVisibleInTranscriptOnly: bool | None = None
    cwd: str | None = None
    gitBranch: str | None = None
    slug: str | None = None
    version: str | None = None
    summary: str | None = None
    leafUuid: str | None = None
    customTitle: str | None = None
    aiTitle: str | None = None
    requestId: str | None = None
    message: Body | None = None
    # what system records and hook attachments show (core.sources.claude_notices); any
    # type, checked where used (only these records carry them)
    content: Any = None
    error: Any = None
    retryAttempt: Any = None
    maxRetries: Any = None
    hookInfos: Any = None
    hookErrors: Any = None
    stopReason: Any = None
    apiRefusalExplanation: Any = None
    attachment: msgspec.Raw = msgspec.Raw(b"null")  # decoded only for hook attachments


_record_decoder = msgspec.json.Decoder(Record)
_decode_record = _record_decoder.decode
_decode_record_lines = _record_decoder.decode_lines
decode_any = msgspec.json.Decoder().decode
_check_syntax = msgspec.json.Decoder(msgspec.Raw).decode

# Record types that never carry a message we show. Most of a transcript's bytes are
# ``progress`` records; recognizing them from the raw bytes skips the JSON decode.
IGNORED_TYPES = frozenset(
    {b"progress", b"file-history-snapshot", b"queue-operation", b"last-prompt",
     b"permission-mode", b"worktree-state", b"mode", b"agent-name", b"pr-link", b"frame-link"}
)
WANTED_TYPES = frozenset({"user", "assistant", "system", "attachment", "summary", "custom-title", "ai-title"})
_TYPE_KEY = b'"type":"'
_TOOL_USE_RESULT = b',"toolUseResult":'


def is_ignorable(line: bytes) -> bool:
    """True when the line's top-level ``type`` is one we skip, read off the bytes.

    A raw ``"type":"`` can only be a key (quotes inside JSON strings are escaped);
    it is the top-level one when exactly one ``{`` and no ``[`` precede it. Any
    doubt (a brace inside an earlier string value) answers False and the line
    takes the full decode.
    """
    pos = line.find(_TYPE_KEY, 0, 800)
    if pos < 0 or line.count(b"{", 0, pos) != 1 or line.find(b"[", 0, pos) >= 0:
        return False
    start = pos + len(_TYPE_KEY)
    return line[start : line.find(b'"', start, start + 40)] in IGNORED_TYPES


def _without_tool_use_result(line: bytes) -> bytes | None:
    """The record cut before ``toolUseResult`` (a structured copy of the tool result
    that Claude Code appends to user records; often the largest part of the line)."""
    pos = line.rfind(_TOOL_USE_RESULT)
    if pos < 0:
        return None
    return line[:pos] + b"}"


_ANY_FIELDS = frozenset(
    {"content", "error", "retryAttempt", "maxRetries", "hookInfos", "hookErrors", "stopReason", "apiRefusalExplanation"}
)


def _sanitize(obj: dict[str, Any]) -> dict[str, Any]:
    """Coerce a record that failed the typed decode into the typed shape."""
    clean: dict[str, Any] = {}
    for key in Record.__struct_fields__:
        if key == "message":
            continue
        value = obj.get(key)
        if key in _ANY_FIELDS:
            clean[key] = value
            continue
        if key == "attachment":
            if isinstance(value, dict):
                clean[key] = msgspec.Raw(msgspec.json.encode(value))
            continue
        expected_bool = key.startswith("is")
        if value is None:
            continue
        if expected_bool:
            clean[key] = bool(value)
        elif isinstance(value, str):
            clean[key] = value
    message = obj.get("message")
    if isinstance(message, str):
        clean["message"] = {"role": obj.get("type"), "content": message}
    elif isinstance(message, dict):
        content = message.get("content")
        if isinstance(content, list):
            blocks = []
            for block in content:
                if isinstance(block, str):
                    blocks.append({"type": "text", "text": block})
                elif isinstance(block, dict):
                    blocks.append(
                        {
                            k: v
                            for k, v in block.items()
                            if k in Block.__struct_fields__
                            and (k in ("input", "content") or isinstance(v, (str, bool)))
                        }
                    )
            content = blocks
        elif not isinstance(content, str):
            content = None
        role = message.get("role")
        clean["message"] = {"role": role if isinstance(role, str) else None, "content": content}
    return clean


def decode_record(line: bytes) -> tuple[Record | None, str | None]:
    """Typed decode, falling back to a generic one: ``(record, None)``, or
    ``(None, reason)`` for a line to skip (see :mod:`core.sources.jsonl`); a line
    refused only for a lone surrogate escape or a byte-order mark is repaired."""
    record, reason = _decode_line(line)
    if reason == INVALID_JSON and (fixed := repair(line)) is not None:
        return _decode_line(fixed)
    return record, reason


def _decode_line(line: bytes) -> tuple[Record | None, str | None]:
    short = _without_tool_use_result(line)
    if short is not None:
        try:
            record = _decode_record(short)
        except DECODE_ERRORS:
            record = None  # the cut was not at the top level: decode the whole line
        # Newer versions may write toolUseResult before message/uuid/timestamp; a
        # cut that lost any of them is no shortcut.
        if record is not None and record.message is not None and record.uuid and record.timestamp:
            try:
                _check_syntax(line)  # (a fast scan that builds nothing: a line cut short
                return record, None  # inside toolUseResult is as bad as any other)
            except DECODE_ERRORS:
                pass
    try:
        return _decode_record(line), None
    except msgspec.ValidationError:
        pass  # valid JSON of another shape: the generic path below
    except DECODE_ERRORS as exc:
        return None, decode_error(exc)
    try:
        obj = decode_any(line)
    except DECODE_ERRORS as exc:
        return None, decode_error(exc)
    if not isinstance(obj, dict):
        return None, NOT_OBJECT
    if not isinstance(obj.get("type"), str | None):
        return None, WRONG_SHAPE  # what the record is cannot be known
    try:
        return msgspec.convert(_sanitize(obj), Record, from_attributes=False), None
    except msgspec.ValidationError:
        return None, WRONG_SHAPE


def raw_to_obj(raw: msgspec.Raw | None) -> Any:
    """A tool input or result kept raw by the typed decode; None when unusable (or
    nested deeper than any real one, which no front end could render safely)."""
    if raw is None:
        return None
    try:
        value = decode_any(raw)
    except UnicodeDecodeError:  # (kept raw, so never checked): keep it, bytes replaced
        try:
            value = decode_any(bytes(raw).decode("utf-8", "replace").encode())
        except DECODE_ERRORS:
            return None
    except DECODE_ERRORS:
        return None
    if len(raw) < _SHALLOW_BYTES:
        return value  # (most tool inputs: too few bytes to nest that deep, so nothing to walk)
    return None if too_deep(value, raw) else value  # (raw: counted only for a value of many containers)


# Nesting deeper than MAX_DEPTH takes MAX_DEPTH + 1 opening and as many closing brackets.
_SHALLOW_BYTES = 2 * MAX_DEPTH + 2


class UsageFields(msgspec.Struct, gc=False):
    """The four counts of Claude Code's ``message.usage``, any type (checked by
    ``core.sources.usage_fields``); everything else in the object is skipped in C."""

    input_tokens: Any = 0
    output_tokens: Any = 0
    cache_creation_input_tokens: Any = 0
    cache_read_input_tokens: Any = 0


_usage_decoder = msgspec.json.Decoder(UsageFields | None)


def usage_fields(raw: msgspec.Raw) -> dict[str, Any] | None:
    """``message.usage`` as a dict of its counts; None when it is not an object.

    Decoded only as far as the counts (every assistant record carries a usage
    object, and building each whole one cost a cold index more than its text).
    """
    try:
        found = _usage_decoder.decode(raw)
    except DECODE_ERRORS:
        return None
    return None if found is None else msgspec.structs.asdict(found)


def content_digest(body: Body | None) -> int:
    """A stable digest of a message's content (crc32; compared within one file)."""
    if body is None or body.content is None:
        return 0
    if isinstance(body.content, str):
        return zlib.crc32(body.content.encode())
    if len(body.content) == 1:  # (Claude Code writes a record per block: the join of one part, built directly)
        return zlib.crc32(_block_key(body.content[0]).encode())
    return zlib.crc32("\x00".join(map(_block_key, body.content)).encode())


def _block_key(b: Block) -> str:
    return f"{b.type}|{b.text or b.thinking or ''}|{b.id or b.tool_use_id or ''}"


def decode_block(block: bytes) -> list[Record] | None:
    """All records of a block of lines in one C call, or None to go line by line.

    msgspec skips blank lines, so a count mismatch (which would shift every
    entry_index after it) also sends the block down the careful path.
    """
    try:
        records = _decode_record_lines(block)
    except DECODE_ERRORS:  # (invalid UTF-8 and too-deep lines included)
        return None
    return records if len(records) == _count_lines(block) else None


def _count_lines(block: bytes) -> int:
    # (numpy's vectorized compare: bytes.count of one byte costs a cold index ~0.3 s)
    return int(np.count_nonzero(np.frombuffer(block, dtype=np.uint8) == 10))
