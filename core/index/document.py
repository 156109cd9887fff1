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
    seen: str = ""  # tool inputs (commands, paths, patterns) and compaction summaries: checked for phrases
