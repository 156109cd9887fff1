"""Snippets: the window of a turn's text that shows the most, and the rarest, of the query's words.

A hit for ``sqlite migration nullability`` must show where the three words meet, and
one for ``MockStyles RenderStyles`` the identifier, not the first "mocking" in the
turn: so each window (a third of its width before a match) is worth the number of
distinct query terms it shows, then their rarity (document frequency from the
index; a whole identifier is far rarer than its parts, and carries them too).

Finding what matched must agree with the index (stems, identifier parts), but
tokenizing a whole 8,000-character turn per hit is too slow for search-as-you-type.
So a regex of the query terms finds *candidate* positions at C speed (an indexed
term is a prefix of, or inside, the token it came from: ``compact`` in
``compaction``, ``cach`` in ``_is_cache_version``), and only the token around a
candidate is run through the tokenizer to confirm it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from itertools import islice

from core.index.tokenize import TOKEN_RE, default_tokenizer

SNIPPET_CHARS = 300
_JOINERS = "_./-:@#"


@lru_cache(maxsize=256)
def _candidate_re(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    words = _longest_first(terms)
    if not words:
        return None
    # An index term starts a token or a part of one, never inside a lowercase run:
    # not after a lowercase letter unless it starts with a capital (camelCase).
    start = r"(?:(?-i:(?<![a-z]))|(?-i:(?=[A-Z])))"
    return re.compile(start + "(?:" + "|".join(_stem_re(w) for w in words) + ")", re.IGNORECASE)


@lru_cache(maxsize=256)
def _lowered_re(terms: tuple[str, ...]) -> re.Pattern[str] | None:
    """The same alternatives, case-sensitive, for the text lowercased (None: a term is not lowercase).

    Python's case-insensitive search, with the start rule as a look-behind before every
    alternative, ran at ~30 ns a character: a keystroke's 25 snippets spent a third of the
    search in it. Literals over the lowercased text, with the start rule checked in Python
    at each candidate, find the same spans 4-7× faster."""
    words = _longest_first(terms)
    if not words or any(w != w.lower() for w in words):
        return None
    return re.compile("|".join(_stem_re(w) for w in words))


@lru_cache(maxsize=256)
def _longest_first(terms: tuple[str, ...]) -> tuple[str, ...]:
    """The distinct terms, longest first: the order the alternatives are tried in (both patterns)."""
    return tuple(sorted({t for t in terms if t}, key=len, reverse=True))


# Where lowercasing and Python's case-insensitive matching disagree: the re module's extra
# case pairs (re._casefix: "ſ" matches "s", "ı" matches "i", Greek and Cyrillic variants),
# "Σ" (lower() writes a word-final one as "ς") and "İ" (lowercased to two characters). A text
# holding one is searched with the case-insensitive pattern itself.
CASE_APART = re.compile(
    "[\u00b5\u0130-\u0131\u017f\u0345\u0390\u03a3\u03b0\u03b2\u03b5\u03b8-\u03ba\u03bc\u03c0-\u03c3\u03c6\u03d0-\u03d1"
    "\u03d5-\u03d6\u03f0-\u03f1\u03f5\u0432\u0434\u043e\u0441-\u0442\u044a\u0463\u1c80-\u1c88\u1e61\u1e9b\u1fbe\u1fd3\u1fe3"
    "\ua64b\ufb05-\ufb06]"
)


def _finder(text: str, terms: tuple[str, ...]) -> Callable[[int], tuple[int, int] | None]:
    """``_candidate_re(terms).search(text, pos)``'s span as a function of ``pos``, found the fast
    way when that is exact (the case-insensitive pattern is compiled only for a text that needs it)."""
    lowered = _lowered_re(terms)
    low = "" if lowered is None else text.lower()
    if lowered is None or len(low) != len(text) or (not text.isascii() and CASE_APART.search(text)):
        pattern = _candidate_re(terms)
        if pattern is None:  # (no terms)
            return lambda pos: None

        def find_exact(pos: int) -> tuple[int, int] | None:
            found = pattern.search(text, pos)
            return None if found is None else found.span()

        return find_exact

    def find(pos: int) -> tuple[int, int] | None:
        while (found := lowered.search(low, pos)) is not None:
            at = found.start()
            if not at or not "a" <= text[at - 1] <= "z" or "A" <= text[at] <= "Z":  # the start rule, as above
                return found.span()
            pos = at + 1
        return None

    return find


def _stem_re(term: str) -> str:
    """``term`` as the start of the words it stems from: a stem is their prefix but where the
    stemmer rewrote an ending (``flaky`` → ``flaki``, ``visibility`` → ``visibl``)."""
    if term.endswith("i"):
        return re.escape(term[:-1]) + "[iy]"
    if term.endswith("bl"):
        return re.escape(term[:-1]) + "i?l"
    return re.escape(term)


def _matches(
    text: str, query_terms: list[str], prefixes: tuple[str, ...] = (), parts: frozenset[str] = frozenset(),
    wholes: tuple[str, ...] = (), edges: bool = False,
) -> Iterator[tuple[int, int, set[str]]]:
    """Spans of the tokens of ``text`` whose index terms meet the query's, with those terms.

    ``prefixes``: words still being typed (or ``word*``), each also in ``query_terms``: a
    token with a term starting with one matches too, as the search matched it. ``parts``:
    terms that alone do not make a match unless the token holds one of ``wholes`` or, with
    ``edges``, starts or ends the text (see :func:`matched_spans`).
    """
    terms = tuple(query_terms)
    if not _longest_first(terms):
        return
    find = _finder(text, terms)
    wanted = set(query_terms)
    expand = default_tokenizer().terms
    lead, tail = (len(text) - len(text.lstrip()), len(text.rstrip())) if edges else (-1, len(text) + 1)
    pos = 0
    while True:
        candidate = find(pos)
        if candidate is None:
            return
        found_at, found_end = candidate
        left = found_at
        while left > 0 and (text[left - 1].isalnum() or text[left - 1] in _JOINERS):
            left -= 1
        token = TOKEN_RE.search(text, left)
        if token is None:
            return
        if token.start() <= found_at < token.end():
            expanded = expand(token.group())
            met = wanted.intersection(expanded)
            if prefixes and (not met or (parts and met <= parts)):
                met |= {p for p in prefixes if any(t.startswith(p) for t in expanded)}
            whole = not parts or not met <= parts or token.start() <= lead or token.end() >= tail
            if met and (whole or any(w in token.group().lower() for w in wholes)):
                yield token.start(), token.end(), met
        pos = max(token.end(), found_end) if token.start() <= found_at else found_end


MAX_SCANNED = 40  # matches looked at per passage
MAX_PASSAGES = 3  # other passages of a turn looked at


def snippet(
    text: str, query_terms: list[str], width: int = SNIPPET_CHARS, rarity: dict[str, float] | None = None
) -> str:
    """At most ``width`` characters of ``text`` around the passage showing the most (rarest) query terms.

    ``rarity``: term → document frequency (lower is rarer); without it, every term
    weighs the same and the first best window wins.
    """
    return best_snippet([text], query_terms, width, rarity)


def best_snippet(
    texts: Iterable[str], query_terms: list[str], width: int = SNIPPET_CHARS, rarity: dict[str, float] | None = None
) -> str:
    """The snippet of whichever of ``texts`` (passages of one turn) has the best window; the first on ties.

    A window's worth is how many distinct query terms it shows, then how rare they
    are (:func:`_weight`): ``sqlite migration nullability`` shows the sentence with
    all three, not the first "migration"; an identifier, which carries its whole and
    its parts, beats a loose part. Texts after the first are looked at only while no
    window has shown every term the index holds, and only if they contain the rarest
    term's letters at all.
    """
    # the typed terms the index holds (a typed stem it lacks shows nothing; completions of a prefix have no rarity)
    wanted = [t for t in dict.fromkeys(query_terms) if rarity.get(t)] if rarity else list(dict.fromkeys(query_terms))
    rarest = min(wanted, key=lambda t: rarity[t]) if rarity and wanted else None
    best: tuple[tuple[int, float], str, int] | None = None
    for n, text in enumerate(texts):
        if n > MAX_PASSAGES:
            break
        if n and rarest and rarest not in text.lower():
            continue  # another passage is worth scanning only if it may hold the rarest word (a substring test)
        flat = " ".join(text.split())
        found = _best_window(flat, query_terms, width, rarity, len(wanted))
        key = found[0] if found else (0, 0.0)
        if best is None or key > best[0]:
            best = (key, flat, found[1] if found else 0)
        if wanted and best[0][0] >= len(wanted):
            break
    if best is None:
        return ""
    _, flat, start = best
    if len(flat) <= width:
        return flat
    window = flat[start : start + width]
    if start > 0:
        window = "…" + window[1:]
    if start + width < len(flat):
        window = window[:-1] + "…"
    return window


def _weight(term: str, rarity: dict[str, float] | None) -> float:
    """How much showing ``term`` is worth: more the rarer it is (document frequency ``rarity[term]``)."""
    if not rarity:
        return 1.0
    return 1.0 / math.log2(2.0 + rarity.get(term, 0.0))


def _best_window(
    text: str, query_terms: list[str], width: int, rarity: dict[str, float] | None, complete: int = 0
) -> tuple[tuple[int, float], int] | None:
    """((distinct terms shown, their weight), start) of the best ``width`` window of ``text``,
    each counting the matches from one match on and starting a third of a width before
    it; the first of equals. Matches are found as the windows need them, and the scan
    stops at the first window showing ``complete`` distinct terms (no later one is better)."""
    found = islice(_matches(text, query_terms), MAX_SCANNED)
    matches: list[tuple[int, int, set[str]]] = []

    def more() -> bool:
        nxt = next(found, None)
        if nxt is not None:
            matches.append(nxt)
        return nxt is not None

    lead = width // 3
    weight = {t: _weight(t, rarity) for t in set(query_terms)}
    shown: dict[str, int] = {}  # term → matches of it in the window
    best: tuple[tuple[int, float], int] | None = None
    left = right = 0
    while left < len(matches) or more():
        start, _end, met = matches[left]
        begin = max(0, start - lead)
        while (right < len(matches) or more()) and matches[right][1] <= begin + width:
            for term in matches[right][2]:
                shown[term] = shown.get(term, 0) + 1
            right += 1
        key = (len(shown), sum(weight.get(t, 0.0) for t in shown))
        if best is None or key > best[0]:
            best = (key, begin)
        if complete and key[0] >= complete:
            break
        for term in met if left < right else ():  # the anchor leaves the window before the next one
            if term in shown:
                shown[term] -= 1
                if not shown[term]:
                    del shown[term]
        left += 1
    return best


def matched_spans(
    text: str, query_terms: list[str], prefixes: tuple[str, ...] = (), parts: frozenset[str] = frozenset(),
    wholes: tuple[str, ...] = (), edges: bool = False,
) -> list[tuple[int, int]]:
    """Character spans of the tokens in ``text`` that match the query (highlighting);
    ``prefixes``: the query's prefix words (the last one while it is being typed); ``parts``:
    terms that match only in a token that carries another query term or holds one of
    ``wholes`` (lowercased typed identifiers): ``guard_fail`` marks ``guard_fail`` and
    ``live.ex:25:guard_fail``, never a lone ``guard``; ``edges``: ``text`` is a painted line, whose
    first and last token may be a piece of one wrapped there (so they match by a part too)."""
    return [(start, end) for start, end, _ in _matches(text, query_terms, prefixes, parts, wholes, edges)]
