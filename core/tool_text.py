"""How much of a long tool output the index keeps: head, tail and the telling lines.

A 20 KB test run or build log is mostly noise, but the line a person remembers
("error TS2769", "FAILED test_x", "Python 3.12.7") can sit anywhere in it. Keeping
only a head and a tail lost it (issue 14: six of 22 tool-output targets sat outside
a 400 + 200 character window). So a long output keeps a generous head and tail, and
from the middle every line that looks like an error, a traceback, a test failure, a
warning or a version, up to a budget. The result stays bounded, so the index stays
small (≤ 10% of transcript bytes) and tool noise stays in its down-weighted field.
"""

from __future__ import annotations

# Words that mark a line worth keeping from the middle of an output, wherever it is
# (found with str.find on the lowercased text: a regex alternation was 10x slower,
# and a cold index scans gigabytes of tool output).
SALIENT_WORDS = (
    "error", "exception", "traceback", "fail", "fatal", "panic", "warn", "denied", "not found",
    "cannot", "unable", "invalid", "unexpected", "assert", "deprecat", "timeout", "version",
    "passed", "exit code",
)
LINE_CHARS = 240  # of one salient line
SALIENT_CHARS = 4000  # of salient lines per output
PER_WORD_LINES = 24  # a log repeating one word 10,000 times is not read to the end


def salient_lines(text: str, budget: int = SALIENT_CHARS) -> str:
    """The telling lines of ``text`` in order (each cut to :data:`LINE_CHARS`), ≤ ``budget`` chars.

    Repeated lines are kept once: a log that prints the same warning 500 times
    says it once in the index.
    """
    if budget <= 0 or not text:
        return ""
    lowered = text.lower()
    starts: set[int] = set()
    for word in SALIENT_WORDS:
        pos = lowered.find(word)
        found = 0
        while pos >= 0 and found < PER_WORD_LINES:
            start = lowered.rfind("\n", 0, pos) + 1
            starts.add(start)
            found += 1
            end = lowered.find("\n", pos)
            if end < 0:
                break
            pos = lowered.find(word, end)
    kept: dict[str, None] = {}
    used = 0
    for start in sorted(starts):
        end = text.find("\n", start)
        line = text[start : end if end >= 0 else len(text)].strip()[:LINE_CHARS]
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
