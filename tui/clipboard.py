"""Clipboard: pyperclip first, the terminal's OSC 52 second, a file always; say which.

pyperclip shells out (xclip, pbcopy, wl-copy…) and may block, so :func:`copy_text`
runs in a worker; the OSC 52 fallback must happen on the UI thread, so it is
handed back through ``call_from_thread``. OSC 52 is a request to the terminal that
nothing acknowledges (tmux drops it unless ``set-clipboard`` allows it), so the
notice says "sent", never "copied", and every copy is also written to a file
(:func:`save_copy`) whose path the notice gives: the one way that always works.
"""

from __future__ import annotations

import os
import tempfile
import textwrap
from pathlib import Path
from typing import TYPE_CHECKING

import pyperclip

if TYPE_CHECKING:
    from textual.app import App

PYPERCLIP = "pyperclip"
OSC52 = "OSC 52"
LAST_COPY = "last-copy.md"
PREVIEW_LINES = 3


def copy_text(app: App, text: str, *, in_thread: bool = True) -> tuple[str, str]:
    """Put ``text`` on the clipboard; return ``(how, detail)``.

    ``how`` is ``"pyperclip"`` or ``"OSC 52"``; ``detail`` is why pyperclip was
    not used (empty when it was). On the fallback the app's own clipboard
    (``app.clipboard``) is set too, so pasting inside the app works.
    """
    try:
        pyperclip.copy(text)
    except pyperclip.PyperclipException as error:
        detail = (str(error).split(". ")[0] or type(error).__name__)[:80]
        if in_thread:
            app.call_from_thread(app.copy_to_clipboard, text)
        else:
            app.copy_to_clipboard(text)
        return OSC52, detail
    return PYPERCLIP, ""


def save_copy(directory: Path, text: str) -> Path | None:
    """Write ``text`` to ``directory/last-copy.md`` (atomically); None if that fails."""
    try:
        directory.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".last-copy-", suffix=".tmp")
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            out.write(text)
        path = directory / LAST_COPY
        os.replace(tmp, path)
        return path
    except OSError:
        return None


def preview(text: str, lines: int = PREVIEW_LINES, width: int = 72) -> str:
    """The first non-empty lines of ``text``, each cut at a word to ``width``, quoted."""
    shown = [line for line in text.splitlines() if line.strip()][:lines]
    return "\n".join("│ " + cut_at_word(line, width) for line in shown)


def cut_at_word(text: str, width: int) -> str:
    """``text`` cut to ``width`` at a space (never mid-word unless one word is longer)."""
    if len(text) <= width:
        return text
    head = text[: width - 1]
    space = head.rfind(" ")
    return (head[:space] if space > width // 2 else head).rstrip() + "…"


def how_said(how: str) -> str:
    """What happened to the text, honestly: OSC 52 is a request nothing acknowledges."""
    return "copied to the clipboard" if how == PYPERCLIP else "sent via OSC 52 (the terminal or tmux must allow it)"


def notice(what: str, how: str, path: Path | None, width: int | None = None) -> str:
    """One short notice (≤ 3 lines as a toast ``width`` cells of text wide): what, how,
    and the file it is also in.

    The file is named, not its whole path (a path wraps mid-word); the path and a
    preview of the text are in the help screen (``?``) under "last copy". Where the
    whole notice would take more than 3 lines (80 columns, a long reference, OSC 52),
    the asides go first, then the middle of ``what``: it is never cut mid-line.
    """
    saved = f" · saved to {path.name}" if path is not None else " · not saved (the data dir is not writable)"
    full = f"{what} {how_said(how)}{saved}"
    if width is None or _lines(full, width) <= NOTICE_LINES:
        return full
    short_how = "copied" if how == PYPERCLIP else "sent via OSC 52"
    short_saved = f" · in {path.name}" if path is not None else " · not saved"
    text = f"{what} {short_how}{short_saved}"
    room = len(what)
    while _lines(text, width) > NOTICE_LINES and room > 12:
        room -= 4
        text = f"{_cut_middle(what, room)} {short_how}{short_saved}"
    return text


NOTICE_LINES = 3


def _lines(text: str, width: int) -> int:
    return len(textwrap.wrap(text, max(width, 8), break_on_hyphens=False)) or 1


def _cut_middle(text: str, width: int) -> str:
    if len(text) <= width:
        return text
    head = (width - 1) // 2
    return text[:head] + "…" + text[len(text) - (width - 1 - head) :]


def toast_text_width(screen_width: int) -> int:
    """The text width of a notice on a screen ``screen_width`` wide (app.tcss: ``Toast``
    is 64 wide, at most 70% of the toast rack, which leaves its scroll bar's 2 cells; a
    1-cell edge and 1 of padding each side; one cell spare, as Textual wraps words)."""
    return min(64, (screen_width - 2) * 7 // 10) - 4


def last_copy_text(what: str, text: str, how: str, path: Path | None) -> str:
    """The last copy in full for the help screen: what, how, size, where, a preview."""
    lines = text.count("\n") + 1
    size = f"{lines:,} line{'' if lines == 1 else 's'}, {len(text):,} chars"
    where = f"\nSaved to {path}" if path is not None else ""
    return f"{what} {how_said(how)} ({size}).{where}\n{preview(text, width=48)}"
