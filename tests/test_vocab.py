"""A segment's vocabulary (core/index/vocab.py): the words of its conversation text.

``words_of`` reads text by whitespace-separated chunk with a memo (a cold index
meets the same chunks over and over); it must give what the plain rule gives on
the whole text: the distinct matches of the word pattern in its lowercase.
"""

from __future__ import annotations

import itertools
import re

from hypothesis import given, settings
from hypothesis import strategies as st

from core.index import vocab

_PIECES = st.sampled_from(list("aB9_é.- \n\t\xa0ΣςΟ'İ日\u2028") + ["x" * 45, "ΟΔΟΣ", "ΟΔΟΣ'Α"])
_TEXT = st.lists(_PIECES, max_size=20).map("".join)


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(_TEXT, max_size=4))
def test_words_of_is_the_plain_rule_on_the_whole_text(texts: list[str]) -> None:
    expected: set[str] = set()
    for text in texts:
        expected.update(re.findall(r"[^\W\d][\w]{1,39}", text.lower()))
    saved = vocab.MAX_CHUNKS
    vocab.MAX_CHUNKS = 5  # the memo starting over changes nothing either
    try:
        assert vocab.words_of(texts) == expected
        assert vocab.words_of(texts) == expected
    finally:
        vocab.MAX_CHUNKS = saved


def test_words_of_examples() -> None:
    assert vocab.words_of(["Deploy the FooBar 9lives", "", "ΟΔΟΣ'Α ΟΔΟΣ"]) == {"deploy", "the", "foobar", "lives", "οδοσ", "οδος"}


_NAMES = itertools.count()
_WORDS = st.lists(st.text(alphabet="abcé日z_", min_size=1, max_size=6), max_size=30)


@settings(max_examples=300, deadline=None)
@given(per_segment=st.lists(_WORDS, min_size=1, max_size=3), prefix=st.text(alphabet="abcé日z_", max_size=3),
       limit=st.integers(1, 6))
def test_prefix_words_is_the_plain_rule_over_every_segment(per_segment: list[list[str]], prefix: str, limit: int) -> None:
    """Bisection in each segment's mapped bytes finds what a scan of the word lists finds:
    every word starting with the prefix (up to ``limit * 8`` a segment), shortest first."""
    # (names never reused: a process indexes each segment's words once, by name)
    segments = [Segment(f"seg-{next(_NAMES)}", vocab.encode(words)) for words in per_segment]
    found: set[str] = set()
    for words in per_segment:
        found.update(sorted(w for w in set(words) if w.startswith(prefix))[: limit * 8])
    expected = sorted(found, key=lambda w: (len(w), w))[:limit]
    assert vocab.prefix_words(segments, prefix, limit) == expected


class Segment:
    """What prefix_words reads of a segment: its name and its vocabulary bytes."""

    def __init__(self, name: str, words: object) -> None:
        self.name, self.vocab = name, words


def test_each_segment_is_read_as_far_as_eight_words_a_hit_shown() -> None:
    """A one-letter prefix stays fast in a big segment: past ``limit * 8`` words (in
    byte order) a segment is not read on, even for a shorter word further down."""
    eight_then_short = [f"aaaa{n}" for n in range(1, 9)] + ["ab"]
    assert vocab.prefix_words([Segment(f"seg-{next(_NAMES)}", vocab.encode(eight_then_short))], "a", 1) == ["aaaa1"]
    seven_then_short = [f"aaaa{n}" for n in range(1, 8)] + ["ab"]
    assert vocab.prefix_words([Segment(f"seg-{next(_NAMES)}", vocab.encode(seven_then_short))], "a", 1) == ["ab"]


@given(words=_WORDS)
def test_a_vocabulary_decodes_to_its_sorted_words(words: list[str]) -> None:
    """(What a merge reads back of the segments it merges.)"""
    assert vocab.decode(vocab.encode(words)) == (sorted(set(words)) if words else [])


def test_an_empty_or_missing_vocabulary_has_no_words() -> None:
    assert vocab.decode(None) == []
    assert vocab.decode(vocab.encode([])) == []
    assert vocab.decode(vocab.encode(["solo"])) == ["solo"]
