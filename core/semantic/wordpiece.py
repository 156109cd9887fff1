"""The model's tokenizer in plain Python: BERT's normaliser, pre-tokeniser and WordPiece.

It gives the ids Hugging Face ``tokenizers`` gives for the shipped ``tokenizer.json``
(uncased BERT: clean the text, pad CJK characters, strip accents, lowercase; split at
whitespace and punctuation; greedy longest-first WordPiece; ``[CLS] … [SEP]``, cut to
``max_tokens``). ``tests/test_wordpiece.py`` holds it to ``tokenizers`` on every code
point and on random and real texts.

Why not ``tokenizers`` itself: a process that embeds held it at ~13 MB (its library and
the parsed vocabulary) of the app's 250 MB budget, and a one-shot prose search paid
~40 ms to import it and parse the file (issue 35). Here the vocabulary is one dict, and a
text stops being read once it has ``max_tokens`` tokens (``tokenizers`` splits all of
it, then truncates).

Unicode. ``tokenizers`` classifies characters by Unicode 9 tables (a mark, a control or a
punctuation sign assigned since is a plain character to it) and lowercases by its Rust's
newer ones, so which characters are removed, made spaces or split off is not taken from
Python's ``unicodedata`` but from :mod:`core.semantic.bert_tables`, written by
``scripts/bert_tables.py`` asking ``tokenizers`` about every code point (the test asks
again, so a ``tokenizers`` that changes its tables fails it). Python gives only the
canonical decomposition (NFD) and the lowercase of the rest.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from typing import Any

import msgspec

from . import bert_tables

SPECIAL_TOKENS = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
WORD_MEMO = 50_000  # words remembered with their pieces (transcripts repeat most of theirs)
CHAR_MEMO = 65_536  # code points remembered (a text of random characters must not grow it without end)
_SPECIALS = re.compile("(" + "|".join(re.escape(t) for t in SPECIAL_TOKENS) + ")")  # (split keeps them)


def _within(cp: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    at = bisect_right(ranges, (cp, 0x10FFFF)) - 1
    return at >= 0 and ranges[at][0] <= cp <= ranges[at][1]


class _CharMap(dict[int, str]):
    """Code point → what it becomes before lowercasing: removed, a space, a word of its own
    (spaces around it) or itself; worked out at first sight (``str.translate`` asks)."""

    def __missing__(self, cp: int) -> str:
        ch = chr(cp)
        if _within(cp, bert_tables.GONE):
            out = ""
        elif _within(cp, bert_tables.SPACE):
            out = " "
        elif _within(cp, bert_tables.CJK) or _within(cp, bert_tables.PUNCT):
            out = f" {ch} "
        elif cp in bert_tables.LOWERED:
            out = chr(bert_tables.LOWERED[cp])
        elif ch == "Σ":  # ``tokenizers`` lowercases one character at a time: never a final "ς"
            out = "σ"
        else:
            out = ch
        if len(self) >= CHAR_MEMO:
            self.clear()  # (what is still used comes back at its next sight)
        self[cp] = out
        return out


_CHARS = _CharMap()
_COMPOSED = re.compile("([" + "".join(f"{chr(a)}-{chr(b)}" for a, b in bert_tables.COMPOSED) + "])")
for _cp in range(128):
    _CHARS[_cp]  # (ASCII known from the start)


def words(text: str) -> list[str]:
    """BERT's uncased normaliser and pre-tokeniser: clean, pad CJK characters, strip accents
    (NFD, then no nonspacing marks), lowercase; split at whitespace and around punctuation."""
    if not text.isascii():
        if _COMPOSED.search(text) is None:
            text = unicodedata.normalize("NFD", text)
        else:  # (one Dives Akuru vowel sign: tokenizers' decomposition tables lack it)
            text = "".join(p if _COMPOSED.fullmatch(p) else unicodedata.normalize("NFD", p) for p in _COMPOSED.split(text))
    return text.translate(_CHARS).lower().split()


class WordPiece:
    """Text → token ids, as the shipped ``tokenizer.json`` defines them."""

    def __init__(self, vocab: dict[str, int], *, max_tokens: int, max_word_chars: int = 100) -> None:
        self.vocab = vocab
        self.max_tokens = max_tokens
        self.max_word_chars = max_word_chars
        self.unk, self.cls, self.sep = vocab["[UNK]"], vocab["[CLS]"], vocab["[SEP]"]
        self._specials = {token: vocab[token] for token in SPECIAL_TOKENS}
        self._words: dict[str, tuple[int, ...]] = {}

    @classmethod
    def from_json(cls, text: str, *, max_tokens: int) -> WordPiece:
        """The tokenizer a ``tokenizer.json`` describes; ValueError when it is not uncased BERT WordPiece."""
        try:
            spec: Any = msgspec.json.decode(text)
            model, normalizer, pre = spec["model"], spec["normalizer"], spec["pre_tokenizer"]
            vocab = model["vocab"]
            shape_ok = (
                model.get("type") == "WordPiece" and model.get("continuing_subword_prefix") == "##"
                and model.get("unk_token") == "[UNK]" and normalizer.get("type") == "BertNormalizer"
                and normalizer.get("lowercase") is True and normalizer.get("clean_text") is True
                and normalizer.get("handle_chinese_chars") is True and normalizer.get("strip_accents") in (None, True)
                and pre.get("type") == "BertPreTokenizer" and isinstance(vocab, dict)
                and all(token in vocab for token in SPECIAL_TOKENS)
            )  # fmt: skip
            if not shape_ok:
                raise ValueError("not an uncased BERT WordPiece tokenizer")
            return cls(vocab, max_tokens=max_tokens, max_word_chars=int(model.get("max_input_chars_per_word", 100)))
        except (msgspec.DecodeError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"not a tokenizer file ({exc.__class__.__name__}: {str(exc)[:100]})") from None

    def encode(self, text: str) -> list[int]:
        """``[CLS]``, the text's pieces (at most ``max_tokens`` - 2), ``[SEP]``."""
        room = self.max_tokens - 2
        ids: list[int] = [self.cls]
        # text, then special token and text in turn: a special token written in the text is
        # its own id, as tokenizers matches them before normalising
        parts = _SPECIALS.split(text) if "[" in text else [text]
        for at, part in enumerate(parts):
            if at % 2:
                ids.append(self._specials[part])
                if len(ids) > room:
                    return [*ids[: room + 1], self.sep]
                continue
            for word in words(part):
                pieces = self._words.get(word)
                if pieces is None:
                    pieces = self._pieces(word)
                    if len(self._words) >= WORD_MEMO:
                        self._words.clear()
                    self._words[word] = pieces
                ids.extend(pieces)
                if len(ids) > room:
                    return [*ids[: room + 1], self.sep]
        ids.append(self.sep)
        return ids

    def _pieces(self, word: str) -> tuple[int, ...]:
        """Greedy longest-first WordPiece; the whole word is ``[UNK]`` when a piece is not in the vocabulary."""
        if len(word) > self.max_word_chars:
            return (self.unk,)
        vocab = self.vocab
        pieces: list[int] = []
        start = 0
        while start < len(word):
            end = len(word)
            while end > start:
                piece = vocab.get(word[start:end] if start == 0 else "##" + word[start:end])
                if piece is not None:
                    pieces.append(piece)
                    break
                end -= 1
            else:
                return (self.unk,)
            start = end
        return tuple(pieces)
