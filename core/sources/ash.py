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
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from core.config import Config
from core.model import COMPACTION_TEXT, Entry, FileMeta
from core.timeutil import clean_ts

from .base import MAIN, SUBAGENT, ReadResult, SourceFile
from .jsonl import DECODE_ERRORS, UNREADABLE, WRONG_SHAPE, Skips, check_shape, decode_object, iter_lines
from .tool_text import bounded

AGENT = "ash"
_decode = msgspec.json.Decoder().decode
_encode = msgspec.json.encode
CHAT_PREFIX = "chat-"


def bound(text: str, full: bool, limit: int = 4000) -> str:
    """Keep head and tail of huge tool payloads when indexing (errors sit at the end)."""
    if full or len(text) <= limit:
        return text
    tail = limit // 4
    return bounded(text, limit - tail, tail)  # + the error/failure/version lines between


def _ts(rec: dict[str, Any]) -> str | None:
    value = rec.get("created_at") or rec.get("timestamp")
    return clean_ts(value)


def _str(value: Any) -> str | None:
    return value if isinstance(value, str) and value else None


def _read_lines(path: Path, offset: int = 0) -> tuple[list[bytes], int]:
    """Complete lines from ``offset`` and the bytes they span (a partial tail is left)."""
    read = list(iter_lines(path, offset))
    return [line for _, _, line in read], (read[-1][1] - offset) if read else 0


class _Record(msgspec.Struct):
    """The fields of a record whose types the tree and the emitter rely on (ids are
    hashed, compared and used as keys); a record with another type in one of them
    is skipped. Other fields are read leniently."""

    type: str | None = None
    id: str | None = None
    parent_id: str | None = None
    role: str | None = None
    message_id: str | None = None
    tool_use_id: str | None = None
    agent_session_id: str | None = None
    parent_tool_use_id: str | None = None
    name: str | None = None
    branch_id: str | None = None


def _well_shaped(rec: dict[str, Any]) -> bool:
    if not check_shape(rec, _Record):
        return False
    content = rec.get("content")
    blocks = content if isinstance(content, list) else ()
    return all(
        not isinstance(b, dict) or check_shape(b, _Record) for b in blocks
    )


def _decode_lines(
    lines: list[bytes], first_index: int = 0, skips: Skips | None = None
) -> tuple[list[tuple[int, dict[str, Any]]], int]:
    skips = skips if skips is not None else Skips()
    records: list[tuple[int, dict[str, Any]]] = []
    for index, raw in enumerate(lines, first_index):
        if not raw.strip():
            continue
        rec, reason = decode_object(raw)
        if rec is not None and not _well_shaped(rec):
            rec, reason = None, WRONG_SHAPE
        if rec is not None:
            records.append((index, rec))
        else:
            skips.add(reason or WRONG_SHAPE)
    return records, skips.total


@dataclass(slots=True)
class _Item:
    """One context line with the message it hangs on and the branch it ends up in."""

    index: int
    rec: dict[str, Any]
    kind: str
    anchor: str | None = None
    sidechain: bool = False
    branch: str | None = None  # explicit branch scope (compaction)


