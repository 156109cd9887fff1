"""What hybrid recall embeds of one indexed passage (a turn, or a part of a long one).

A turn's conclusion is rarely in its first lines: a long agent turn states it in a
late answer message, which one vector of the prompt and first answer never saw
(issue 34). So a passage has several vectors, each a *slot*:

* slot 0: the prompt and the start of the answer, as before (what the turn is about);
* one slot per answer message longer than :data:`MIN_MESSAGE_CHARS`, the last
  :data:`MAX_MESSAGE_SLOTS` of them (where a turn's conclusion sits; a 500-message
  turn cannot fill the matrix).

A passage's cosine is its best slot's, and a hit found by meaning points at that
slot's message (its ``sequence``). Each slot carries a key, a hash of its text: the
same text (a repeated boilerplate answer, or the unchanged messages of a turn that
grew) is embedded once and its vector reused.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from core.index.document import decode_marks

MIN_MESSAGE_CHARS = 40  # shorter answer messages ("Done.", "Let me check.") say nothing of their own
MAX_MESSAGE_SLOTS = 8  # per passage, besides slot 0 (the study: more lost almost nothing)
SLOT_CHARS = 2_000  # enough text for the model's 128 tokens; the tokenizer need not read a whole answer
SLOT0_SEES = 400  # characters of a body that slot 0's 128 tokens surely cover (a message inside them is not embedded again)


@dataclass(frozen=True, slots=True)
class Slot:
    """One text of a passage to embed: its message's sequence and the key of its text."""

    sequence: int
    text: str
    key: int


def text_key(text: str) -> int:
    """A 63-bit hash of a slot's text (fits int64; equal texts share one vector)."""
    return int.from_bytes(hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=8).digest(), "little") >> 1


def slots(body: str | None, marks: str | None, first_seq: int) -> list[Slot]:
    """The slots of one passage, from its stored body and answer marks (:mod:`core.index.document`)."""
    body = body or ""
    if not body.strip():
        return []
    head = body[:SLOT_CHARS]
    out = [Slot(first_seq, head, text_key(head))]
    pairs = decode_marks(marks)
    messages: list[Slot] = []
    for i, (seq, start) in enumerate(pairs):
        end = pairs[i + 1][1] - 1 if i + 1 < len(pairs) else len(body)
        text = body[start:end].strip()[:SLOT_CHARS]
        if len(text) <= MIN_MESSAGE_CHARS or start + len(text) <= SLOT0_SEES:
            continue  # too short to say anything, or already inside the start slot 0 embeds
        messages.append(Slot(seq, text, text_key(text)))
    return out + messages[-MAX_MESSAGE_SLOTS:]
