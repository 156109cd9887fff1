"""Turn documents into term counts, vectorized so a parse worker stays in C loops.

One call handles all documents of a file: every term goes through a dict that
hands out local ids on first sight, and ``np.unique`` over (doc, term) keys gives
the term frequencies. The writer later maps local ids to global ones through the
(much smaller) list of unique terms.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..tokenize import Tokenizer
from ..turns import TurnDoc

TOOLS_FLAG = np.int64(1) << 31  # marks a local term id as belonging to the tools field


class _LocalVocab(dict):
    __slots__ = ()

    def __missing__(self, term: str) -> int:
        value = len(self)
        self[term] = value
        return value


@dataclass(frozen=True, slots=True)
class Postings:
    """Term counts of a batch of documents, with file-local term ids."""

    vocab: list[str]
    doc: np.ndarray  # int32: index into the batch's documents
    term: np.ndarray  # int64: local term id, | TOOLS_FLAG for the tools field
    tf: np.ndarray  # float32
    len_main: np.ndarray  # float32 per document
    len_tool: np.ndarray

    @classmethod
    def empty(cls) -> Postings:
        z = np.zeros(0)
        return cls([], z.astype(np.int32), z.astype(np.int64), z.astype(np.float32), z.astype(np.float32), z.astype(np.float32))


def count_terms(docs: Sequence[TurnDoc], tokenizer: Tokenizer) -> Postings:
    if not docs:
        return Postings.empty()
    vocab = _LocalVocab()
    lookup = vocab.__getitem__
    doc_idx: list[np.ndarray] = []
    term_ids: list[np.ndarray] = []
    len_main = np.zeros(len(docs), dtype=np.float32)
    len_tool = np.zeros(len(docs), dtype=np.float32)
    for i, doc in enumerate(docs):
        for text, lengths, flag in ((doc.main, len_main, 0), (doc.tools, len_tool, TOOLS_FLAG)):
            if not text:
                continue
            terms = tokenizer.terms(text)
            if not terms:
                continue
            ids = np.fromiter(map(lookup, terms), dtype=np.int64, count=len(terms))
            if flag:
                ids |= flag
            term_ids.append(ids)
            doc_idx.append(np.full(len(terms), i, dtype=np.int64))
            lengths[i] = len(terms)
    if not term_ids:
        return Postings(list(vocab), *(Postings.empty().__getattribute__(k) for k in ("doc", "term", "tf")), len_main, len_tool)
    all_terms = np.concatenate(term_ids)
    all_docs = np.concatenate(doc_idx)
    keys = (all_docs << 32) | all_terms
    unique, counts = np.unique(keys, return_counts=True)
    return Postings(
        vocab=list(vocab),
        doc=(unique >> 32).astype(np.int32),
        term=unique & ((np.int64(1) << 32) - 1),
        tf=counts.astype(np.float32),
        len_main=len_main,
        len_tool=len_tool,
    )
