"""What the reader highlights and where its matches are: pure, no widgets.

Two kinds of marks share one highlight: the search query's words, matched with the
hit list's own matcher (:func:`core.query.snippets.matched_spans`: stems, identifier
parts, and the typed prefix through the hit's ``match_terms``), and a word found
with ``/`` in the reader (case-insensitive text, as ``less`` finds). A :class:`Match`
is one occurrence in one step of one turn; ``n``/``N`` walk the list in order. The
list is built off the UI thread for the query (in the loader) and on the UI thread
for a find, where a 2,000-turn session still takes a few tens of milliseconds.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import msgspec

from core.query.snippets import matched_spans

from .blocks import Block, Item

PROMPT = -1  # the "item" position of a turn's prompt


class Match(msgspec.Struct, frozen=True, gc=False):
    """The ``occurrence``-th match in step ``item`` (or the prompt) of block ``block``."""

    block: int
    item: int
    occurrence: int


class Marks:
    """The words to highlight now: the query's terms, or a found word (which wins)."""

    def __init__(
        self, terms: Sequence[str] = (), find: str = "", prefixes: Sequence[str] = (), parts: Sequence[str] = (),
        wholes: Sequence[str] = (),
    ) -> None:
        self.prefixes = tuple(prefixes)  # the word being typed: a token starting with it matches
        self.terms = list(dict.fromkeys([*terms, *self.prefixes]))
        # the parts of a typed identifier or path: a lone part is no match (``guard_fail``, not ``guard``)
        self.parts = frozenset(parts)
        self.wholes = tuple(wholes)  # (the identifiers as typed, lowercased: a token holding one matches)
        self.find = find
        self._find_re: re.Pattern[str] | None = None
        self.set_find(find)

    def set_find(self, text: str) -> None:
        self.find = text.strip()
        self._find_re = re.compile(re.escape(self.find), re.IGNORECASE) if self.find else None

    @property
    def active(self) -> bool:
        return bool(self.terms or self.find)

    def spans(self, text: str, painted: bool = False) -> list[tuple[int, int]]:
        """Character spans of ``text`` to highlight; ``painted``: a painted line (its edge
        tokens may be pieces of an identifier wrapped there)."""
        if self._find_re is not None:
            return [m.span() for m in self._find_re.finditer(text)]
        if self.terms:
            return matched_spans(text, self.terms, self.prefixes, self.parts, self.wholes, painted)
        return []

    def with_parts(self) -> Marks:
        """These marks with an identifier's parts matching alone too (a turn that holds only the parts)."""
        return Marks(self.terms, self.find, self.prefixes)


def query_marks(query: str, extra_terms: Sequence[str] = (), weighty: Sequence[str] | None = None) -> Marks:
    """The marks of a search ``query`` as the hit list matched it (typing: its last word a prefix):
    an identifier or path typed matches whole, not by its parts alone; ``weighty``: for a prose
    query, the terms worth marking (:mod:`core.query.weighty`), the others left plain."""
    from core.index.tokenize import default_tokenizer
    from core.query.syntax import parse

    parsed = parse(query, typing=True)
    if weighty is not None:
        keep = set(weighty)
        prefixes = [c.prefix for c in parsed.clauses if c.prefix and c.term in keep]
        return Marks([t for t in parsed.terms if t in keep], prefixes=prefixes)
    prefixes = [c.prefix for c in parsed.clauses if c.prefix]
    wholes: set[str] = set()
    parts: set[str] = set()
    typed: list[str] = []
    for word in re.findall(r'[^\s"]+', query):
        word = word.lstrip("-").rstrip("*").strip(".,;:!?")
        found = default_tokenizer().terms(word)
        wholes.update(found[:1])
        parts.update(found[1:])
        if len(found) > 1:
            typed.append(word.lower())
    return Marks([*parsed.terms, *extra_terms], prefixes=prefixes, parts=sorted(parts - wholes), wholes=typed)


def item_text(item: Item) -> str:
    """The text of a step as the reader shows it (one-liner and body together)."""
    if item.kind == "tool":
        return f"{item.summary}\n{item.result or ''}"
    if item.kind == "subagent":
        children = [c.text or c.summary for c in item.children] + [c.result or "" for c in item.children]
        return "\n".join([item.text, *children])
    return item.text


