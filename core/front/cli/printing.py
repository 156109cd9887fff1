"""What the CLI prints for people: transcript text shown, never sent to the terminal, and
the query's words highlighted when stdout is a terminal.

A transcript is text someone else (an agent, a tool's output, a web page) wrote: an
``ESC ]52;…`` in it would write the clipboard, ``ESC [2J`` clear the screen. So the text
commands print through :class:`VisibleOut`, which shows every control character
(:func:`core.words.visible`) in whatever is printed; the only escapes that reach the
terminal are the highlighting's own, written past it by :func:`print_marked`. ``--json``
escapes them as JSON does (:func:`core.front.cli.common.print_json`).

Colour: only when stdout is a terminal, ``NO_COLOR`` is unset or empty
(https://no-color.org) and ``TERM`` is not ``dumb``.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable
from typing import TextIO

from core.words import visible

MARK_ON = "\x1b[1;33m"  # bold yellow: the app's highlight colour
MARK_OFF = "\x1b[22;39m"  # bold and colour off, nothing else


class VisibleOut:
    """A text stream that writes what it is given with its control characters shown."""

    def __init__(self, raw: TextIO) -> None:
        self.raw = raw

    def write(self, text: str) -> int:
        self.raw.write(visible(text))
        return len(text)

    def __getattr__(self, name: str):  # flush, isatty, fileno, encoding, buffer… as the stream's
        return getattr(self.raw, name)


def colour_on(stream: TextIO | None = None) -> bool:
    """Highlight matches: stdout is a terminal, ``NO_COLOR`` is unset or empty, ``TERM`` is not dumb."""
    stream = sys.stdout if stream is None else stream
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # (a closed or odd stream)
        return False


def marked(text: str, spans: Iterable[tuple[int, int]]) -> str:
    """``text`` (already visible) with ``spans`` between the highlight's on and off escapes."""
    out: list[str] = []
    pos = 0
    for start, end in sorted(spans):
        if start < pos or end <= start:
            continue
        out += [text[pos:start], MARK_ON, text[start:end], MARK_OFF]
        pos = end
    out.append(text[pos:])
    return "".join(out)


def print_marked(prefix: str, text: str, terms: list[str]) -> None:
    """``prefix`` + ``text`` on one line, the tokens of ``text`` matching ``terms``
    highlighted when colour is on; control characters shown either way."""
    body = visible(text)
    if terms and colour_on():
        from core.query.snippets import matched_spans

        body = marked(body, matched_spans(body, terms))
    shown = visible(prefix) + body
    raw = getattr(sys.stdout, "raw", sys.stdout)  # past VisibleOut: the escapes are ours
    raw.write(shown + "\n")
