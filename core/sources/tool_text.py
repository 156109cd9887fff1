"""How much of a long tool output the index keeps: head, tail and the telling lines.

A 20 KB test run or build log is mostly noise, but the line a person remembers
("error TS2769", "FAILED test_x", "Python 3.12.7") can sit anywhere in it. Keeping
only a head and a tail lost it (issue 14: six of 22 tool-output targets sat outside
a 400 + 200 character window). So a long output keeps a generous head and tail, and
from the middle every line that looks like an error, a traceback, a test failure, a
warning or a version, up to a budget. The result stays bounded, so the index stays
small (≤ 10% of transcript bytes) and tool noise stays in its down-weighted field.

The rule (pinned against a plain line-by-line reference in tests/test_tool_text.py):
a line is telling when its lowercase holds one of :data:`SALIENT_WORDS` and it is
among the first :data:`PER_WORD_LINES` lines holding one of its words; telling lines
are kept in order, stripped, cut and once each, until the budget is spent.
"""

from __future__ import annotations

import numpy as np

# Words that mark a line worth keeping from the middle of an output, wherever it is.
SALIENT_WORDS = (
    "error", "exception", "traceback", "fail", "fatal", "panic", "warn", "denied", "not found",
    "cannot", "unable", "invalid", "unexpected", "assert", "deprecat", "timeout", "version",
    "passed", "exit code",
)
LINE_CHARS = 240  # of one salient line
SALIENT_CHARS = 4000  # of salient lines per output
PER_WORD_LINES = 24  # a log repeating one word 10,000 times is not read to the end

# How the lines are found. A cold index scans gigabytes of tool output (twice: the
# adapter bounds each output, the index bounds that again), and 19 ``str.find``
# passes over every output were a sixth of its time (a regex alternation is slower
# still). Instead one vectorized pass hashes the 4 bytes at every position of the
# lowercased UTF-8 text and looks the hash up in a table that flags each word's
# *anchor*: 4 of its letters chosen to be rare in tool output (only places where a
# word may start are then checked, a handful per output). Every occurrence of a word
# contains its anchor, so no line is missed; a flagged place that is not the word
# costs one check.
_ANCHORS = {
    "error": "erro", "exception": "epti", "traceback": "aceb", "fail": "fail", "fatal": "fata",
    "panic": "pani", "warn": "warn", "denied": "nied", "not found": "ot f", "cannot": "cann",
    "unable": "unab", "invalid": "nval", "unexpected": "unex", "assert": "sser", "deprecat": "depr",
    "timeout": "meou", "version": "rsio", "passed": "ssed", "exit code": "it c",
}
_MULT = 0x9E3779B1  # Fibonacci hashing: the top 16 bits of code * _MULT spread the anchors


def _code(four: bytes) -> int:
    return int.from_bytes(four, "little")


def _slot(code: int) -> int:
    return ((code * _MULT) & 0xFFFFFFFF) >> 16


# anchor code → (word's index, anchor's offset in the word, the word)
_BY_CODE = {
    _code(_ANCHORS[word].encode()): (i, word.index(_ANCHORS[word]), word.encode())
    for i, word in enumerate(SALIENT_WORDS)
}
_TABLE = np.zeros(1 << 16, dtype=bool)
_TABLE[[_slot(code) for code in _BY_CODE]] = True
_MULT_U32 = np.uint32(_MULT)
_U4 = np.dtype("<u4")

# Characters whose lowercase is not one character of the same kind: lowercasing the
# UTF-8 bytes (ASCII letters only) agrees with ``str.lower`` on where the words are
# for every other text. (İ lowers to two characters, the Kelvin sign to "k".)
_NOT_BYTE_LOWERABLE = ("\u0130", "\u212a")


def salient_lines(text: str, budget: int = SALIENT_CHARS) -> str:
    """The telling lines of ``text`` in order (each cut to :data:`LINE_CHARS`), ≤ ``budget`` chars.

    Repeated lines are kept once: a log that prints the same warning 500 times
    says it once in the index.
    """
    if budget <= 0 or not text:
        return ""
    if text.isascii():
        data = text.encode("ascii")
    elif _NOT_BYTE_LOWERABLE[0] in text or _NOT_BYTE_LOWERABLE[1] in text:
        return _by_lines(text, budget)
    else:
        data = text.encode("utf-8", "surrogatepass")  # (a lone surrogate comes back as it was)
    return _scan(data, budget)


def _scan(data: bytes, budget: int) -> str:
    """:func:`salient_lines` over UTF-8 bytes (see the note on anchors above)."""
    lowered = data.lower()
    n = len(lowered)
    if n < 4:
        return ""
    window = np.ndarray((n - 3,), dtype=_U4, buffer=lowered, strides=(1,))  # the 4 bytes at each position
    hashed = window * _MULT_U32
    hashed >>= 16
    flagged = _TABLE.take(hashed).nonzero()[0]
    if not flagged.size:
        return ""
    by_code = _BY_CODE
    find, rfind, startswith = lowered.find, lowered.rfind, lowered.startswith
    counts = [0] * len(SALIENT_WORDS)  # lines seen so far holding each word
    kept: dict[str, None] = {}
    used = 0
    start = end = -1  # the line being looked at: data[start:end]
    on_line = 0  # bit mask of the words found on it
    for at, code in zip(flagged.tolist(), window[flagged].tolist()):
        anchor = by_code.get(code)
        if anchor is None:
            continue  # another 4 bytes with the same hash
        index, offset, word = anchor
        if counts[index] >= PER_WORD_LINES:
            continue  # this word can make no more lines telling
        if at >= end:  # on a new line: the one before is done
            if on_line:
                line = data[start:end].decode("utf-8", "surrogatepass").strip()[:LINE_CHARS]
                if line and line not in kept:
                    kept[line] = None
                    used += len(line) + 1
                    if used >= budget:
                        return "\n".join(kept)[:budget]
            start = rfind(b"\n", 0, at) + 1
            end = find(b"\n", at)
            if end < 0:
                end = n
            on_line = 0
        bit = 1 << index
        if on_line & bit or at < offset or not startswith(word, at - offset):
            continue
        on_line |= bit
        counts[index] += 1
    if on_line:
        line = data[start:end].decode("utf-8", "surrogatepass").strip()[:LINE_CHARS]
        if line:
            kept[line] = None
    return "\n".join(kept)[:budget]


def _by_lines(text: str, budget: int) -> str:
    """:func:`salient_lines` one line at a time (for the rare text the byte scan cannot read)."""
    counts = dict.fromkeys(SALIENT_WORDS, 0)
    kept: dict[str, None] = {}
    used = 0
    for raw in text.split("\n"):
        lowered = raw.lower()
        found = [word for word in SALIENT_WORDS if word in lowered]
        if not any(counts[word] < PER_WORD_LINES for word in found):
            continue
        for word in found:
            counts[word] += 1
        line = raw.strip()[:LINE_CHARS]
        if line and line not in kept:
            kept[line] = None
            used += len(line) + 1
            if used >= budget:
                break
    return "\n".join(kept)[:budget]


def bounded(text: str, head: int, tail: int, budget: int = SALIENT_CHARS) -> str:
    """``text`` if short; else its head, the salient lines of its middle, and its tail."""
    if len(text) <= head + tail + budget:
        return text
    middle = salient_lines(text[head : len(text) - tail], budget)
    return f"{text[:head]}\n…\n{middle}\n…\n{text[-tail:]}" if middle else f"{text[:head]}\n…\n{text[-tail:]}"
