"""Turn documents into term counts, vectorized so a parse worker stays in C loops.

Terms arrive as stable hashes (:func:`core.index.tokenize.term_id`), so documents from
any worker can be merged without a shared vocabulary. The tools field is told
apart by a bit above the hash (:data:`~core.index.segment.TOOL_FIELD`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .document import TurnDoc
from .segment import TOOL_FIELD
from .tokenize import Tokenizer

# A count key: the term id with its field bit in the low 49 bits, the document's
# position in the batch (below 2**14) above them.
DOC_SHIFT = 49
TERM_MASK = (np.int64(1) << DOC_SHIFT) - 1
MAX_BATCH_DOCS = 1 << (63 - DOC_SHIFT)


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
    """Term counts of every document in one sort: keys are ``doc << 49 | term``.

    (A sort per document cost as much as tokenizing: most documents are short.)
    """
    n = len(docs)
    if n > MAX_BATCH_DOCS:
        return _concat([count_terms(docs[i : i + MAX_BATCH_DOCS], tokenizer)
                        for i in range(0, n, MAX_BATCH_DOCS)], MAX_BATCH_DOCS)
    term_id_bytes = tokenizer.term_id_bytes
    main_ids: list[bytes] = []  # packed int64 term ids, a text at a time
    tool_ids: list[bytes] = []
    main_lengths = [0] * n  # terms per document, per field
    tool_lengths = [0] * n
    for i, doc in enumerate(docs):
        if doc.main:
            packed = term_id_bytes(doc.main)
            main_ids.append(packed)
            main_lengths[i] = len(packed) >> 3
        if doc.tools:
            packed = term_id_bytes(doc.tools)
            tool_ids.append(packed)
            tool_lengths[i] = len(packed) >> 3
    main_docs = np.array(main_lengths, dtype=np.int64)
    tool_docs = np.array(tool_lengths, dtype=np.int64)
    positions = np.arange(n, dtype=np.int64) << DOC_SHIFT
    keys = np.concatenate([
        np.frombuffer(b"".join(main_ids), dtype=np.int64) + np.repeat(positions, main_docs),
        np.frombuffer(b"".join(tool_ids), dtype=np.int64) + np.repeat(positions + TOOL_FIELD, tool_docs),
    ])
    unique, counts = np.unique(keys, return_counts=True)
    return Postings(
        (unique >> DOC_SHIFT).astype(np.int32),
        unique & TERM_MASK,
        counts.astype(np.float32),
        main_docs.astype(np.float32),
        tool_docs.astype(np.float32),
    )


def _concat(parts: list[Postings], step: int) -> Postings:
    return Postings(
        np.concatenate([p.doc + i * step for i, p in enumerate(parts)]).astype(np.int32),
        np.concatenate([p.term for p in parts]),
        np.concatenate([p.tf for p in parts]),
        np.concatenate([p.len_main for p in parts]),
        np.concatenate([p.len_tool for p in parts]),
    )
