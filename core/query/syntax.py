"""The search query language, parsed once in the core so every front end speaks it.

* plain words rank by BM25; a turn holding **all** of them ranks above any that
  holds only some (:mod:`core.index.bm25`), so more words narrow the list;
* ``"exact phrase"``: its words adjacent and in order, digits and one-letter words
  included (``"harbor session 4"``). The index keeps no positions, so the turns
  holding all its words (a compound's parts: ``"run.py --queries"`` may begin inside
  ``bench/run.py``) are checked against their stored text: prompt, answer, notes and
  tool inputs
  (:func:`core.query.execute.phrase_matches`); if none shows the phrase, the
  all-words matches are listed with a note (:func:`phrase_note`). A phrase that
  is one token (``"js/app.js"``) is the tokenizer's whole term, so holding it is
  the exact match, in tool output too;
* ``-word``: no turn holding ``word`` is listed, when it is a plain word (a letter,
  then two or more letters or ``_``) among other words, in a query that holds no
  command-line flag. ``--long-flag`` and ``-x``/``-xy`` are flags: never exclusions,
  and their presence marks a pasted command line, whose every ``-…`` word is
  searched as written (``act --container-architecture linux/amd64 -j test``,
  ``tar -xzf out.tgz -C dist``, marked by ``-C``; alone, ``-xzf`` is a word and excludes). ``-"a phrase"`` always excludes its words;
* ``prefix*``: any indexed word starting so matches (``flak*`` → flaky, flakes);
  the app treats the word being typed as a prefix the same way;
* recency words ("most recent …", "the latest session …", "last time I …")
  ask for the newer of similar turns: they are dropped from the terms and turn on a
  stronger recency prior.

Parsing never fails: an unbalanced quote closes at the end, a lone ``-`` or ``*``
is ignored.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

import msgspec

from core.index.tokenize import Tokenizer, default_tokenizer
from core.model import SearchHit

MIN_PREFIX = 2  # characters before a ``*`` to expand it
MAX_CLAUSES = 64  # terms of one query that count (a pasted log must not make a query slow)
MIN_TYPED_PREFIX = 3  # characters of a word being typed before it expands (two letters match too much)
_TOKEN = re.compile(r'(-?)"([^"]*)(?:"|$)|(\S+)')
# What a command-line flag looks like: ``--long-flag`` or a dash and one or two characters.
_FLAG = re.compile(r"--\S+|-[^\s-]{1,2}")
# An exclusion: a dash and a plain word (a letter, then 2+ letters or ``_``; no digits).
_EXCLUSION = re.compile(r"-[^\W\d_][^\W\d]{2,}")
# Words asking for the newest of similar turns; they are dropped from the terms.
_RECENCY = (
    r"\b(?:(?:the\s+)?most\s+recent(?:ly)?(?:\s+(?:session|conversation)s?)?|recently"
    r"|(?:the\s+)?(?:latest|newest|last)\s+(?:session|conversation)s?"
    r"|(?:the\s+)?last\s+time\s+(?=i\b|we\b))"
)
# Words that also ask for it but stay terms ("latest version", "newest tokenizer page").
_RECENCY_KEPT = r"\b(?:latest|newest)\b"
# Every match of either holds one of these. A query without them skips both patterns, which
# are compiled only when one does: case-folding _RECENCY costs ~2.5 ms, over 1% of a one-shot search.
_RECENCY_HINTS = ("recent", "latest", "newest", "last")


class Clause(msgspec.Struct, frozen=True):
    """One query term: a turn matches it when it holds ``term`` or, for a prefix, a word starting ``prefix``."""

    term: str
    prefix: str | None = None  # lowercase raw prefix, for ``word*`` and the word being typed
    required: bool = False  # from a phrase


class Query(msgspec.Struct, frozen=True):
    """A parsed query: its clauses, excluded terms, phrases and whether it asks for the latest."""

    clauses: tuple[Clause, ...] = ()
    excluded: tuple[str, ...] = ()  # index terms no listed turn may hold
    phrases: tuple[str, ...] = ()  # as typed, for the adjacency check
    recency: bool = False  # the query asked for the most recent
    terms: tuple[str, ...] = msgspec.field(default=())  # every positive term, for snippets

    def __bool__(self) -> bool:
        return bool(self.clauses)


def parse(query: str, *, typing: bool = False, tokenizer: Tokenizer | None = None) -> Query:
    """The :class:`Query` of ``query``; ``typing``: its last word is still being typed (a prefix)."""
    tok = tokenizer or default_tokenizer()
    text = query or ""
    folded = text.casefold()
    recency = any(hint in folded for hint in _RECENCY_HINTS) and bool(
        re.search(_RECENCY, text, re.IGNORECASE) or re.search(_RECENCY_KEPT, text, re.IGNORECASE)
    )
    if recency:
        text = re.sub(_RECENCY, " ", text, flags=re.IGNORECASE)
    clauses: dict[str, Clause] = {}
    excluded: list[str] = []
    phrases: list[str] = []
    matches = list(_TOKEN.finditer(text))
    excluding = _may_exclude(matches)
    for i, m in enumerate(matches):
        negative, phrase, word = m.group(1), m.group(2), m.group(3)
        if phrase is not None:
            terms = tok.query_terms(phrase)
            if negative:
                excluded.extend(_exclusion_terms(tok, phrase))
                continue
            if len(phrase.split()) > 1:  # one token is its tokenizer term, whole (see above)
                phrases.append(phrase)
                wholes = _wholes(tok, phrase)
                for term in terms:
                    clauses[term] = Clause(term, required=term not in wholes)
                continue
            for term in terms:
                clauses[term] = Clause(term, required=True)
            continue
        if excluding and _EXCLUSION.fullmatch(word):
            excluded.extend(_exclusion_terms(tok, word[1:]))
            continue
        is_last = i == len(matches) - 1 and typing and not text[m.end() :].strip() and not text.endswith(" ")
        prefix = None
        if word.endswith("*") or is_last:
            stripped = word.rstrip("*")
            shortest = MIN_PREFIX if word.endswith("*") else MIN_TYPED_PREFIX
            if len(stripped) >= shortest and stripped.isalnum():
                prefix = stripped.lower()
            word = stripped
        terms = tok.query_terms(word)
        if prefix is not None and not terms:
            terms = [prefix]  # a stopword or short stem being typed still expands
        for j, term in enumerate(terms):
            if term in clauses:
                continue
            clauses[term] = Clause(term, prefix if j == 0 else None)
    kept = list(clauses.values())[:MAX_CLAUSES]
    positive = tuple(c.term for c in kept)
    excluded_terms = tuple(dict.fromkeys(excluded))[:MAX_CLAUSES]
    return Query(tuple(kept), excluded_terms, tuple(phrases)[:MAX_CLAUSES], recency, positive)


def _wholes(tok: Tokenizer, phrase: str) -> set[str]:
    """The compound words of a phrase of several words (``run.py``, ``foo_bar``): not required, their
    parts are. A phrase may start or end inside a longer token of the text (``"run.py --queries"`` of
    ``bench/run.py --queries``), which the index holds whole (``bench/run.py``) and by its parts only;
    the adjacency check then decides."""
    out: set[str] = set()
    for word in phrase.split():
        terms = tok.terms(word)
        if len(terms) > 1:
            out.add(terms[0])
    return out


def _may_exclude(matches: list[re.Match[str]]) -> bool:
    """Whether ``-word`` excludes in this query: it has a word to search for and no flag
    (a flag marks a pasted command line, whose ``-…`` words are what is searched for)."""
    words = [m.group(3) for m in matches if m.group(3) is not None]
    if any(_FLAG.fullmatch(w) for w in words):
        return False
    phrases = any(m.group(2) is not None and not m.group(1) for m in matches)
    return phrases or any(not _EXCLUSION.fullmatch(w) for w in words)


def _exclusion_terms(tok: Tokenizer, text: str) -> list[str]:
    """The terms that exclude: a compound's whole (not its parts), each word of a phrase."""
    out: list[str] = []
    for raw in text.split():
        terms = tok.terms(raw)
        if terms:
            out.append(terms[0])
    return out


