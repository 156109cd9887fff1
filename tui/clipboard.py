"""Clipboard: pyperclip first, the terminal's OSC 52 second, and always say which.

pyperclip shells out (xclip, pbcopy, wl-copy…) and may block, so :func:`copy_text`
runs in a worker; the OSC 52 fallback must happen on the UI thread, so it is
handed back through ``call_from_thread``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pyperclip

if TYPE_CHECKING:
    from textual.app import App

PYPERCLIP = "pyperclip"
OSC52 = "OSC 52"


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
