"""Per-segment vocabularies, so ``prefix*`` (and the word being typed) can expand.

Terms are indexed as hashes (no shared vocabulary between parse workers), so a
prefix cannot be looked up among them. Each segment therefore also stores the
sorted, distinct lowercase words of its documents' conversation text (the
``main`` field: prompts, answers, tool names) as one ``\\n``-joined byte array.
A prefix is found by bisection in each segment's list and expanded to those
words' terms. Only plain words are kept (letters, digits, ``_``; 2–40
characters): paths and hashes are looked up whole, not typed a letter at a time.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_left
from collections.abc import Iterable, Sequence
from itertools import chain
from typing import Any

import numpy as np

_WORD = re.compile(r"[^\W\d][\w]{1,39}")
_cache: dict[tuple[str, int], _Words] = {}
_lock = threading.Lock()
MAX_CHUNKS = 100_000  # whitespace-free chunks whose words are remembered (then start over)


class _ChunkWords(dict):
    def __missing__(self, chunk: str) -> tuple[str, ...]:
        words = self[chunk] = tuple(_WORD.findall(chunk.lower()))
        return words


_chunk_words = _ChunkWords()


def words_of(texts: Iterable[str]) -> set[str]:
    """The distinct words of ``texts``, lowercased.

    Read by whitespace-separated chunk, each memoized: a word never spans
    whitespace (nor does lowercasing look across it), and a cold index meets the
    same chunks over and over.
    """
    found: set[str] = set()
    memo = _chunk_words
    if len(memo) > MAX_CHUNKS:
        memo.clear()
    for text in texts:
        if text:
            found.update(chain.from_iterable(map(memo.__getitem__, set(text.split()))))
    return found


def encode(words: Iterable[str]) -> np.ndarray:
    return np.frombuffer("\n".join(sorted(set(words))).encode(), dtype=np.uint8).copy()


def decode(array: np.ndarray) -> list[str]:
    if array is None or array.shape[0] == 0:
        return []
    return bytes(np.asarray(array)).decode().split("\n")


class _Words:
    """A segment's sorted words, left in its mapped bytes: where each starts and ends.

    (A Python str per word held 17 MB in a long-lived process on the 1.8 GB bench,
    every segment's list decoded by the first one-letter prefix typed; the offsets
    hold 8 bytes a word.)
    """

    __slots__ = ("data", "starts", "ends")

    def __init__(self, data: np.ndarray) -> None:
        self.data = data
        if data is None or data.shape[0] == 0:
            self.starts = self.ends = np.zeros(0, dtype=np.int32)
            return
        newlines = np.flatnonzero(np.asarray(data) == 10).astype(np.int32)
        self.starts = np.concatenate([np.zeros(1, dtype=np.int32), newlines + 1])
        self.ends = np.concatenate([newlines, np.array([data.shape[0]], dtype=np.int32)])

    def __len__(self) -> int:
        return int(self.starts.shape[0])

    def word(self, i: int) -> bytes:
        return self.data[self.starts[i] : self.ends[i]].tobytes()


def _words(segment: Any) -> _Words:
    """A segment's word list, indexed once per process (segments never change)."""
    key = (segment.name, int(segment.vocab.shape[0]))
    got = _cache.get(key)
    if got is None:
        got = _Words(segment.vocab)
        with _lock:
            if len(_cache) > 256:
                _cache.clear()
            _cache[key] = got
    return got


def prefix_words(segments: Sequence[Any], prefix: str, limit: int) -> list[str]:
    """Up to ``limit`` words starting with ``prefix`` across ``segments``, shortest first.

    (Bisection over the UTF-8 bytes: their order is the words' code point order.)
    """
    wanted = prefix.encode()
    found: set[bytes] = set()
    for seg in segments:
        words = _words(seg)
        n = len(words)
        i = bisect_left(range(n), wanted, key=words.word)
        taken = 0
        while i < n and taken < limit * 8:
            word = words.word(i)
            if not word.startswith(wanted):
                break
            found.add(word)
            i += 1
            taken += 1
    return sorted((w.decode() for w in found), key=lambda w: (len(w), w))[:limit]
