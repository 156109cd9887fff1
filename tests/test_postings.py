"""Term counts of a batch of turn documents (``core.index.postings.count_terms``).

What BM25 ranks on: for each document, each term's count in the main field and in
the tools field (told apart by the field bit), and each field's length in terms.
``count_terms`` gets them from one sort of packed keys; here they are checked
against a plain count of the tokenizer's own term ids, with every batch size (a
file of more than 16,384 passages is counted in batches and joined: ``_concat``).
"""

from __future__ import annotations

from collections import Counter

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import core.index.postings as postings
from core.index.document import TurnDoc
from core.index.postings import Postings, count_terms
from core.index.segment import TOOL_FIELD
from core.index.tokenize import Tokenizer

WORDS = ["deploy", "deploys", "flaky", "test", "the", "parseJSON", "src/app.py", "日本語", "x", "v2.0"]
TEXT = st.lists(st.sampled_from(WORDS), max_size=12).map(" ".join)


def _doc(n: int, main: str, tools: str) -> TurnDoc:
    return TurnDoc(turn=n, part=0, first_seq=n, last_seq=n, timestamp=None, main=main, tools=tools, body=main,
                   is_sidechain=False)


def _plain_count(docs: list[TurnDoc], tokenizer: Tokenizer) -> tuple[Counter, list[int], list[int]]:
    counts: Counter = Counter()
    for i, doc in enumerate(docs):
        counts.update((i, term) for term in tokenizer.term_ids(doc.main))
        counts.update((i, term + TOOL_FIELD) for term in tokenizer.term_ids(doc.tools))
    return (counts, [len(tokenizer.term_ids(d.main)) for d in docs], [len(tokenizer.term_ids(d.tools)) for d in docs])


@pytest.mark.parametrize("batch", [1, 2, 3, postings.MAX_BATCH_DOCS])
@settings(max_examples=60, deadline=None)
@given(fields=st.lists(st.tuples(TEXT, TEXT), max_size=7))
def test_counts_are_each_documents_terms_per_field(batch: int, fields: list[tuple[str, str]]) -> None:
    docs = [_doc(n, main, tools) for n, (main, tools) in enumerate(fields)]
    tokenizer = Tokenizer()
    saved, postings.MAX_BATCH_DOCS = postings.MAX_BATCH_DOCS, batch
    try:
        got = count_terms(docs, tokenizer)
    finally:
        postings.MAX_BATCH_DOCS = saved
    counts, main_lengths, tool_lengths = _plain_count(docs, tokenizer)
    assert Counter(dict(zip(zip(got.doc.tolist(), got.term.tolist()), got.tf.tolist()))) == counts
    assert len(got.doc) == len(counts)  # one row per (document, term)
    assert got.len_main.tolist() == main_lengths
    assert got.len_tool.tolist() == tool_lengths
    assert (got.doc.dtype, got.term.dtype, got.tf.dtype, got.len_main.dtype, got.len_tool.dtype) == (
        np.int32, np.int64, np.float32, np.float32, np.float32)


def test_an_empty_field_has_length_zero_and_no_terms() -> None:
    got = count_terms([_doc(0, "", "pytest failed"), _doc(1, "deploy", "")], Tokenizer())
    assert got.len_main.tolist() == [0, 1] and got.len_tool.tolist() == [2, 0]
    assert sorted(got.doc.tolist()) == [0, 0, 1]


def test_empty_postings_have_the_same_types_and_one_length_per_document() -> None:
    empty = Postings.empty(3)
    assert [len(a) for a in (empty.doc, empty.term, empty.tf)] == [0, 0, 0]
    assert empty.len_main.tolist() == [0, 0, 0] and empty.len_tool.tolist() == [0, 0, 0]
    assert (empty.doc.dtype, empty.term.dtype, empty.tf.dtype, empty.len_main.dtype, empty.len_tool.dtype) == (
        np.int32, np.int64, np.float32, np.float32, np.float32)
    assert len(Postings.empty().len_main) == 0
