"""Group a file's entries into turns (SPEC §2), for reading and for the index.

A turn starts at an entry the adapter marked ``starts_turn`` (a prompt a person
typed) and collects what follows until the next one. Entries before a file's first
prompt form a turn of their own (SPEC §2: "anything before the first prompt belongs
to turn 0"), so the answer to a bare ``/init`` is read and searched like any turn.
In a session's main file a subagent's prompt (``is_sidechain``, as Claude Code 1.0.x
wrote them inline) starts no turn: the subagent works within the turn that started
it. The same numbering (:class:`TurnCounter`) serves both uses, so a session's turn
count and the turns it reads back never differ:

* :class:`DocBuilder` keeps, per turn, the text the index ranks: prompt and answer
  text plus tool names (``main``) and a bounded slice of tool inputs and outputs
  (``tools``: head, tail and the salient lines of each output, see
  :mod:`core.sources.tool_text`). It carries its open turn across incremental reads, so an appended
  line that continues the last turn re-emits that turn's document.
* :func:`build_turns` makes :class:`~core.model.Turn` values from full messages.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from core.index.document import TurnDoc
from core.model import Entry, Message, Turn
from core.sources.tool_text import bounded

TOOL_INPUT_CHARS = 200  # of each tool call's input, in the tools field
TOOL_OUTPUT_HEAD = 800  # of each tool output, start …
TOOL_OUTPUT_TAIL = 300  # … and end (errors and summaries sit there) …
TOOL_OUTPUT_SALIENT = 1500  # … and the error, failure and version lines in between
# A long autonomous turn (hundreds of tool calls) is indexed as passages of about
# this much text, each carrying the prompt: BM25's length normalization then
# compares like with like, and a detail deep in the turn is not cut off.
PART_TOOLS_CHARS = 16_000  # (8,000 before tool outputs kept their salient lines: as many passages now)
PART_ANSWER_CHARS = 6_000
MAIN_FIELD_CAP = 60_000
SEEN_INPUT_CHARS = 300  # of each tool call's one-line summary, kept for phrase checks …
SEEN_CHARS = 8_000  # … and of a passage's tool calls and compaction summaries together
COMPACTION_SUMMARY = "Compaction summary: "  # (core.sources.claude_notices)


def compact_tool(name: str, tool_input: dict[str, Any] | None) -> dict[str, Any]:
    """A tool call as ``read_turn`` lists it (SPEC §5)."""
    data = tool_input or {}
    file = data.get("file_path") or data.get("notebook_path") or data.get("path")
    lowered = name.lower()
    if name in ("Read", "Edit", "MultiEdit", "NotebookEdit", "NotebookRead"):
        return {"tool": name, "file": file}
    if name == "Write":
        content = data.get("content")
        return {"tool": name, "file": file, "chars": len(content) if isinstance(content, str) else 0}
    if name == "Bash" or lowered in ("shell", "exec_command", "run_shell_command", "bash"):
        command = data.get("command") or data.get("cmd")
        if isinstance(command, list):
            command = " ".join(str(part) for part in command)
        return {"tool": name, "command": str(command or "")[:200]}
    if name in ("Grep", "Glob") or lowered in ("grep", "glob", "search_file_content"):
        return {"tool": name, "pattern": data.get("pattern")}
    if name in ("Task", "Agent"):
        return {
            "tool": name,
            "type": data.get("subagent_type"),
            "description": data.get("description"),
        }
    return {"tool": name}


def _tool_input_text(tool_input: dict[str, Any] | None) -> str:
    if not tool_input:
        return ""
    parts = []
    for value in tool_input.values():
        if isinstance(value, str):
            parts.append(value[:TOOL_INPUT_CHARS])
        elif isinstance(value, (int, float)) and not isinstance(value, bool):
            parts.append(str(value))
        elif isinstance(value, list):
            parts.extend(str(v)[:80] for v in value[:8] if isinstance(v, (str, int, float)))
    return " ".join(parts)[:TOOL_INPUT_CHARS]


def number_entries(
    entries: Iterable[Entry], *, start_seq: int = 0, start_turn: int = -1, main_file: bool = False
) -> Iterator[tuple[int, int, Entry]]:
    """``(sequence, turn, entry)`` with the file's turns counted from ``start_turn + 1``.

    What comes before the file's first prompt is a turn of its own. ``main_file``:
    the entries are a session's own file, where sidechain prompts start no turn (a
    subagent's own file numbers its prompts).
    """
    numbering = TurnCounter(start_turn, main_file=main_file)
    for offset, entry in enumerate(entries):
        yield start_seq + offset, numbering.next(entry), entry


class TurnCounter:
    """The turn of each entry in order, resumable from ``turn`` (and ``notices``).

    Entries before the first prompt open a turn of their own (turn 0 of a session);
    every prompt starts the next turn. Notices (``Entry.notice``: a hook's output, a
    ``/model`` answer) open none: when all that precedes the first prompt are notices,
    they belong to its turn, so a SessionStart hook does not renumber a session.
    """

    __slots__ = ("turn", "notices", "_first", "_main_file")

    def __init__(
        self, start_turn: int = -1, *, turn: int | None = None, main_file: bool = False, notices: bool = False
    ) -> None:
        self._first = start_turn + 1
        self.turn = start_turn if turn is None else turn
        self.notices = notices  # the open turn holds notices only, and no prompt
        self._main_file = main_file

    def next(self, entry: Entry) -> int:
        starts = entry.starts_turn and not (self._main_file and entry.is_sidechain)
        if starts and self.notices:
            self.notices = False  # the prompt joins the notices before it
        elif starts or self.turn < self._first:
            self.turn += 1
            self.notices = entry.notice and not starts
        elif self.notices and not entry.notice:
            self.notices = False  # a turn 0 of its own (an answer before any prompt)
        return self.turn


class DocBuilder:
    """Accumulates per-turn index text; resumable from :meth:`state`."""

    def __init__(self, state: dict[str, Any] | None = None, *, main_file: bool = False) -> None:
        state = state or {}
        self.next_seq: int = state.get("next_seq", 0)
        self.turn: int = state.get("turn", -1)
        self.open: dict[str, Any] | None = state.get("open")
        self.notices: bool = state.get("notices", False)
        self.main_file = main_file

    def state(self) -> dict[str, Any]:
        return {"next_seq": self.next_seq, "turn": self.turn, "open": self.open, "notices": self.notices}

    def feed(self, entries: Iterable[Entry]) -> list[TurnDoc]:
        """Add entries; return docs of every turn they touched (the open one last)."""
        closed: list[dict[str, Any]] = []
        if self.open is not None:
            self.open["touched"] = False
        numbering = TurnCounter(turn=self.turn, main_file=self.main_file, notices=self.notices)
        add = self._add
        seq = self.next_seq - 1  # (no entries: next_seq stays)
        for seq, entry in enumerate(entries, self.next_seq):
            turn = numbering.next(entry)
            acc = self.open
            if turn != self.turn or acc is None:
                self._close(closed)
                self.turn = turn
                acc = self.open = self._new_part(turn, 0, seq, entry, [], self.main_file)
            elif acc["tools_len"] >= PART_TOOLS_CHARS or acc.get("assistant_len", 0) >= PART_ANSWER_CHARS:
                # the part is full: the turn goes on in a new one (inline: once per entry)
                self._close(closed)
                last = closed[-1] if closed else None
                prompt = list(last["user"]) if last else []
                acc = self.open = self._new_part(turn, (last or {"part": -1})["part"] + 1, seq, entry, prompt, self.main_file)
                if last and len(last.get("user_seqs", ())) == len(prompt):
                    acc["user_seqs"] = list(last["user_seqs"])  # the prompt's place, in the part its text is copied to
            add(acc, seq, entry)
        self.next_seq = seq + 1
        self.notices = numbering.notices
        docs = [self._doc(acc) for acc in closed if not acc.get("skip")]
        if self.open is not None and self.open.get("touched"):
            docs.append(self._doc(self.open))
        return docs

    def _close(self, closed: list[dict[str, Any]]) -> None:
        if self.open is not None and self.open.get("touched", True):
            closed.append(self.open)
        elif self.open is not None:
            closed.append({**self.open, "skip": True})  # unchanged since the last read

    @staticmethod
    def _new_part(turn: int, part: int, seq: int, entry: Entry, prompt: list[str], main_file: bool) -> dict[str, Any]:
        return {
            "turn": turn,
            "part": part,
            "first": seq,
            "last": seq,
            "ts": entry.timestamp,
            "user": prompt,
            "user_seqs": [] if not prompt else None,  # (a part's copied prompt: set by the caller)
            "assistant": [],
            "answer_seqs": [],  # the sequence of each answer text, for the body's marks
            "assistant_len": 0,
            "names": [],
            "notes": [],
            "seen": [],
            "seen_len": 0,
            "tools": [],
            "tools_len": 0,
            "side": entry.is_sidechain and not main_file,  # a main file's turns are the session's own
            "touched": True,
        }

    @staticmethod
    def _add(acc: dict[str, Any], seq: int, entry: Entry) -> None:
        acc["last"] = seq
        acc["touched"] = True
        if acc["ts"] is None:
            acc["ts"] = entry.timestamp
        kind = entry.type
        if kind == "text":
            if entry.role == "user":
                acc["user"].append(entry.text)
                if acc.get("user_seqs") is not None:
                    acc["user_seqs"].append(seq)
            elif entry.role == "assistant":
                acc["assistant"].append(entry.text)
                acc.setdefault("answer_seqs", []).append(seq)
                acc["assistant_len"] += len(entry.text)
            elif entry.text:
                # a system note: what the agent showed besides the conversation (hook output,
                # errors, command output, IDE context, markers): ranked like tool output, shown
                # in snippets and phrases like the answer
                acc["notes"].append(entry.text)
                acc.setdefault("note_seqs", []).append(seq)
                acc["tools"].append(entry.text)
                acc["tools_len"] += len(entry.text) + 1
        elif kind == "summary" and entry.text:
            if entry.text.startswith(COMPACTION_SUMMARY):  # restates the whole session: ranked low, like tool text
                acc["tools"].append(entry.text)
                acc["tools_len"] += len(entry.text) + 1
                _see(acc, entry.text)
            else:  # an away summary: a few sentences about the work, ranked like an answer
                acc["notes"].append(entry.text)
                acc.setdefault("note_seqs", []).append(seq)
                acc["summaries"] = [*acc.get("summaries", ()), entry.text]
        elif kind == "tool_use":
            name = entry.tool_name or "tool"
            acc["names"].append(name)
            if text := _tool_input_text(entry.tool_input):
                acc["tools"].append(text)
                acc["tools_len"] += len(text) + 1
            if entry.text:
                _see(acc, entry.text[:SEEN_INPUT_CHARS])
        elif kind == "tool_result" and (text := bounded(entry.text, TOOL_OUTPUT_HEAD, TOOL_OUTPUT_TAIL, TOOL_OUTPUT_SALIENT)):
            acc["tools"].append(text)
            acc["tools_len"] += len(text) + 1

    @staticmethod
    def _doc(acc: dict[str, Any]) -> TurnDoc:
        user = "\n".join(acc["user"])
        assistant = "\n".join(acc["assistant"])
        notes = "\n".join(acc.get("notes", ()))  # (an open turn carried from an older state has none)
        raw = f"{user}\n{assistant}\n{notes}" if notes else f"{user}\n{assistant}"
        body = raw.strip()
        summaries = "\n".join(acc.get("summaries", ()))
        body_ranked = f"{user}\n{assistant}\n{summaries}".strip() if summaries else f"{user}\n{assistant}".strip()
        names = " ".join(dict.fromkeys(acc["names"]))
        return TurnDoc(
            turn=acc["turn"],
            part=acc.get("part", 0),
            first_seq=acc["first"],
            last_seq=acc["last"],
            timestamp=acc["ts"],
            main=f"{body_ranked}\n{names}"[:MAIN_FIELD_CAP],
            tools="\n".join(acc["tools"]),
            body=body[:MAIN_FIELD_CAP],
            is_sidechain=bool(acc["side"]),
            marks=_answer_marks(acc, len(user) + 1 - (len(raw) - len(raw.lstrip()))),
            places=_places(acc, len(raw) - len(raw.lstrip())),
            seen="\n".join(acc.get("seen", ()))[:SEEN_CHARS],
        )


def _places(acc: dict[str, Any], stripped: int) -> tuple[int, ...]:
    """(sequence, start in the body) of every message the body holds (prompt, answers, notes),
    flat, in body order; ``stripped``: the whitespace the body lost at its start. Empty when a
    state written before places were kept cannot tell a text's message."""
    groups = [(acc["user"], acc.get("user_seqs")), (acc["assistant"], acc.get("answer_seqs"))]
    if acc.get("notes"):
        groups.append((acc["notes"], acc.get("note_seqs")))
    places: list[int] = []
    start = -stripped
    for texts, seqs in groups:
        if seqs is None or len(seqs) != len(texts):
            return ()
        starts, start = _starts(texts, start)
        for seq, at in zip(seqs, starts):
            places += (seq, max(0, at))
    return tuple(places)