class _Tree:
    """Builds the message tree of one context file and splits it into branch segments."""

    def __init__(
        self, records: list[tuple[int, dict[str, Any]]], heads: list[tuple[str, str]]
    ) -> None:
        self.items: list[_Item] = []
        self.parent: dict[str, str | None] = {}
        self.line: dict[str, int] = {}
        self.stamp: dict[str, str] = {}
        self.header: dict[str, Any] = {}
        self.labels: dict[str, str | None] = {}  # branch id -> segment label (None = default)
        self.owner: dict[str, str | None] = {}  # message id -> segment label
        self.nodes: dict[str, _Item] = {}
        self._build(records)
        self.segments = self._segments(heads)

    def _build(self, records: list[tuple[int, dict[str, Any]]]) -> None:
        ids = {
            r.get("id")
            for _, r in records
            if r.get("type") == "message" and not r.get("agent_session_id")
        }
        tool_anchor: dict[str, str | None] = {}
        agent_anchor: dict[str, str | None] = {}
        previous: str | None = None
        for index, rec in records:
            kind = rec.get("type")
            if kind == "session":
                self.header = self.header or rec
                continue
            if not isinstance(kind, str):
                continue
            sub = _str(rec.get("agent_session_id"))
            explicit = _str(rec.get("parent_id"))
            item = _Item(index, rec, kind, sidechain=bool(sub))
            if kind == "message" and not sub:
                mid = _str(rec.get("id"))
                mid = mid if mid and mid not in self.parent else f"line-{index}"
                rec = item.rec = {**rec, "id": mid}
                self.parent[mid] = explicit if explicit in ids and explicit != mid else previous
                self.line[mid] = index
                self.nodes[mid] = item
                if _ts(rec):
                    self.stamp[mid] = _ts(rec) or ""
                item.anchor = previous = mid
            elif sub:
                item.anchor = agent_anchor.get(sub, previous)
            elif kind == "tool_use":
                owner = _str(rec.get("message_id")) or explicit
                item.anchor = owner if owner in self.parent else previous
            elif kind == "tool_result":
                item.anchor = tool_anchor.get(_str(rec.get("tool_use_id")) or "", previous)
            elif kind == "agent_session":
                item.anchor = tool_anchor.get(_str(rec.get("parent_tool_use_id")) or "", previous)
                agent_anchor[_str(rec.get("id")) or ""] = item.anchor
            elif kind == "agent_session_complete":
                item.anchor = agent_anchor.get(_str(rec.get("agent_session_id")) or "", previous)
            elif kind == "compaction":
                item.anchor, item.branch = previous, _str(rec.get("branch_id"))
            else:
                item.anchor = explicit if explicit in self.parent else previous
            if kind == "tool_use" and _str(rec.get("id")):
                tool_anchor[rec["id"]] = item.anchor
            if kind == "message" and isinstance(rec.get("content"), list):
                for block in rec["content"]:
                    if (
                        isinstance(block, dict)
                        and block.get("type") == "tool_use"
                        and _str(block.get("id"))
                    ):
                        tool_anchor[block["id"]] = item.anchor
            self.items.append(item)

    def _segments(
        self, heads: list[tuple[str, str]]
    ) -> list[tuple[str | None, str | None, list[str]]]:
        """[(label, fork point, node ids)] — the default path first (label None)."""
        children: dict[str, list[str]] = {}
        for child, parent in self.parent.items():
            if parent:
                children.setdefault(parent, []).append(child)
        named = {head for _, head in heads}
        tips: list[tuple[str, str]] = []
        seen: set[str] = set()
        for label, head in heads:
            # state.json can lag behind context.jsonl: a head with one unnamed chain below
            # it has simply moved on
            while len(children.get(head, ())) == 1 and children[head][0] not in named:
                head = children[head][0]
            if head in self.parent and head not in seen:
                tips.append((label, head))
                seen.add(head)
        tips += [(f"leaf:{n}", n) for n in self.parent if n not in children and n not in seen]
        tips.sort(key=lambda t: (self.stamp.get(t[1], ""), self.line[t[1]]), reverse=True)
        owner = self.owner
        segments: list[tuple[str | None, str | None, list[str]]] = []
        for rank, (label, head) in enumerate(tips):
            name = None if rank == 0 else label
            path: list[str] = []
            node: str | None = head
            while node is not None and node not in owner and node not in path:
                path.append(node)
                node = self.parent.get(node)
            for n in path:
                owner[n] = name
            if path:
                segments.append((name, node, path[::-1]))
            self.labels[label] = name
        return segments

    def prompt_above(self, node: str | None) -> _Item | None:
        """The nearest prompt at or above ``node`` (what a regenerated answer answers)."""
        seen: set[str] = set()
        while node is not None and node not in seen:
            seen.add(node)
            item = self.nodes.get(node)
            if item is not None and is_prompt(item):
                return item
            node = self.parent.get(node)
        return None

    def ordered(self) -> list[tuple[str | None, str | None, list[_Item]]]:
        """Segments with their items, default first, the others by first line."""
        by_label: dict[str | None, list[_Item]] = {name: [] for name, _, _ in self.segments}
        by_label.setdefault(None, [])
        for item in self.items:
            if item.kind == "compaction" and item.branch in self.labels:
                label = self.labels[item.branch]
            else:
                label = self.owner.get(item.anchor) if item.anchor else None
            by_label.setdefault(label, []).append(item)
        forks = {name: fork for name, fork, _ in self.segments}
        order = sorted(
            (k for k in by_label if k is not None),
            key=lambda k: min((i.index for i in by_label[k]), default=0),
        )
        return [
            (k, forks.get(k), sorted(by_label[k], key=lambda i: i.index)) for k in [None, *order]
        ]