def phrase_pattern(phrase: str) -> re.Pattern[str] | None:
    """A regex finding ``phrase``'s words next to each other and in order, every word
    counted (digits and one letter too); any punctuation or space may stand between."""
    words = re.findall(r"\w+", phrase)
    if len(words) < 2:
        return None
    return re.compile(r"(?<!\w)" + r"\W+".join(re.escape(w) for w in words) + r"(?!\w)", re.IGNORECASE)


def phrase_note(query: str, hits: Sequence[SearchHit], *, short: bool = False) -> str | None:
    """What every front end says when no turn shows a quoted phrase of ``query`` (the
    hits hold its words, apart: ``exact_phrase`` False), or None; ``short``: for a status line."""
    if not hits or hits[0].exact_phrase is not False:
        return None
    shown = ", ".join(f'"{p}"' for p in parse(query).phrases) or "the quoted phrase"
    if short:
        return f"no exact {shown}: all-words matches"
    return f"No turn holds the exact phrase {shown}; the turns holding all its words follow."


def search_results(query: str, hits: Sequence[SearchHit], meaning_gap: dict[str, Any] | None = None) -> dict[str, Any]:
    """The search answer of ``--json``, MCP and HTTP: ``{"results": [...]}``, with a
    ``note`` when no turn shows the query's quoted phrase (:func:`phrase_note`), and
    ``meaning_missing`` when passages had no vectors yet (``Archive.meaning_gap``)."""
    out: dict[str, Any] = {"results": [h.to_dict() for h in hits]}
    note = phrase_note(query, hits)
    if note:
        out["note"] = note
    if meaning_gap:
        out["meaning_missing"] = meaning_gap
    return out