def _starts(texts: list[str], start: int) -> tuple[list[int], int]:
    """Where each of ``texts`` begins when the body joins them by newlines from ``start``, and
    where the next group begins (an empty group still leaves its newline)."""
    starts = []
    for text in texts:
        starts.append(start)
        start += len(text) + 1
    return starts, start if texts else start + 1


def _see(acc: dict[str, Any], text: str) -> None:
    """Keep ``text`` for phrase checks while the passage's share lasts."""
    if acc.get("seen_len", 0) < SEEN_CHARS:
        acc.setdefault("seen", []).append(text)
        acc["seen_len"] = acc.get("seen_len", 0) + len(text) + 1


def _answer_marks(acc: dict[str, Any], base: int) -> tuple[int, ...]:
    """(sequence, start in the body) of each answer text, flat; ``base``: where the answer starts.
    The notes after the answer (:meth:`DocBuilder._add`) are one more mark, at the first note's
    sequence, so the last answer message ends where they begin."""
    seqs = acc.get("answer_seqs") or []
    if len(seqs) != len(acc["assistant"]):  # a state written before marks were kept
        return ()
    starts, notes_start = _starts(acc["assistant"], base)
    marks: list[int] = []
    for seq, start in zip(seqs, starts):
        marks += (seq, max(0, start))
    if acc.get("notes") and acc.get("note_seqs"):
        marks += (acc["note_seqs"][0], max(0, notes_start))
    return tuple(marks)


def build_turns(messages: Iterable[Message]) -> list[Turn]:
    """Turns of a session from its (main-stream) messages, for ``read_turn``."""
    grouped: dict[int, list[Message]] = {}
    for message in messages:
        if message.turn is not None:  # subagent work has no turn of the session's own
            grouped.setdefault(message.turn, []).append(message)
    turns = []
    for number in sorted(grouped):
        group = grouped[number]
        user = [m.text for m in group if m.role == "user" and m.type == "text"]
        assistant = [m.text for m in group if m.role == "assistant" and m.type == "text"]
        tools = tuple(
            compact_tool(m.tool_name or "tool", m.tool_input) for m in group if m.type == "tool_use"
        )
        notes = tuple(m.text for m in group if m.role == "system" and m.type in ("text", "summary") and m.text)
        turns.append(
            Turn(
                session_id=group[0].session_id,
                number=number,
                user_text="\n\n".join(user),
                assistant_text="\n\n".join(assistant),
                timestamp=group[0].timestamp,
                tools_used=tools,
                first_sequence=group[0].sequence,
                last_sequence=group[-1].sequence,
                notes=notes,
            )
        )
    return turns
