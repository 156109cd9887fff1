"""Turn documents into term counts, vectorized so a parse worker stays in C loops.

Terms arrive as stable hashes (:func:`core.tokenize.term_id`), so documents from
any worker can be merged without a shared vocabulary. The tools field is told
apart by a bit above the hash (:data:`~core.index.segment.TOOL_FIELD`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..tokenize import Tokenizer
from ..turns import TurnDoc
from .segment import TOOL_FIELD


@dataclass(frozen=True, slots=True)
class Postings:
    """Term counts of a batch of documents."""

    doc: np.ndarray  # int32: index into the batch's documents
    term: np.ndarray  # int64: term id, + TOOL_FIELD for the tools field
    tf: np.ndarray  # float32
    len_main: np.ndarray  # float32 per document
    len_tool: np.ndarray

    @classmethod
    def empty(cls, n_docs: int = 0) -> Postings:
        zero = np.zeros(0)
        return cls(zero.astype(np.int32), zero.astype(np.int64), zero.astype(np.float32),
                   np.zeros(n_docs, np.float32), np.zeros(n_docs, np.float32))


def count_terms(docs: Sequence[TurnDoc], tokenizer: Tokenizer) -> Postings:
    n = len(docs)
    len_main = np.zeros(n, dtype=np.float32)
    len_tool = np.zeros(n, dtype=np.float32)
    doc_parts: list[np.ndarray] = []
    term_parts: list[np.ndarray] = []
    tf_parts: list[np.ndarray] = []
    for i, doc in enumerate(docs):
        main = tokenizer.term_ids(doc.main) if doc.main else []
        tools = tokenizer.term_ids(doc.tools) if doc.tools else []
        len_main[i] = len(main)
        len_tool[i] = len(tools)
        if not main and not tools:
            continue
        ids = np.fromiter(main, dtype=np.int64, count=len(main))
        if tools:
            ids = np.concatenate([ids, np.fromiter(tools, dtype=np.int64, count=len(tools)) + TOOL_FIELD])
        unique, counts = np.unique(ids, return_counts=True)
        term_parts.append(unique)
        tf_parts.append(counts.astype(np.float32))
        doc_parts.append(np.full(unique.shape[0], i, dtype=np.int32))
    if not term_parts:
        return Postings.empty(n)
    return Postings(np.concatenate(doc_parts), np.concatenate(term_parts), np.concatenate(tf_parts), len_main, len_tool)
