"""Pure text helpers: relative times, tool one-liners, highlighted snippets.

No widgets here, so these are trivially testable and shared by every pane.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from rich.cells import cell_len, get_character_cell_size
from textual.content import Content

from core.index.tokenize import default_tokenizer
from core.query.snippets import matched_spans
from core.refs import compress_numbers as compress_numbers  # (re-exported: the app's tests use it from here)
from core.timeutil import parse_datetime
from core.words import visible


def parse_time(value: str | None) -> datetime | None:
    """An ISO 8601 timestamp (``Z`` or offset) as an aware datetime, or None."""
    return parse_datetime(value)  # the core's one rule: anything it cannot read is unknown


def relative_time(value: str | None, now: datetime) -> str:
    """``just now``, ``5m ago``, ``3h ago``, ``2d ago``, then a date."""
    moment = parse_time(value)
    if moment is None:
        return "—"
    seconds = (now - moment).total_seconds()
    if seconds < 0:
        seconds = 0
    if seconds < 60:
        return "just now"
    if seconds < 3600:
        return f"{int(seconds // 60)}m ago"
    if seconds < 86400:
        return f"{int(seconds // 3600)}h ago"
    if seconds < 86400 * 14:
        return f"{int(seconds // 86400)}d ago"
    if moment.year == now.year:
        return moment.strftime("%b %-d")
    return moment.strftime("%Y-%m-%d")


def clock(value: str | None) -> str:
    """``Mar 4 14:02`` in UTC (stable across machines, like the transcripts)."""
    moment = parse_time(value)
    return moment.astimezone(UTC).strftime("%b %-d %H:%M") if moment else ""


def spread(left: Content, right: Content, width: int) -> Content:
    """``left`` and ``right`` on one line of ``width`` cells (``right`` flush right)."""
    gap = width - left.cell_length - right.cell_length
    if gap < 2:
        return left + "  " + right
    return left + " " * gap + right


def one_line(text: str, width: int = 120) -> str:
    """Collapse whitespace and cut to ``width`` characters with an ellipsis (control characters shown)."""
    flat = " ".join(visible(text).split())
    return flat if len(flat) <= width else flat[: width - 1] + "…"


def relative_path(path: Any, cwd: str | None) -> Any:
    """``/home/me/proj/src/a.py`` → ``src/a.py`` when the session ran in ``/home/me/proj``."""
    if isinstance(path, str) and cwd:
        base = cwd.rstrip("/") + "/"
        if path.startswith(base):
            return path[len(base) :] or "."
        if path == cwd.rstrip("/"):
            return "."
    return path


def tool_summary(name: str | None, tool_input: dict[str, Any] | None, cwd: str | None = None) -> str:
    """A tool call as one line: ``$ npm test``, ``src/app.py``, ``/pattern/`` (control characters shown)."""
    return visible(_tool_summary(name, tool_input, cwd))


def _tool_summary(name: str | None, tool_input: dict[str, Any] | None, cwd: str | None) -> str:
    data = tool_input or {}
    name = name or "tool"
    lowered = name.lower()
    path = relative_path(data.get("file_path") or data.get("notebook_path") or data.get("path"), cwd)
    if lowered in ("bash", "shell", "exec_command", "run_shell_command", "local_shell"):
        command = data.get("command") or data.get("cmd") or ""
        if isinstance(command, list):
            command = " ".join(str(part) for part in command)
        return "$ " + one_line(str(command), 100)
    if lowered in ("grep", "search_file_content"):
        where = f" in {path}" if path else ""
        return f"/{data.get('pattern', '')}/{where}"
    if lowered == "glob":
        where = f" in {path}" if path else ""
        return f"{data.get('pattern', '')}{where}"
    if lowered in ("task", "agent"):
        kind = data.get("subagent_type") or "agent"
        return f"({kind}) {one_line(str(data.get('description') or data.get('prompt') or ''), 80)}"
    if lowered == "write" and path:
        content = data.get("content")
        size = f" ({len(content):,} chars)" if isinstance(content, str) else ""
        return f"{path}{size}"
    if path:
        return str(path)
    for value in data.values():
        if isinstance(value, str) and value.strip():
            return one_line(value, 90)
    return ""


def pretty_input(tool_input: dict[str, Any] | None, limit: int = 3000) -> str:
    """A tool's input for the expanded view, bounded."""
    if not tool_input:
        return ""
    try:
        text = json.dumps(tool_input, indent=2, ensure_ascii=False, default=str)
    except (TypeError, ValueError):
        text = str(tool_input)
    return bounded(visible(text), limit)  # (JSON escapes C0 but not DEL or C1)


