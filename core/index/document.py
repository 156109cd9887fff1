"""What the index stores for one turn: the fields it ranks and the text snippets come from.

The archive builds these from a file's entries (:class:`core.archive.turns.DocBuilder`);
the index counts their terms (:mod:`core.index.postings`) without knowing what a file is.
"""

from __future__ import annotations

import msgspec


class TurnDoc(msgspec.Struct, frozen=True):
    """What the index stores for one turn of one file."""

    turn: int  # local to the file
    part: int  # passage of the turn
    first_seq: int
    last_seq: int
    timestamp: str | None
    main: str
    tools: str
    body: str  # prompt + answer text (then what the agent showed besides), for snippets and phrases
    is_sidechain: bool
    # (sequence, start in body) of each answer message, flat: the passages hybrid recall
    # embeds besides the body's start (core/semantic/passages.py)
    marks: tuple[int, ...] = ()
    seen: str = ""  # tool inputs (commands, paths, patterns) and compaction summaries: checked for phrases
    # (sequence, start in body) of every message the body holds (prompt, answers, notes), flat,
    # in body order: a hit lands on its snippet's message without reading the transcript
    # (core/query/landing.py)
    places: tuple[int, ...] = ()


def encode_marks(marks: tuple[int, ...], body_chars: int, places: tuple[int, ...] = ()) -> str | None:
    """``marks`` and ``places`` as stored in the catalog's one column: "seq start seq start …|seq
    start …" (the places after the bar; a cache written before places has none), only those
    inside the stored body (its first ``body_chars`` characters); None when there are none."""
    kept = _pairs(marks, body_chars)
    where = _pairs(places, body_chars)
    return f"{kept}|{where}" if where else kept or None


def _pairs(flat: tuple[int, ...], body_chars: int) -> str:
    return " ".join(f"{flat[i]} {flat[i + 1]}" for i in range(0, len(flat) - 1, 2) if flat[i + 1] < body_chars)


def decode_marks(text: str | None) -> list[tuple[int, int]]:
    """The (sequence, start) pairs of the answer marks :func:`encode_marks` stored (none for a damaged value)."""
    return _decode((text or "").partition("|")[0])


def decode_places(text: str | None) -> list[tuple[int, int]] | None:
    """The (sequence, start) pairs of every message in the stored body, in body order; None when
    the cache did not keep them (or the value is damaged)."""
    _, bar, places = (text or "").partition("|")
    found = _decode(places) if bar else []
    return found or None


def _decode(text: str) -> list[tuple[int, int]]:
    try:
        numbers = [int(n) for n in text.split()]
    except ValueError:
        return []
    return list(zip(numbers[0::2], numbers[1::2]))
