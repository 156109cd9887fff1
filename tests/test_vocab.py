"""A segment's vocabulary (core/index/vocab.py): the words of its conversation text.

``words_of`` reads text by whitespace-separated chunk with a memo (a cold index
meets the same chunks over and over); it must give what the plain rule gives on
the whole text: the distinct matches of the word pattern in its lowercase.
"""

from __future__ import annotations

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
