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


def preview(text: str, lines: int = PREVIEW_LINES, width: int = 56) -> str:
    """The first non-empty lines of ``text``, each cut to ``width``, quoted."""
    shown = [line for line in text.splitlines() if line.strip()][:lines]
    return "\n".join("│ " + (line if len(line) <= width else line[: width - 1] + "…") for line in shown)


def notice(what: str, text: str, how: str, path: Path | None, *, show_preview: bool = True) -> tuple[str, str]:
    """``(title, message)`` saying exactly what happened, with a preview and the file.

    ``show_preview=False``: the caller shows the text whole (a one-line command).
    """
    lines = text.count("\n") + 1
    size = f"{lines:,} line{'' if lines == 1 else 's'}, {len(text):,} chars"
    if how == PYPERCLIP:
        title = "Copied to the clipboard"
        head = f"{what} copied to the clipboard ({size})."
    else:
        title = "Sent via OSC 52"
        head = f"{what} sent to the terminal via OSC 52 — your terminal or tmux must allow it; see README ({size})."
    tail = f"\nAlso saved to {path}" if path is not None else ""
    body = f"\n{preview(text)}" if show_preview else ""
    return title, f"{head}{body}{tail}"
