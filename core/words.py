"""Counts in words (``1 turn``, ``2 turns``) and control characters shown, not sent —
one rule for the CLI, errors and the app."""

from __future__ import annotations

import re


def plural(n: int, noun: str) -> str:
    """``1 turn``, ``2 turns``, ``1,204 sessions`` (``noun`` is the singular)."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"


# Control characters as text shows them: C0 as its Unicode control picture (ESC → ␛),
# DEL as ␡, C1 (0x80–0x9f: 0x9b is a terminal's CSI) as ``<9B>``, as less shows bytes.
# Newline and tab stay; a CR before a newline goes (a Windows line end).
_VISIBLE = {c: chr(0x2400 + c) for c in range(0x20) if c not in (0x09, 0x0A)}
_VISIBLE[0x7F] = "\u2421"
_VISIBLE.update({c: f"<{c:02X}>" for c in range(0x80, 0xA0)})
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f]")
_C0_BYTES = bytes(c for c in range(0x20) if c not in (0x09, 0x0A)) + b"\x7f"


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character other than newline and tab.

    The app runs every message of a session it opens through this: on bytes it costs a
    tenth of the regex on ASCII text (C0 and DEL deleted by ``bytes.translate``), and the
    regex runs only for text holding a C1's UTF-8 lead byte (0xc2, U+0080–U+00BF).
    """
    raw = text.encode("utf-8", "surrogatepass")
    if len(raw.translate(None, _C0_BYTES)) != len(raw):
        return True
    return not text.isascii() and b"\xc2" in raw and _CONTROL.search(text) is not None


def visible(text: str) -> str:
    """``text`` with every control character but newline and tab shown, never sent.

    A transcript may hold ``ESC ]52;…`` (which writes the clipboard), ``ESC [2J``, a
    title or a C1 ``0x9b``: printed raw they act on the terminal. Shown this way they
    are inert and still readable: ``␛]0;title␇``, ``<9B>2J``.
    """
    if not has_control(text):
        return text
    return text.replace("\r\n", "\n").translate(_VISIBLE)
