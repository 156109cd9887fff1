"""Control characters from a transcript shown, never sent to the terminal (issue #37).

A prompt, a tool's output, a file or project name may hold ``ESC ]52;…`` (writes the
clipboard), ``ESC ]0;…`` (the window title), ``ESC [2J`` or a C1 ``0x9b``. Textual and
Rich take out only BEL, BS, VT, FF and CR when they build text, so the rest reached the
terminal as it was. Two layers keep them off it:

- the text the app builds from transcripts goes through :func:`core.words.visible` where
  it enters (the reader's blocks, the one-line helpers of :mod:`tui.formatting` the rows
  and headers use), so widths and match offsets are those of what is shown;
- :func:`show_controls`, run when the app starts, makes every Content and Rich Text the
  app renders (dialogs, notices, anything the first layer misses) show the rest the same
  way: Textual and Rich both strip through one translation table, extended here in place.

Newline and tab stay; CR still goes (Textual's rule: a Windows line end).
"""

from __future__ import annotations

import rich.control
import textual.content

# ESC → ␛ (the Unicode control pictures), DEL → ␡, C1 → <9B>: as core.words.visible shows them
_SHOWN: dict[int, str | None] = {c: chr(0x2400 + c) for c in range(0x20) if c not in (0x09, 0x0A, 0x0D)}
_SHOWN[0x7F] = "\u2421"
_SHOWN.update({c: f"<{c:02X}>" for c in range(0x80, 0xA0)})


def show_controls() -> None:
    """Every Content and Rich Text built from now on shows control characters (idempotent)."""
    for table in (textual.content._CONTROL_STRIP_TRANSLATE, rich.control._CONTROL_STRIP_TRANSLATE):
        table.update(_SHOWN)  # type: ignore[arg-type]  # (typed as strip-only tables)