def block_matches(index: int, block: Block, marks: Marks) -> list[Match]:
    if block.kind not in ("turn", "preamble"):
        return []
    found = [Match(index, PROMPT, k) for k in range(len(marks.spans(block.prompt)))] if block.prompt else []
    for position, item in enumerate(block.items):
        text = item_text(item)
        if text:
            found.extend(Match(index, position, k) for k in range(len(marks.spans(text))))
    return found


def find_matches(blocks: Sequence[Block], marks: Marks) -> list[Match]:
    """Every match of ``marks`` in ``blocks``, in reading order."""
    if not marks.active:
        return []
    found: list[Match] = []
    for index, block in enumerate(blocks):
        found.extend(block_matches(index, block, marks))
    return found


def item_at(block: Block, sequence: int) -> int:
    """The step of ``block`` holding message ``sequence`` (:data:`PROMPT` for the prompt)."""
    best = PROMPT
    for position, item in enumerate(block.items):
        sequences = [item.sequence, item.result_sequence, *(c.sequence for c in item.children)]
        if sequence in sequences:
            return position
        if item.sequence <= sequence:
            best = position
    if block.prompt and sequence <= block.first_sequence:
        return PROMPT
    return best


def snippet_match(
    blocks: Sequence[Block], matches: Sequence[Match], marks: Marks, block: int, snippet: str
) -> int | None:
    """The match the hit list's ``snippet`` showed: in the step of ``block`` the snippet came
    from (:func:`core.query.landing.source_of`: the step holding it, or most of its words
    when it straddles two), the match inside the snippet's words carrying the most query
    terms (the first of equals); else the step's first match, else the first after it."""
    from core.index.tokenize import default_tokenizer
    from core.query.landing import source_of

    probe = " ".join(snippet.split()).strip("…").strip()
    if len(probe) < 8:
        return None
    source = blocks[block]
    steps = ([PROMPT] if source.prompt else []) + list(range(len(source.items)))
    texts = [source.prompt if step == PROMPT else item_text(source.items[step]) for step in steps]
    at = source_of(texts, probe, marks.terms)
    if at is None:
        return None
    item, flat = steps[at], " ".join(texts[at].split())
    start = flat.find(probe)
    if start >= 0:
        region = (start, start + len(probe))
    else:  # the snippet straddles two steps: the part of it in this one
        from difflib import SequenceMatcher

        common = SequenceMatcher(None, flat, probe, autojunk=False).find_longest_match(0, len(flat), 0, len(probe))
        region = (common.a, common.a + common.size)
    terms, expand = set(marks.terms), default_tokenizer().terms
    spans = marks.spans(flat)
    inside = [(k, a, b) for k, (a, b) in enumerate(spans) if region[0] <= a and b <= region[1]]
    if inside:
        k = max(inside, key=lambda s: (len(terms.intersection(expand(flat[s[1]:s[2]]))), -s[0]))[0]
        wanted = Match(block, item, k)
        found = next((i for i, m in enumerate(matches) if m == wanted), None)
        if found is not None:
            return found
    return first_match_at(matches, block, item)


def first_match_at(matches: Sequence[Match], block: int, item: int) -> int | None:
    """Index of the first match in ``block`` at or after step ``item`` (else the block's first)."""
    in_block = [i for i, m in enumerate(matches) if m.block == block]
    for i in in_block:
        if matches[i].item >= item:
            return i
    return in_block[0] if in_block else None


def next_match(matches: Sequence[Match], current: int | None, here: tuple[int, int] | None, step: int) -> int | None:
    """The match ``n`` (``step`` 1) or ``N`` (-1) goes to, wrapping around.

    From ``current`` when one is selected; else from ``here`` (block, item) — the
    first match after (or before) where the reader is.
    """
    if not matches:
        return None
    if current is not None:
        return (current + step) % len(matches)
    if here is None:
        return 0 if step > 0 else len(matches) - 1
    key = here
    if step > 0:
        return next((i for i, m in enumerate(matches) if (m.block, m.item) >= key), 0)
    before = [i for i, m in enumerate(matches) if (m.block, m.item) < key]
    return before[-1] if before else len(matches) - 1
