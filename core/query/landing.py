"""Which message a hit points at: the one its snippet came from (issue #34.4).

The index ranks passages of a turn (a prompt and everything until the next one), and
keeps only the passage's first and last message, so a hit's ``sequence`` used to be
the passage's first message — often an unrelated tool call, hundreds of messages
before the closing summary the snippet showed. An agent following the documented
flow (``search_history`` → ``get_message_context(session, sequence)``) then read the
wrong message. Here the passage's messages (read back from the transcript) are
matched against the snippet:

* the message whose text holds the snippet (a window may straddle two: then the one
  holding most of the snippet's query words, rarest first);
* a snippet showing no query word (the words were in a tool's input or output, which
  the stored passage text leaves out; or the turn was found by meaning): the message
  holding most of the query's words, and the snippet is remade from it, so the
  message at ``sequence`` always shows the snippet's words;
* a hit found by meaning: the message of its best-matching vector passage when the
  query layer knows it (``meaning_sequence``), else the message overlapping the
  query's words best.

A hit whose snippet the stored passage shows is landed from the passage itself
(:func:`land_in_body`): the catalog keeps where each message starts in the stored body
(``places``), so a one-shot search reads no transcript for it. Only a hit whose words were
in a tool's input or output, or a cache written before places were kept, reads its file.

The same matching serves the app's reader (:func:`source_of`), which has the
messages in hand and lands on the step the hit list's snippet came from.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Sequence
from itertools import islice
from typing import Any

from core.index.document import decode_places

from . import snippets

MAX_SCANNED = 200  # matches looked at per message
MAX_CHARS = 200_000  # of a message compared with a snippet's wording (a huge output is not read whole per phrase)


def message_text(message: Any) -> str:
    """What a message shows as words: its text, or a tool call's input values."""
    text = getattr(message, "text", "") or ""
    tool_input = getattr(message, "tool_input", None)
    if getattr(message, "type", "") == "tool_use" and isinstance(tool_input, dict):
        values = [str(v) for v in tool_input.values() if isinstance(v, (str, int, float)) and not isinstance(v, bool)]
        values += [str(x) for v in tool_input.values() if isinstance(v, list) for x in v[:8] if isinstance(x, (str, int, float))]
        text = " ".join([text, *values]).strip()
    return text


def _flat(text: str) -> str:
    return " ".join(text.split())


def _probe(snippet: str) -> str:
    return _flat(snippet).strip("…").strip()


def _terms_held(text: str, terms: list[str]) -> set[str]:
    """The query terms ``text`` holds (as the index would match them)."""
    lowered = text.lower()
    present = [t for t in terms if t and t in lowered]  # a substring test first (C speed)
    if not present:
        return set()
    held: set[str] = set()
    for _, _, met in islice(snippets._matches(text, present), MAX_SCANNED):
        held |= met
        if len(held) == len(present):
            break
    return held


def _weight(terms: set[str], rarity: dict[str, float] | None) -> float:
    return sum(snippets._weight(t, rarity) for t in terms)


def _shingles(flat: str, size: int = 3) -> set[str]:
    words = flat.lower().split()
    return {" ".join(words[i : i + size]) for i in range(max(1, len(words) - size + 1))}


def source_of(
    texts: Sequence[str], snippet: str, terms: list[str], rarity: dict[str, float] | None = None
) -> int | None:
    """Index of the text (of a passage's messages, or a turn's steps) the ``snippet`` came
    from: the one holding it whole; else, of those sharing its words, the one holding
    the most (rarest) query words the snippet shows, then most of its wording; the
    first of equals. None when no text shares the snippet's words."""
    probe = _probe(snippet)
    if not probe:
        return None
    flats = [_flat(t) for t in texts]
    for i, flat in enumerate(flats):
        if probe in flat:
            return i
    shown = _terms_held(probe, list(dict.fromkeys(terms)))
    wording = _shingles(probe)
    best: tuple[tuple[float, int], int] | None = None
    for i, flat in enumerate(flats):
        lowered = flat[:MAX_CHARS].lower()
        overlap = sum(1 for s in wording if s in lowered) if flat else 0
        if not overlap:
            continue
        key = (_weight(_terms_held(flat, list(shown)), rarity) if shown else 0.0, overlap)
        if best is None or key > best[0]:
            best = (key, i)
    return best[1] if best else None