class _Emitter:
    """Context items -> entries (one record can yield several: thinking, text, tools)."""

    def __init__(self, full: bool, sidechain_file: bool, items: list[_Item]) -> None:
        self.full = full
        self.sidechain_file = sidechain_file
        self.entries: list[Entry] = []
        self.tool_names: dict[str, str] = {}
        self.explicit_uses = {i.rec.get("id") for i in items if i.kind == "tool_use"}
        self.explicit_results = {i.rec.get("tool_use_id") for i in items if i.kind == "tool_result"}
        self.agents_prompted: set[str] = set()
        self.unreadable = 0

    def segment(self, label: str | None, fork: str | None, items: list[_Item], tree: _Tree) -> None:
        """One branch segment. A non-default branch opens its own turn: with its own first
        prompt, or, when it starts with a regenerated answer, with the question it answers
        repeated (``uuid=None``). The marker note follows that prompt."""
        if label is None or not items:
            for item in items:
                self.item(item, label)
            return
        first = next(
            (i for i, it in enumerate(items) if it.kind == "message" and not it.sidechain), None
        )
        opens = first is not None and is_prompt(items[first])
        head = items[: first + 1] if opens and first is not None else []
        for item in head:
            self.item(item, label)
        asked = None if opens else tree.prompt_above(fork)
        if asked is not None:
            self._add("user", "text", message_text(asked.rec), asked, label,
                      parent=_str(asked.rec.get("id")), starts=True)  # fmt: skip
        where = f"message {fork}" if fork else "the start"
        self._add(
            "system", "text", f"Branch {label} forks from {where}", items[0], label, parent=fork
        )
        for item in items[len(head) :]:
            self.item(item, label)

    def item(self, item: _Item, label: str | None) -> None:
        """One context item; a failure on a shape nobody foresaw costs this item only."""
        kept = len(self.entries)
        try:
            self._item(item, label)
        except Exception:
            del self.entries[kept:]
            self.unreadable += 1

    def _item(self, item: _Item, label: str | None) -> None:
        rec, kind = item.rec, item.kind
        if kind == "message":
            self._message(item, label)
        elif kind == "tool_use":
            name = _str(rec.get("name"))
            self._tool_use(item, label, _str(rec.get("id")), name, rec.get("input"))
        elif kind == "tool_result":
            call = _str(rec.get("tool_use_id"))
            self._add(
                "tool",
                "tool_result",
                bound(_text(rec.get("output")), self.full),
                item,
                label,
                parent=call,
                tool=self.tool_names.get(call or ""),
            )
        elif kind == "compaction":
            self._add("system", "compaction", COMPACTION_TEXT, item, label, uid=_str(rec.get("id")))
        elif kind == "agent_session":
            name = ":".join(
                s for s in (_str(rec.get("agent_type")), _str(rec.get("agent_name"))) if s
            )
            self._add(
                "system",
                "text",
                f"Subagent {name or '?'} started",
                item,
                label,
                uid=_str(rec.get("id")),
                parent=_str(rec.get("parent_tool_use_id")),
                side=True,
            )
        elif kind == "agent_session_complete":
            status = "failed" if rec.get("is_error") else "finished"
            self._add(
                "system",
                "text",
                f"Subagent {status}",
                item,
                label,
                parent=_str(rec.get("agent_session_id")),
                side=True,
            )

    def _message(self, item: _Item, label: str | None) -> None:
        rec = item.rec
        role = rec.get("role")
        uid = _str(rec.get("id"))
        content = rec.get("content")
        blocks = (
            content if isinstance(content, list) else [{"type": "text", "text": _text(content)}]
        )
        for block in blocks:
            if not isinstance(block, dict):
                continue
            btype = block.get("type")
            if btype == "thinking" and _str(block.get("thinking")):
                self._add("assistant", "thinking", block["thinking"], item, label, uid=uid)
            elif btype == "tool_use" and block.get("id") not in self.explicit_uses:
                self._tool_use(
                    item, label, _str(block.get("id")), _str(block.get("name")), block.get("input")
                )
            elif btype == "tool_result" and block.get("tool_use_id") not in self.explicit_results:
                call = _str(block.get("tool_use_id"))
                self._add(
                    "tool",
                    "tool_result",
                    bound(_text(block.get("content")), self.full),
                    item,
                    label,
                    parent=call,
                    tool=self.tool_names.get(call or ""),
                )
        text = message_text(rec)
        if not text:
            return
        parent = _str(rec.get("parent_id"))
        if role == "user":
            agent = _str(rec.get("agent_session_id"))
            # a subagent's first user message is its task, not something a person typed
            typed = agent is None or agent in self.agents_prompted
            if agent:
                self.agents_prompted.add(agent)
            self._add("user", "text", text, item, label, uid=uid, parent=parent, starts=typed)
        elif role == "assistant":
            self._add("assistant", "text", text, item, label, uid=uid, parent=parent)
        else:
            self._add("system", "text", text, item, label, uid=uid, parent=parent)

    def _tool_use(
        self, item: _Item, label: str | None, call: str | None, name: str | None, args: Any
    ) -> None:
        if call and name:
            self.tool_names[call] = name
        raw = _encode(args).decode() if args is not None else ""
        self._add(
            "assistant",
            "tool_use",
            bound(raw, self.full),
            item,
            label,
            uid=call,
            tool=name,
            tool_input=args if isinstance(args, dict) else None,
        )

    def _add(
        self,
        role: str,
        type_: str,
        text: str,
        item: _Item | None,
        label: str | None,
        *,
        uid: str | None = None,
        parent: str | None = None,
        tool: str | None = None,
        tool_input: dict[str, Any] | None = None,
        starts: bool = False,
        side: bool = False,
    ) -> None:
        self.entries.append(
            Entry(
                role=role,
                type=type_,
                text=text,
                timestamp=_ts(item.rec) if item else None,
                uuid=uid,
                parent_uuid=parent,
                is_sidechain=self.sidechain_file or side or bool(item and item.sidechain),
                entry_index=item.index if item else 0,
                starts_turn=starts,
                tool_name=tool,
                tool_input=tool_input,
                branch=label,
            )
        )


def message_text(rec: dict[str, Any]) -> str:
    """The readable text of a message record (text blocks; images as [image])."""
    content = rec.get("content")
    if not isinstance(content, list):
        return _text(content)
    texts = []
    for block in content:
        if (
            isinstance(block, dict)
            and block.get("type") == "text"
            and isinstance(block.get("text"), str)
        ):
            texts.append(block["text"])
        elif isinstance(block, dict) and block.get("type") in ("image", "image_url"):
            texts.append("[image]")
    return "\n".join(t for t in texts if t)


def is_prompt(item: _Item) -> bool:
    """A message a person typed into the main conversation."""
    return (
        item.kind == "message"
        and not item.sidechain
        and item.rec.get("role") == "user"
        and bool(message_text(item.rec))
    )


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(
            _text(v.get("text", "") if isinstance(v, dict) else v) for v in value
        ).strip()
    return "" if value is None else _encode(value).decode()


def read_heads(path: Path) -> list[tuple[str, str]]:
    """(branch id, head message id) pairs from a session's state.json."""
    try:
        state = _decode(path.read_bytes())
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
        if not main.exists():
            main = sessions / key / "history.jsonl"
            if not main.exists():
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
