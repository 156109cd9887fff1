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
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from core.config import Config
from core.model import COMPACTION_TEXT, Entry, FileMeta, Usage
from core.timeutil import clean_ts

from .base import MAIN, SUBAGENT, EntryCollector, ReadResult, SourceFile
from .jsonl import UNREADABLE, WRONG_SHAPE, Skips, check_shape, decode_object, iter_lines
from .tool_text import bounded
from .usage_fields import codex_usage

AGENT = "codex"
_decode = msgspec.json.Decoder().decode
_ID_RE = re.compile(
    r"([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\.jsonl(\.zst)?$", re.I
)
_HEAD_BYTES = 512 * 1024  # a session_meta line carries the base instructions
_MAX_CALLS = 1000  # call_id -> tool name pairs kept across incremental reads
_MARKER = "codex:fork"  # uuid of the entry that says where a fork came from
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


def _ts(value: Any) -> str | None:
    return clean_ts(value)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


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
    with path.open("rb") as fh, zstd.ZstdDecompressor().stream_reader(fh) as reader:
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
        return cls(**{k: data[k] for k in cls.__slots__ if k in data}) if data else cls()  # type: ignore[attr-defined]

    def dump(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__slots__}  # type: ignore[attr-defined]


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
        self.st.meta.setdefault("session_id", _str(p.get("id")))
        if _ts(p.get("timestamp")):
            self.st.meta.setdefault("first_timestamp", p["timestamp"])

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
                text = ", ".join(str(t.get("name")) for t in p["tools"] if isinstance(t, dict))
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
            found = codex_usage(info, model=self.st.meta.get("model"), timestamp=ts, previous=self.st.meta.get("token_total"))
            if found is not None:
                self.usage.append(found)
            if isinstance(info, dict) and isinstance(info.get("total_token_usage"), dict):
                self.st.meta["token_total"] = info["total_token_usage"]
        elif etype == "thread_name_updated":
            if _str(p.get("thread_name") or p.get("name")):
                self.st.meta["title"] = p.get("thread_name") or p.get("name")
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
        try:
            if path.name.endswith(".zst"):
                head = _decompress(path, _HEAD_BYTES)
            else:
                with path.open("rb") as fh:
                    head = fh.read(_HEAD_BYTES)
            rec = _decode(head.split(b"\n", 1)[0])
        except Exception:  # unreadable heads are read (and reported) later
            return None, None
        payload = rec.get("payload") if isinstance(rec, dict) else None
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
