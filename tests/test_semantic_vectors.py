"""The vector store without the model: doc ids read without the vectors, merges in float16 (issue 25)."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from core.semantic.embedder import DIM
from core.semantic.vectors import MERGE_FILES, VectorStore


def rows(ids: list[int], seed: int) -> np.ndarray:
    vecs = np.random.default_rng(seed).standard_normal((len(ids), DIM)).astype(np.float32)
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def test_doc_ids_match_load_and_name_the_damaged_file(tmp_path: Path):
    store = VectorStore(tmp_path)
    store.prepare()
    store.add(np.array([1, 2, 3]), rows([1, 2, 3], 0))
    store.add(np.array([7, 9]), rows([7, 9], 1))
    assert store.doc_ids()[0].tolist() == [1, 2, 3, 7, 9] == store.load().doc_ids.tolist()
    broken = store._names()[-1]
    data = (store.folder / broken).read_bytes()
    (store.folder / broken).write_bytes(data[:100] + bytes([data[100] ^ 0xFF]) + data[101:])
    fresh = VectorStore(tmp_path)  # another process: reads each file anew
    ids, damaged = fresh.doc_ids()
    assert ids.tolist() == [1, 2, 3] and damaged == [broken]
    assert fresh.load().doc_ids.tolist() == [1, 2, 3] and list(fresh.load().damaged) == [broken]
    assert fresh.remove_damaged() == [broken]
    ids, damaged = fresh.doc_ids()
    assert ids.tolist() == [1, 2, 3] and damaged == []


def test_a_merge_keeps_the_alive_vectors_as_stored_and_the_first_of_a_twice_embedded_doc(tmp_path: Path):
    store = VectorStore(tmp_path)
    store.prepare()
    written: dict[int, np.ndarray] = {}
    for n in range(MERGE_FILES + 1):  # one file more than a merge waits for
        ids = [n * 10 + k for k in range(3)] + ([5] if n == 3 else [])  # doc 5 again in a later file
        vecs = rows(ids, n)
        store.add(np.array(ids), vecs)
        for i, v in zip(ids, vecs.astype(np.float16), strict=True):
            written.setdefault(i, v)
    alive = np.array(sorted(i for i in written if i % 10 != 1))
    assert store.merge(alive)
    assert len(store._names()) == 1
    loaded = VectorStore(tmp_path).load()
    assert loaded.doc_ids.tolist() == alive.tolist()
    expected = np.stack([written[i] for i in alive.tolist()]).astype(np.float32)
    assert np.array_equal(loaded.matrix, expected)
    assert not store.merge(alive)  # one file, all alive: nothing to do


def test_a_writer_that_searched_still_merges(tmp_path: Path):
    """A long-lived writer loads the vectors for its searches; its merge must still see
    every file (the doc-id cache once stayed empty for files load() had read)."""
    store = VectorStore(tmp_path)
    store.prepare()
    for i in range(MERGE_FILES + 2):
        store.add(np.array([i]), rows([i], i))
    store.load()
    assert store.merge(np.arange(MERGE_FILES + 2))
    assert len(store._names()) == 1
    assert store.load().doc_ids.tolist() == list(range(MERGE_FILES + 2))
