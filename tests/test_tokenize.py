"""The tokenizer's terms: index and query sides must agree, and cached fast paths
must give exactly what the general rules give."""

from __future__ import annotations

import pytest
import Stemmer
from hypothesis import given, settings
from hypothesis import strategies as st

from core.index.tokenize import MAX_TERM, Tokenizer, default_tokenizer, term_id

stem = Stemmer.Stemmer("english").stemWord


@pytest.mark.parametrize(
    ("text", "terms"),
    [
        ("failing tests", ["fail", "test"]),
        ("the and of x", []),
        ("_is_cache_version_compatible", ["is_cache_version_compatible", "cach", "version", "compat"]),
        ("camelCase HTTPServer", ["camelcase", "camel", "case", "httpserver", "http", "server"]),
        ("path/to/file.py", ["path/to/file.py", "path", "file", "py"]),
        # letter-digit runs stay whole; an upper-case run with digits splits like camelCase
        ("sha256 a1b2c3 A1B STIE6794 157641", ["sha256", "a1b2c3", "a1b", "a1", "stie6794", "157641"]),
        ("café_Naïve Привет", ["café_naïve", "café", "naïv", "привет"]),
        ("日本語のテキスト", ["日本", "本語", "語の", "のテ", "テキ", "キス", "スト"]),
        ("v2.0.1", ["v2.0.1", "v2"]),
        ("__init__ foo__bar", ["init", "foo__bar", "foo", "bar"]),
        # a word or compound that starts or ends with an X: only "_" (and ".-:") are stripped
        ("XML XMLHttpRequest", ["xml", "xmlhttprequest", "xml", "http", "request"]),
        # CJK: a lone character is a term; two runs apart are bigrammed apart; the rest of
        # the token is lowered, its one-letter words and stopwords dropped
        ("中", ["中"]),
        ("中文abc日本", ["中文", "日本", "abc"]),
        ("日本x中ok The Kit", ["日本", "中", "ok", "kit"]),
    ],
)
def test_terms(text: str, terms: list[str]) -> None:
    assert Tokenizer().terms(text) == terms


def test_tokens_up_to_twice_the_longest_term_are_read_longer_ones_skipped() -> None:
    """(A 96-character token is a long identifier; past that it is a blob: base64, a hash dump.)"""
    tokenizer = Tokenizer()
    assert tokenizer.terms("a" * MAX_TERM * 2) == [stem("a" * MAX_TERM * 2)]
    assert tokenizer.terms("a" * (MAX_TERM * 2 + 1)) == []
    parts = "_".join(["part"] * 9)  # 44 characters: the compound whole is a term up to MAX_TERM (48)
    assert Tokenizer().terms(parts + "_abc")[0] == parts + "_abc"
    assert Tokenizer().terms(parts + "_abcd")[0] == "part"


def test_the_default_tokenizer_is_one_for_the_process(monkeypatch) -> None:
    import core.index.tokenize as tokenize

    monkeypatch.setattr(tokenize, "_default", None)  # (as a fresh process has it)
    first = default_tokenizer()
    assert isinstance(first, Tokenizer) and default_tokenizer() is first


def test_term_ids_are_the_hashes_of_the_terms_in_order() -> None:
    text = "Deploying parseJSON to café_Naïve/lib.ex failed twice: deploying 日本語 again"
    tokenizer = Tokenizer()
    expected = [term_id(term) for term in tokenizer.terms(text)]
    # twice: the second call is served from the caches
    assert tokenizer.term_ids(text) == expected
    assert tokenizer.term_ids(text) == expected
    assert Tokenizer().term_ids(text) == expected


def test_vendored_stopwords_are_bm25s_list():
    from bm25s.stopwords import STOPWORDS_EN as upstream

    from core.index.tokenize import STOPWORDS_EN

    assert tuple(STOPWORDS_EN) == tuple(upstream)


_TEXT = st.text(
    alphabet=st.sampled_from(list("aZé_9./-:@# \t\n\x1f\xa0→…ΣςΟ日本İ'") + ["\u2028", "\U0001f4cb"]), max_size=80
)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT)
def test_the_token_patterns_match_as_the_plain_ones(text: str) -> None:
    """TOKEN_RE and ASCII_TOKEN_RE use possessive quantifiers for speed: same tokens."""
    import re

    from core.index.tokenize import ASCII_TOKEN_RE, TOKEN_RE

    assert TOKEN_RE.findall(text) == re.findall(r"\w+(?:[./\-:@#]\w+)*", text)
    ascii_text = text.encode("ascii", "replace").decode()
    assert ASCII_TOKEN_RE.findall(ascii_text) == re.findall(r"[A-Za-z0-9_]+(?:[./\-:@#][A-Za-z0-9_]+)*", ascii_text)


@settings(max_examples=300, deadline=None)
@given(texts=st.lists(_TEXT, min_size=1, max_size=4))
def test_term_ids_by_chunk_are_the_hashes_of_the_terms(texts: list[str]) -> None:
    """term_ids reads a text by whitespace-separated chunks (memoized): the same ids,
    in order, as tokenizing the whole text, also once the chunk memo starts over."""
    import core.index.tokenize as tokenize

    tokenizer = Tokenizer()
    saved = tokenize.MAX_CHUNKS
    tokenize.MAX_CHUNKS = 3
    try:
        for text in texts + texts:
            assert tokenizer.term_ids(text) == [term_id(term) for term in tokenizer.terms(text)]
    finally:
        tokenize.MAX_CHUNKS = saved
