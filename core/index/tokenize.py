"""A tokenizer for transcripts: prose, code identifiers, paths and versions.

Prose words are lowercased, stopwords dropped and stems taken (Snowball English via
PyStemmer), so "failing tests" meets "test failed". Compound tokens are kept whole
*and* split into parts: ``_is_cache_version_compatible`` yields
``is_cache_version_compatible`` plus ``cache``, ``version``, ``compat``;
``camelCase`` yields ``camelcase`` plus ``camel``, ``case``; ``path/to/file.py``
yields the path plus ``path``, ``file``, ``py``. A query for the exact identifier
then ranks above one that only shares its parts.

Expansion is cached per raw token: transcripts repeat the same words endlessly, so
nearly every token is a dict hit and tokenizing stays in C loops.
"""

from __future__ import annotations

import functools
import hashlib
import re
import sys
from array import array
from collections.abc import Callable
from functools import partial
from itertools import chain
from typing import Any

import Stemmer

# Bump when the output of the tokenizer changes: a cache built with another
# version is rebuilt (terms would not match).
TOKENIZER_VERSION = 4

# Terms are indexed by a stable 48-bit hash, so parse workers need no shared
# vocabulary and a query needs no lookup table (a collision between two of a
# million distinct terms has a chance of about 1 in 500).
TERM_BITS = 48

# \w: letters and digits of every script (café, naïve, Привет), joined by the
# punctuation of paths, versions and qualified names. (Possessive quantifiers: the
# same matches as ``\w+(?:[./\-:@#]\w+)*``, since a joiner is never a word character,
# without the backtracking records; 8% faster, 17% for the ASCII pattern.)
TOKEN_RE = re.compile(r"\w++(?:[./\-:@#]\w++)*+")
# The same tokens for ASCII-only text, which most tool output is, found ~30% faster.
ASCII_TOKEN_RE = re.compile(r"[A-Za-z0-9_]++(?:[./\-:@#][A-Za-z0-9_]++)*+")
# Scripts written without spaces: a run of these is indexed as overlapping bigrams.
CJK_CHARS = r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]"


@functools.cache
def _cjk_re() -> re.Pattern[str]:
    # compiled on first non-ASCII text: the wide class costs 4–9 ms to compile, a
    # tenth of a one-shot search that (typed in ASCII) never needs it
    return re.compile(CJK_CHARS)

# The punctuation a compound token is split at into its parts.
_SEPARATORS_TO_SPACE = str.maketrans("./-:@#_", "       ")
# Splits camelCase and HTTPServer, but keeps letter-digit runs whole (sha256, v2,
# a1b2c3): splitting those would make every hash or id share junk parts.
CAMEL_RE = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z0-9]+|[A-Z0-9]+")
MAX_TERM = 48
MAX_CHUNKS = 250_000  # distinct chunks a tokenizer remembers (~50 MB) before starting over

# English stopwords as bm25s 0.3.16 ships them (``bm25s.stopwords.STOPWORDS_EN``,
# MIT licence, (c) 2024 Xing Han Lu; the list is Lucene's classic English stop
# set). Copied, not imported: importing bm25s loads its whole package, and numba
# or jax with it when installed (seconds per CLI call, and threads before a fork).
# tests/test_tokenize.py checks the copy against bm25s.
STOPWORDS_EN = (
    "a", "an", "and", "are", "as", "at", "be", "but", "by", "for", "if", "in", "into", "is", "it", "no",
    "not", "of", "on", "or", "such", "that", "the", "their", "then", "there", "these", "they", "this",
    "to", "was", "will", "with",
)

STOPWORDS = frozenset(STOPWORDS_EN) | frozenset(
    {"i", "me", "my", "you", "your", "we", "our", "us", "im", "ive", "dont", "its", "can", "could", "would", "should", "did", "does",
     "do", "just", "also", "so", "like", "get", "got", "let", "lets", "was", "were", "been", "being", "have", "has", "had", "am", "is", "are"}
)


class _Memo(dict):
    """key → ``compute(key)``, computed on first sight and kept for the process.

    Transcripts repeat the same tokens endlessly, and compound tokens (paths,
    identifiers) share their parts, so every step of tokenizing is memoized.
    """

    __slots__ = ("_compute",)

    def __init__(self, compute: Callable[[str], Any]) -> None:
        super().__init__()
        self._compute = compute

    def __missing__(self, key: str) -> Any:
        value = self[key] = self._compute(key)
        return value


def _index_word(stem: Callable[[str], str], part: str) -> str | None:
    """The index term of one part of a token (None: a stopword or too short)."""
    lowered = part.lower()
    if lowered in STOPWORDS:
        return None
    if len(lowered) < 2:
        return None
    if lowered.isdigit():
        return lowered
    return stem(lowered)