def bounded(text: str, limit: int) -> str:
    """Head of ``text`` with a note of how much was left out."""
    if len(text) <= limit:
        return text
    return f"{text[:limit]}\n… ({len(text) - limit:,} more chars)"


def query_terms(query: str, extra: Iterable[str] = ()) -> list[str]:
    """Index terms worth highlighting: the hit's matched terms, else the query's.

    The same tokenizer as the index (stems, identifier parts), so what is
    highlighted is exactly what matched.
    """
    terms = [t for t in extra if t]
    return terms or default_tokenizer().query_terms(query)


def around_match(text: str, terms: Iterable[str], width: int) -> str:
    """``text`` on one line, cut to ``width`` cells so a query word is in view.

    The window is chosen around the query words themselves, not the tokens holding them:
    in ``/home/me/projects/spotter-worktree/…`` the word is ``worktree``, deep in the
    token, and a window at the token's start would show none. Of the windows starting a
    quarter width before each word, the one showing the most distinct words wins (the
    first of equals). Widths are terminal cells, so an emoji (two cells) never pushes
    the row onto another line.
    """
    flat = " ".join(visible(text).split())
    simple = _one_cell_each(flat)
    cells = len if simple else cell_len
    if cells(flat) <= width:
        return flat
    terms = list(terms)
    words = _word_positions(flat, terms)
    start = 0
    if words:
        lead = width // 4
        best: tuple[int, int] | None = None  # (distinct words shown, -start): the text's start on ties
        for at in [0] + [at for at, _end, _term in words[:MAX_ANCHORS]]:
            begin = 0 if cells(flat[:at]) <= width // 3 else _back_to_space(flat, _cells_back(flat, at, lead, simple), lead)
            stop = _cells_forward(flat, begin, width - 2, simple)
            shown = len({t for w_at, w_end, t in words if begin <= w_at and w_end <= stop})
            if best is None or (shown, -begin) > best:
                best = (shown, -begin)
        start = -best[1] if best else 0
    prefix = "…" if start else ""
    piece = flat[start:]
    if cells(prefix + piece) > width:
        piece = piece[: _cells_forward(piece, 0, width - len(prefix) - 1, simple)] + "…"
    return prefix + piece


MAX_ANCHORS = 20  # query words looked at as a window's anchor


def _word_positions(flat: str, terms: list[str]) -> list[tuple[int, int, str]]:
    """``(start, end, term)`` of the query words inside the tokens that matched ``terms``."""
    found: list[tuple[int, int, str]] = []
    for start, end in matched_spans(flat, terms):
        token = flat[start:end].lower()
        inside = [(token.find(stem), len(stem), term) for term in terms for stem in _stems(term) if stem in token]
        if not inside:
            found.append((start, end, ""))
            continue
        for offset, length, term in sorted(inside):
            found.append((start + offset, min(start + offset + max(length, 1), end), term))
    return sorted(found)


def _stems(term: str) -> tuple[str, ...]:
    """How ``term`` (an index stem) shows in text: itself, or without a rewritten last letter."""
    return (term, term[:-1]) if len(term) > 3 else (term,)


def _one_cell_each(text: str) -> bool:
    """Every character of ``text`` takes one terminal cell: then a piece's cells are its
    length, counted without looking at each character (the hit list lays out every
    hit's snippet at every keystroke; most are Latin text)."""
    return all(get_character_cell_size(c) == 1 for c in set(text))


def _cells_back(text: str, index: int, cells: int, simple: bool = False) -> int:
    """The index ``cells`` terminal cells before ``index`` (or 0); ``simple``: one cell a character."""
    if simple:
        return max(index - max(cells, 0), 0)
    while index > 0 and cells > 0:
        index -= 1
        cells -= get_character_cell_size(text[index])
    return index


def _cells_forward(text: str, index: int, cells: int, simple: bool = False) -> int:
    """The furthest index from ``index`` whose characters fit in ``cells`` terminal cells."""
    if simple:
        return max(min(len(text), index + max(cells, 0)), index)
    while index < len(text) and cells - get_character_cell_size(text[index]) >= 0:
        cells -= get_character_cell_size(text[index])
        index += 1
    return index


def _back_to_space(text: str, index: int, within: int) -> int:
    """``index`` moved back to the start of its word when one begins within ``within`` (≤ 15) characters."""
    space = text.rfind(" ", 0, index)
    return space + 1 if space > index - min(within, 15) else index


def highlight(text: str | Content, terms: Iterable[str], style: str = "$text-warning on $warning-muted bold") -> Content:
    """``text`` as Content with every token that matched ``terms`` styled."""
    content = text if isinstance(text, Content) else Content(text)
    for start, end in matched_spans(content.plain, list(terms)):
        content = content.stylize(style, start, end)
    return content