"""Reference syntax (SPEC §4): parse and format; resolution lives in the API.

::

    velvet-puzzling-eclipse            the whole chain
    velvet-puzzling-eclipse#4          session 4 of the chain   (#4-5, #1,3,5)
    velvet-puzzling-eclipse#4:12       turn 12 of session 4
    a378da2b-…  or a unique prefix ≥ 8 one session by id;  a378da2b:12  one turn
"""

from __future__ import annotations

import re

import msgspec

from .errors import BadInput

MIN_PREFIX = 8
# The longest reference read (issue 37 item 5): a slug or session id is under 100
# characters and a file name at most 255 bytes, so this leaves room for any session
# range a person types; a longer text is refused here, before a lookup (a 60,000
# character name made SQLite's LIKE fail and an HTTP worker spin for seconds).
MAX_REFERENCE = 1000
_TURN = re.compile(r"^[0-9]+$")


class Reference(msgspec.Struct, frozen=True):
    """A parsed reference: a name (slug, id or prefix), an optional session range and turn."""

    name: str  # a slug, a session id, or an id prefix
    sessions: str | None = None  # range spec after '#'
    turn: int | None = None


def parse_reference(text: str) -> Reference:
    ref = (text or "").strip()
    if not ref:
        raise BadInput("Empty reference: give a slug, slug#4-5, slug#4:12, a session id or id:12")
    if len(ref) > MAX_REFERENCE:  # (named by its length: echoing it would flood the one line)
        raise BadInput(f"Bad reference: {len(ref):,} characters is too long; a reference is at most "
                       f"{MAX_REFERENCE:,} (a slug, slug#4-5, slug#4:12, a session id or id:12)")
    if any(c.isdigit() and not c.isascii() for c in ref):  # (full-width １, Arabic-Indic ١: one rule)
        raise BadInput(f"Bad reference {ref!r}: session and turn numbers are written with the digits 0-9")
    if "#" in ref:
        name, _, rest = ref.partition("#")
        sessions, turn = rest, None
        if ":" in rest:
            sessions, _, turn_text = rest.partition(":")
            turn = _turn_number(turn_text, ref)
        if not name or not sessions.strip():
            raise BadInput(f"Bad reference {ref!r}: expected slug#N, slug#N-M or slug#N:TURN")
        return Reference(name=name, sessions=sessions.strip(), turn=turn)
    if ":" in ref:
        name, _, turn_text = ref.rpartition(":")
        if name and _TURN.match(turn_text.strip()):
            return Reference(name=name, turn=int(turn_text))
    return Reference(name=ref)


def _turn_number(text: str, ref: str) -> int:
    if not _TURN.match(text.strip()):
        raise BadInput(f"Bad reference {ref!r}: the turn after ':' must be a number")
    return int(text)


def format_reference(
    *,
    slug: str | None,
    session_id: str,
    numbers: list[int] | None = None,
    chain_length: int | None = None,
    turn: int | None = None,
    bare_is_chain: bool = True,
) -> str:
    """The shortest reference naming these sessions (1-based numbers) or a turn.

    ``slug`` is the chain's name; ``bare_is_chain=False`` for a slug-less chain's
    name (an id prefix, which alone names one session): its whole chain is spelled
    ``name#1-N``.
    """
    if not slug:
        return f"{session_id}:{turn}" if turn is not None else session_id
    if turn is not None and numbers and len(numbers) == 1:
        return f"{slug}#{numbers[0]}:{turn}"
    whole = chain_length and numbers == list(range(1, chain_length + 1)) and chain_length > 1
    if bare_is_chain and (not numbers or whole):
        return slug
    if not numbers:
        numbers = list(range(1, (chain_length or 1) + 1))
    return f"{slug}#{compress_numbers(numbers)}"


def compress_numbers(numbers: list[int]) -> str:
    """[1,2,3,5] → "1-3,5"."""
    parts: list[str] = []
    ordered = sorted(set(numbers))
    start = prev = ordered[0]
    for n in ordered[1:]:
        if n == prev + 1:
            prev = n
            continue
        parts.append(f"{start}-{prev}" if prev != start else str(start))
        start = prev = n
    parts.append(f"{start}-{prev}" if prev != start else str(start))
    return ",".join(parts)
