"""What the index stores for one turn: the fields it ranks and the text snippets come from.

The archive builds these from a file's entries (:class:`core.archive.turns.DocBuilder`);
the index counts their terms (:mod:`core.index.postings`) without knowing what a file is.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class TurnDoc:
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


def encode_marks(marks: tuple[int, ...], body_chars: int) -> str | None:
    """``marks`` as stored in the catalog: "seq start seq start …", only those inside the
    stored body (its first ``body_chars`` characters); None when there are none."""
    kept = [f"{marks[i]} {marks[i + 1]}" for i in range(0, len(marks) - 1, 2) if marks[i + 1] < body_chars]
    return " ".join(kept) or None


def decode_marks(text: str | None) -> list[tuple[int, int]]:
    """The (sequence, start) pairs :func:`encode_marks` stored (none for a damaged value)."""
    try:
        numbers = [int(n) for n in (text or "").split()]
    except ValueError:
        return []
    return list(zip(numbers[0::2], numbers[1::2]))