def best_for_terms(texts: Sequence[str], terms: list[str], rarity: dict[str, float] | None = None) -> int | None:
    """Index of the text holding the most distinct query terms (rarest first); None if none holds one."""
    wanted = list(dict.fromkeys(terms))
    best: tuple[tuple[int, float], int] | None = None
    for i, text in enumerate(texts):
        held = _terms_held(text, wanted)
        if not held:
            continue
        key = (len(held), _weight(held, rarity))
        if best is None or key > best[0]:
            best = (key, i)
    return best[1] if best else None


def land(
    messages: Sequence[Any],
    snippet: str,
    terms: list[str],
    rarity: dict[str, float] | None = None,
    *,
    meaning_sequence: int | None = None,
) -> tuple[int | None, str]:
    """(the sequence of the message the hit points at, its snippet) for a passage's ``messages``.

    The snippet is kept when a message holds it (or its query words); else it is remade
    from the chosen message: the one holding most query words, or (found by meaning,
    sharing none) most of the snippet's wording. None: no message fits (the caller keeps
    the passage's first).
    """
    if not messages:
        return None, snippet
    texts = [message_text(m) for m in messages]
    if meaning_sequence is not None:
        for m, text in zip(messages, texts, strict=True):
            if m.sequence == meaning_sequence:
                own = snippets.snippet(text, terms, rarity=rarity) if text.strip() else snippet
                return m.sequence, own
    shows_words = bool(_terms_held(_probe(snippet), list(dict.fromkeys(terms)))) if snippet else False
    if shows_words:
        at = source_of(texts, snippet, terms, rarity)
        if at is not None:
            return messages[at].sequence, snippet
    at = best_for_terms(texts, terms, rarity)
    if at is not None:
        return messages[at].sequence, snippets.snippet(texts[at], terms, rarity=rarity)
    at = source_of(texts, snippet, terms, rarity) if snippet else None
    if at is None:
        return None, snippet
    if _probe(snippet) not in _flat(texts[at]):  # (found by meaning, sharing no word: the snippet is this message's)
        snippet = snippets.snippet(texts[at], terms, rarity=rarity)
    return messages[at].sequence, snippet


_WORD = re.compile(r"\S+")


def _body_span(body: str, probe: str) -> tuple[int, int] | None:
    """Where ``probe`` (words as the snippet shows them: whitespace made single spaces) lies in
    ``body``: found in the flattened body (a C-speed find, not a pattern per snippet), and its
    ends mapped back through the body's word starts."""
    flat = " ".join(body.split())
    at = flat.find(probe)
    if at < 0:
        return None
    words = [m.start() for m in _WORD.finditer(body)]

    def to_body(pos: int) -> int:  # a position inside a word of ``flat`` → the same in ``body``
        word = flat.count(" ", 0, pos)
        return words[word] + pos - (flat.rfind(" ", 0, pos) + 1)

    return to_body(at), to_body(at + len(probe) - 1) + 1


def land_in_body(
    body: str, marks: str | None, first_seq: int, snippet: str, terms: list[str], rarity: dict[str, float] | None = None,
    *, meaning_sequence: int | None = None,
) -> tuple[int, str] | None:
    """What :func:`land` answers, from the stored passage alone: (the sequence, file-local, of the
    message its snippet came from, the snippet). None when only the transcript can tell: the
    cache kept no places, the snippet shows no query word (they were in a tool's input or output),
    or it was made from another passage of the turn."""
    places = decode_places(marks)
    if not places:
        return None
    starts = [start for _, start in places]
    if meaning_sequence is not None:
        at = next((i for i, (seq, _) in enumerate(places) if seq == meaning_sequence), None)
        if at is None:
            return None
        end = starts[at + 1] if at + 1 < len(starts) else len(body)
        text = body[starts[at] : end].strip()
        return meaning_sequence, snippets.snippet(text, terms, rarity=rarity) if text else snippet
    probe = _probe(snippet) if snippet else ""
    if not probe or not _terms_held(probe, list(dict.fromkeys(terms))):
        return None
    span = _body_span(body, probe)
    if span is None:
        return None
    first = bisect_right(starts, span[0]) - 1
    last = bisect_right(starts, span[1] - 1) - 1
    if first < 0:
        return None
    if first == last:
        return places[first][0], snippet
    # straddling messages: the passage's message :func:`source_of` picks (most of the rarest words
    # shown), as :func:`land` does (a later part's copied prompt is not one of its messages)
    ends = [*starts[1:], len(body)]
    own = [i for i, (seq, _) in enumerate(places) if seq >= first_seq]
    at = source_of([body[starts[i] : ends[i]] for i in own], snippet, terms, rarity)
    return None if at is None else (places[own[at]][0], snippet)
