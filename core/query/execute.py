"""Running a parsed query against an index snapshot: clauses, prefixes, phrases, pages, groups.

:mod:`core.query.syntax` says what a query means; this module turns that into the
ranked documents of a :class:`~core.index.bm25.Snapshot` and cuts the hit list into
pages or per-session groups. ``Archive.search`` (and the team store) delegate here,
so every front end pages, groups and sorts the same way; the bounds of a page
(:func:`check_paging`, :func:`check_limit`) hold for the listing calls too.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from msgspec.structs import replace

from core.arguments import out_of_bounds
from core.errors import BadInput
from core.index.bm25 import Hit, Snapshot
from core.index.tokenize import default_tokenizer, term_id
from core.index.vocab import prefix_words
from core.model import SearchHit

from .syntax import Query, phrase_pattern

SORTS = ("relevance", "recent")
GROUPS = (None, "session")
MAX_OFFSET = 10_000
MAX_LIMIT = 500
PREFIX_WORDS = 8  # words a prefix expands to, shortest first (the likeliest completions)
GROUP_WINDOW = 400  # ranked documents looked at to group a page by session


def check_paging(offset: int, sort: str, group: str | None) -> None:
    if not isinstance(offset, int) or offset < 0 or offset > MAX_OFFSET:
        raise BadInput(f"offset must be between 0 and {MAX_OFFSET}")
    if sort not in SORTS:
        raise BadInput(f"sort must be one of {', '.join(SORTS)}")
    if group not in GROUPS:
        raise BadInput("group must be 'session' or empty")


def check_limit(limit: int) -> int:
    if not isinstance(limit, int) or limit < 1 or limit > MAX_LIMIT:
        raise BadInput(out_of_bounds("limit", limit, 1, MAX_LIMIT))
    return limit


def clause_ids(snapshot: Snapshot, query: Query) -> tuple[list[tuple[int, ...]], list[bool], list[str]]:
    """Per clause, the term ids that satisfy it (a prefix adds the words it completes);
    which clauses are required; and every term that can match (for snippets)."""
    tok = default_tokenizer()
    clauses: list[tuple[int, ...]] = []
    required: list[bool] = []
    terms: list[str] = []  # what was typed first, then the words prefixes completed
    completions: list[str] = []
    for clause in query.clauses:
        own = [clause.term]
        if clause.prefix:
            for word in prefix_words(snapshot.segments, clause.prefix, PREFIX_WORDS):
                own.extend(tok.terms(word)[:1])  # the word's own term, not its parts
        own = list(dict.fromkeys(own))
        terms.append(own[0])
        completions.extend(own[1:])
        clauses.append(tuple(term_id(t) for t in own))
        required.append(clause.required)
    return clauses, required, list(dict.fromkeys(terms + completions))


def ranked(
    snapshot: Snapshot,
    query: Query,
    fetch: int,
    *,
    sort: str = "relevance",
    allowed_files: np.ndarray | None = None,
    ts_from: float | None = None,
    ts_to: float | None = None,
) -> tuple[list[Hit], list[str], dict[str, float]]:
    """Ranked documents for ``query``, the terms they may match by, and each term's
    document frequency (so a snippet can show the rarest match)."""
    clauses, required, terms = clause_ids(snapshot, query)
    dfs: dict[int, int] = {}
    hits = snapshot.search(
        limit=fetch,
        clauses=clauses,
        required=required,
        excluded=[term_id(t) for t in query.excluded],
        allowed_files=allowed_files,
        ts_from=ts_from,
        ts_to=ts_to,
        recency_intent=query.recency,
        sort=sort,
        dfs=dfs,
    )
    # rarity of the typed terms only: a snippet shows what was asked for, and a rare
    # completion of a prefix ("re*" → "reentrant") must not steer it
    typed = {c.term for c in query.clauses}
    return hits, terms, {t: float(dfs.get(term_id(t), 0)) for t in terms if t in typed}


PHRASE_WINDOW = 400  # passages holding a phrase's words checked for the phrase itself


def phrase_matches(
    raw: list[Hit], query: Query, bodies: Callable[[list[int]], dict[int, dict[str, Any]]]
) -> tuple[list[Hit], bool | None]:
    """The passages for a query with quoted phrases, each marked ``phrase_shown``, and
    whether any shows them all (None: no phrase).

    The index keeps no positions, so a phrase is checked on the candidates' stored
    text (cheaper than positional postings for every term of every turn): the prompt,
    answer and notes (``body``), then the tool calls' inputs and compaction summaries
    (``seen``). Each passage is one of: **shown** (the text shows every phrase, adjacent,
    in order, digits included); **unseen** (a phrase's indexed word is not in the text,
    so the index found it in tool output, which is stored by words only: adjacency
    cannot be checked); **apart** (the text holds the words, not the phrase). Listed: shown,
    then unseen, each in rank order; apart only when there is neither (with False, for
    the note that no turn holds the phrase).
    """
    checks = [c for c in (_phrase_check(ph) for ph in query.phrases) if c is not None]
    if not checks or not raw:
        return raw, None
    docs = bodies([h.doc_id for h in raw])
    shown: list[Hit] = []
    unseen: list[Hit] = []
    apart: list[Hit] = []
    for h in raw:
        doc = docs.get(h.doc_id) or {}
        text = body = (doc.get("body") or "").lower()
        # substring tests first (C speed): most candidates lack a word and need no regex
        found = [all(w in body for w in words) and pattern.search(body) is not None for pattern, words, _ in checks]
        if not all(found) and doc.get("seen"):
            # then the tool inputs and compaction summaries (a phrase never spans the two)
            seen = doc["seen"].lower()
            text = f"{body}\n{seen}"
            found = [f or (all(w in seen for w in words) and pattern.search(seen) is not None)
                     for f, (pattern, words, _) in zip(found, checks, strict=True)]
        if all(found):
            shown.append(replace(h, phrase_shown=True))
        elif any(not f and any(w not in text for w in indexed) for f, (_, _, indexed) in zip(found, checks, strict=True)):
            unseen.append(replace(h, phrase_shown=False))
        else:
            apart.append(replace(h, phrase_shown=False))
    if shown or unseen:
        return shown + unseen, bool(shown)
    return apart, False


def _phrase_check(phrase: str) -> tuple[re.Pattern[str], list[str], list[str]] | None:
    """A phrase's pattern (for lowercased text), its lowercased words, and those of them
    the index holds (not a stopword, a digit or one letter)."""
    words = re.findall(r"\w+", phrase.lower())
    pattern = phrase_pattern(phrase.lower())
    if pattern is None:
        return None
    tok = default_tokenizer()
    return re.compile(pattern.pattern), words, [w for w in words if tok.terms(w)]  # case-sensitive: the text is lowered


def group_by_session(
    raw: list[Hit], session_of: Callable[[int], str | None], turn_of: Callable[[Hit], object]
) -> tuple[list[Hit], dict[int, int]]:
    """The best document per session in rank order, and how many more turns each session matched."""
    best: dict[str, Hit] = {}
    turns: dict[str, set[object]] = {}
    for h in raw:
        sid = session_of(h.file_id)
        if sid is None:
            continue
        turns.setdefault(sid, set()).add(turn_of(h))
        best.setdefault(sid, h)
    firsts = list(best.values())
    more = {h.doc_id: len(turns[sid]) - 1 for sid, h in best.items()}
    return firsts, more


def with_more(hits: Sequence[SearchHit], more: dict[str, int]) -> list[SearchHit]:
    return [replace(h, more_in_session=more.get(h.session_id, 0)) for h in hits]


def group_hits(hits: Sequence[SearchHit]) -> list[SearchHit]:
    """One hit per session (its first, i.e. best) with how many more of its turns matched."""
    firsts: dict[str, SearchHit] = {}
    turns: dict[str, set[object]] = {}
    for h in hits:
        turns.setdefault(h.session_id, set()).add(h.turn_number)
        firsts.setdefault(h.session_id, h)
    return [replace(h, more_in_session=len(turns[sid]) - 1) for sid, h in firsts.items()]
