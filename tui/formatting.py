"""Pure text helpers: relative times, tool one-liners, highlighted snippets.

No widgets here, so these are trivially testable and shared by every pane.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

from textual.content import Content

from core.index.tokenize import default_tokenizer
from core.query.snippets import matched_spans
from core.refs import compress_numbers  # noqa: F401 (re-exported: the panes format numbers from here)
from core.timeutil import parse_datetime


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
    """Collapse whitespace and cut to ``width`` characters with an ellipsis."""
    flat = " ".join(text.split())
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
    """A tool call as one line: ``$ npm test``, ``src/app.py``, ``/pattern/``."""
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
    return bounded(text, limit)


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
    """``text`` on one line, cut to ``width`` so the first match is in view."""
    flat = " ".join(text.split())
    if len(flat) <= width:
        return flat
    spans = matched_spans(flat, list(terms))
    start = 0
    if spans and spans[0][0] > width // 3:
        start = max(0, spans[0][0] - width // 4)
        start = flat.rfind(" ", 0, start) + 1 if flat.rfind(" ", 0, start) > start - 15 else start
    piece = flat[start:]
    prefix = "…" if start else ""
    if len(prefix) + len(piece) > width:
        piece = piece[: width - len(prefix) - 1] + "…"
    return prefix + piece


def highlight(text: str | Content, terms: Iterable[str], style: str = "$text-warning on $warning-muted bold") -> Content:
    """``text`` as Content with every token that matched ``terms`` styled."""
    content = text if isinstance(text, Content) else Content(text)
    for start, end in matched_spans(content.plain, list(terms)):
        content = content.stylize(style, start, end)
    return content