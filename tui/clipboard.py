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


def notice(what: str, how: str, path: Path | None) -> str:
    """One short notice (≤ 3 lines as a toast): what, how, and the file it is also in.

    The file is named, not its whole path (a path wraps mid-word); the path and a
    preview of the text are in the help screen (``?``) under "last copy".
    """
    saved = f" · saved to {path.name}" if path is not None else " · not saved (the data dir is not writable)"
    return f"{what} {how_said(how)}{saved}"


def last_copy_text(what: str, text: str, how: str, path: Path | None) -> str:
    """The last copy in full for the help screen: what, how, size, where, a preview."""
    lines = text.count("\n") + 1
    size = f"{lines:,} line{'' if lines == 1 else 's'}, {len(text):,} chars"
    where = f"\nSaved to {path}" if path is not None else ""
    return f"{what} {how_said(how)} ({size}).{where}\n{preview(text, width=48)}"