def _expand(word: Callable[[str], str | None], raw: str) -> tuple[str, ...]:
    """The index terms of one raw token: the word, or a compound whole and by parts."""
    if len(raw) > MAX_TERM * 2:
        return ()
    if raw.isascii():
        if raw.isalnum() and (raw.islower() or raw.isdigit()):
            single = word(raw)  # a plain word: one part, nothing to split
            return (single,) if single else ()
        # The parts in one C call: no pattern matches a joiner or "_", and a piece's
        # camelCase look-ahead cannot see past one, so this is the split at the
        # separators and then of each piece (a lowercase or digit piece is one match);
        # most distinct tokens are compounds, and the loop below was most of their cost.
        parts: list[str] = CAMEL_RE.findall(raw)
    elif _cjk_re().search(raw):
        return _cjk_terms(raw)
    else:
        parts = []
        for piece in raw.translate(_SEPARATORS_TO_SPACE).split():
            if piece.islower() or piece.isdigit() or not piece.isascii():
                parts.append(piece)  # camelCase is an ASCII convention
            else:
                parts.extend(CAMEL_RE.findall(piece) or (piece,))
    if len(parts) <= 1:
        single = word(raw.strip("_"))
        return (single,) if single else ()
    whole = raw.strip("_.-:").lower()
    terms = [whole] if len(whole) <= MAX_TERM else []
    terms.extend(filter(None, map(word, parts)))
    return tuple(terms)


def term_id(term: str) -> int:
    digest = hashlib.blake2b(term.encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> (64 - TERM_BITS)


_ID_SHIFT_BYTES = (64 - TERM_BITS) // 8


def _term_id_packed(term: str) -> bytes:
    """:func:`term_id` as a native int64, from the digest's bytes without an int:
    shifting the little-endian digest right drops its first bytes."""
    digest = hashlib.blake2b(term.encode(), digest_size=8).digest()
    if sys.byteorder == "little":
        return digest[_ID_SHIFT_BYTES:] + bytes(_ID_SHIFT_BYTES)
    return term_id(term).to_bytes(8, "big")


def _cjk_terms(raw: str) -> tuple[str, ...]:
    """Bigrams of CJK runs (and the other pieces whole), so a query matches inside
    a sentence written without spaces."""
    cjk = _cjk_re()
    terms: list[str] = []
    run = ""
    for ch in raw.lower() + " ":
        if cjk.match(ch):
            run += ch
            continue
        if run:
            terms.extend(run[i : i + 2] for i in range(max(1, len(run) - 1)))
            run = ""
    rest = cjk.sub(" ", raw.lower()).split()
    terms.extend(w for w in rest if len(w) > 1 and w not in STOPWORDS)
    return tuple(terms)


class Tokenizer:
    """Turns text into index terms; one instance per process (its cache grows)."""

    version = TOKENIZER_VERSION

    def __init__(self) -> None:
        # (no cache of PyStemmer's own: the memo is one, and evicting from its
        # 10,000-word cache made each new word cost 3x the stemming itself)
        stem = Stemmer.Stemmer("english", 0).stemWord
        words = _Memo(partial(_index_word, stem))
        expand = partial(_expand, words.__getitem__)  # raw token → terms
        self._get = _Memo(expand).__getitem__  # (queries' terms)
        # raw token → its term ids packed as int64: the hot path of indexing joins
        # these bytes, with no Python int per id, into one numpy buffer
        # (``expand`` itself, not a memo of it: each raw token is expanded once here)
        packed = _Memo(_term_id_packed).__getitem__  # term → its id as native int64 bytes
        self._token_ids = _Memo(lambda raw: b"".join(map(packed, expand(raw)))).__getitem__
        self._chunks = _Memo(self._chunk_ids)  # whitespace-free chunk → packed term ids

    def term_id_bytes(self, text: str) -> bytes:
        """Hashed terms of ``text`` (see :func:`term_id`) in order, repeats kept, as
        native int64s packed in bytes (``numpy.frombuffer(..., numpy.int64)``).

        A token never spans whitespace, so the ids of a text are the ids of its
        whitespace-separated chunks in order; transcripts repeat their chunks
        ("the", "=", "error:", "12→import") as much as their tokens, and a chunk
        seen before is one dict hit instead of a regex scan (the regex was most
        of a cold index's tokenizing). Joining bytes rather than extending a list
        of ints took a tenth off tokenizing a cold index. The chunk memo is emptied
        when it grows past :data:`MAX_CHUNKS` (chunks are more varied than tokens).
        """
        chunks = self._chunks
        if len(chunks) > MAX_CHUNKS:
            chunks.clear()
        return b"".join(map(chunks.__getitem__, text.split()))

    def term_ids(self, text: str) -> list[int]:
        """:meth:`term_id_bytes` as a list of ints."""
        return array("q", self.term_id_bytes(text)).tolist()

    def _chunk_ids(self, chunk: str) -> bytes:
        tokens = (ASCII_TOKEN_RE if chunk.isascii() else TOKEN_RE).findall(chunk)
        return b"".join(map(self._token_ids, tokens))

    def terms(self, text: str) -> list[str]:
        return list(chain.from_iterable(map(self._get, TOKEN_RE.findall(text))))

    def query_terms(self, query: str) -> list[str]:
        """Unique terms of a query, in order."""
        return list(dict.fromkeys(self.terms(query)))


_default: Tokenizer | None = None


def default_tokenizer() -> Tokenizer:
    global _default
    if _default is None:
        _default = Tokenizer()
    return _default
