"""The ORIGINAL design, kept as the benchmark's comparison point (issue 3).

Discover every main session file, parse it with stdlib ``json`` line by line, build
turns, tokenize with bm25s (English stopwords + Snowball stemmer) and build ONE
``bm25s.BM25`` index over all turns from scratch. There is no persistence and no
incremental path: a change means a full re-parse and a fresh index, after a 2 s
debounce on watchdog events (see :func:`watch`).

Turn rule (as the original had it): a turn starts at a user record whose content is a
string, or a list without a ``tool_result`` block; its text is the user text plus the
following assistant text blocks. Tool results and thinking are not indexed.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import bm25s
import Stemmer
from watchdog.events import FileSystemEvent, FileSystemEventHandler
from watchdog.observers import Observer

DEBOUNCE_S = 2.0
_STEMMER = Stemmer.Stemmer("english")


@dataclass(frozen=True, slots=True)
class Hit:
    session_id: str
    turn: int
    score: float


def projects_dir(root: Path) -> Path:
    """``root`` may be a HOME (holding ``.claude/projects``) or the projects dir itself."""
    candidate = root / ".claude" / "projects"
    return candidate if candidate.is_dir() else root


def discover(root: Path) -> list[Path]:
    """Main session files: ``<project>/<session>.jsonl`` (subagent files excluded)."""
    return sorted(p for p in projects_dir(root).glob("*/*.jsonl") if not p.name.startswith("agent-"))


def _text_of(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text"
        )
    return ""


def _starts_turn(content: Any) -> bool:
    if isinstance(content, str):
        return True
    if isinstance(content, list):
        return not any(isinstance(b, dict) and b.get("type") == "tool_result" for b in content)
    return False


def parse_session_turns(path: Path) -> list[tuple[str, str]]:
    """``(session_id, search text)`` of each turn of one session file, in order.

    The session of a turn is the ``sessionId`` of the user record that starts it (the
    file name when the record has none), so a file holding two sessions splits right.
    """
    turns: list[tuple[str, list[str]]] = []
    with path.open("r", encoding="utf-8", errors="replace") as fh:
        for line in fh:
            try:
                record = json.loads(line)
            except json.JSONDecodeError:
                continue
            if not isinstance(record, dict):
                continue
            message = record.get("message")
            if not isinstance(message, dict):
                continue
            content = message.get("content")
            kind = record.get("type")
            if kind == "user" and _starts_turn(content):
                turns.append((str(record.get("sessionId") or path.stem), [_text_of(content)]))
            elif kind == "assistant" and turns:
                text = _text_of(content)
                if text:
                    turns[-1][1].append(text)
    return [(sid, "\n".join(parts)) for sid, parts in turns]


def parse_turns(path: Path) -> list[str]:
    """The search text of each turn of one session file, in order."""
    return [text for _, text in parse_session_turns(path)]


class BaselineIndex:
    """One bm25s index over every turn; immutable once built."""

    def __init__(self, retriever: bm25s.BM25 | None, doc_ids: list[tuple[str, int]], stats: dict[str, float]):
        self.retriever = retriever
        self.doc_ids = doc_ids
        self.stats = stats

    def search(self, query: str, k: int = 10) -> list[Hit]:
        """Top ``k`` turns by BM25 score (only hits with a positive score)."""
        if self.retriever is None:
            return []
        tokens = bm25s.tokenize([query], stopwords="en", stemmer=_STEMMER, return_ids=False, show_progress=False)
        if not tokens[0]:
            return []
        k = min(k, len(self.doc_ids))
        docs, scores = self.retriever.retrieve(tokens, k=k, show_progress=False, n_threads=1)
        return [
            Hit(self.doc_ids[int(d)][0], self.doc_ids[int(d)][1], float(s))
            for d, s in zip(docs[0], scores[0])
            if s > 0
        ]

    def save(self, directory: Path) -> None:
        """bm25s's own ``save`` (the original never persisted; used to report index size)."""
        if self.retriever is not None:
            self.retriever.save(str(directory), show_progress=False)


def build(root: Path) -> BaselineIndex:
    """Full parse of every session + a fresh bm25s index (the original's only code path)."""
    t0 = time.perf_counter()
    texts: list[str] = []
    doc_ids: list[tuple[str, int]] = []
    files = discover(root)
    for path in files:
        for n, text in enumerate(parse_turns(path)):
            texts.append(text)
            doc_ids.append((path.stem, n))
    t_parse = time.perf_counter() - t0
    retriever = None
    if texts:
        tokens = bm25s.tokenize(texts, stopwords="en", stemmer=_STEMMER, show_progress=False)
        del texts
        retriever = bm25s.BM25()
        retriever.index(tokens, show_progress=False)
    stats = {"files": len(files), "turns": len(doc_ids), "parse_s": t_parse, "total_s": time.perf_counter() - t0}
    return BaselineIndex(retriever, doc_ids, stats)


# ---------------------------------------------------------------------------------------
# Live updates: watchdog + 2 s debounce + full rebuild


_CHANGE_EVENTS = frozenset({"created", "modified", "deleted", "moved"})


class _Changed(FileSystemEventHandler):
    """Content changes only: watchdog ≥ 4 also reports opened/closed, and the rebuild
    itself opens every file, which would otherwise retrigger a rebuild forever."""

    def __init__(self, poke: Callable[[], None]):
        self._poke = poke

    def on_any_event(self, event: FileSystemEvent) -> None:
        if event.event_type not in _CHANGE_EVENTS:
            return
        path = str(event.src_path)
        if event.is_directory or path.endswith(".jsonl") or str(getattr(event, "dest_path", "")).endswith(".jsonl"):
            self._poke()


class Watcher:
    """Rebuilds the whole index ``debounce`` seconds after the last file event."""

    def __init__(self, root: Path, on_ready: Callable[[BaselineIndex], None], debounce: float = DEBOUNCE_S):
        self.root = root
        self.on_ready = on_ready
        self.debounce = debounce
        self.rebuilds = 0
        self._cond = threading.Condition()
        self._last_event: float | None = None
        self._stopped = False
        self._observer = Observer()
        self._observer.schedule(_Changed(self._poke), str(projects_dir(root)), recursive=True)
        self._thread = threading.Thread(target=self._run, name="baseline-rebuild", daemon=True)

    def start(self) -> Watcher:
        self._observer.start()
        self._thread.start()
        return self

    def stop(self) -> None:
        with self._cond:
            self._stopped = True
            self._cond.notify_all()
        self._observer.stop()
        self._observer.join(timeout=5)
        self._thread.join(timeout=60)

    def _poke(self) -> None:
        with self._cond:
            self._last_event = time.monotonic()
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while not self._stopped and (
                    self._last_event is None or time.monotonic() - self._last_event < self.debounce
                ):
                    wait = None if self._last_event is None else self.debounce - (time.monotonic() - self._last_event)
                    self._cond.wait(timeout=wait)
                if self._stopped:
                    return
                self._last_event = None
            index = build(self.root)  # events during the rebuild schedule the next one
            self.rebuilds += 1
            self.on_ready(index)


def watch(root: Path, on_ready: Callable[[BaselineIndex], None], debounce: float = DEBOUNCE_S) -> Watcher:
    """Start watching ``root``; ``on_ready(new_index)`` after each debounced rebuild."""
    return Watcher(root, on_ready, debounce).start()
