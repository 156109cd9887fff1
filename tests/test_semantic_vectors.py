"""The vector store without the model: slot rows per passage, doc ids read without the vectors,
merges in float16 (issue 25), a passage's best slot (issue 34), foreign files refused (issue 37)."""

from __future__ import annotations

import io
import tracemalloc
import zipfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from core.semantic.embedder import DIM
from core.semantic.passages import MAX_MESSAGE_SLOTS, MIN_MESSAGE_CHARS, slots, text_key
from core.semantic.vectors import MERGE_FILES, Vectors, VectorStore, read_file


def rows(ids: list[int], seed: int) -> np.ndarray:
    vecs = np.random.default_rng(seed).standard_normal((len(ids), DIM)).astype(np.float32)
    return vecs / np.linalg.norm(vecs, axis=1, keepdims=True)


def add(store: VectorStore, ids: list[int], vecs: np.ndarray, seqs: list[int] | None = None) -> None:
    """One file with one row (slot) per entry of ``ids`` (a doc id repeated: several slots)."""
    seqs = seqs if seqs is not None else list(range(len(ids)))
    store.add(np.array(ids), np.array(seqs), np.array([text_key(f"{i}/{s}") for i, s in zip(ids, seqs)]), vecs)


def test_doc_ids_match_load_and_name_the_damaged_file(tmp_path: Path):
    store = VectorStore(tmp_path)
    store.prepare()
    add(store, [1, 2, 3], rows([1, 2, 3], 0))
    add(store, [7, 9], rows([7, 9], 1))
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


def test_a_passage_scores_its_best_slot_and_points_at_its_message(tmp_path: Path):
    store = VectorStore(tmp_path)
    store.prepare()
    vecs = rows([0, 1, 2, 3], 3)
    add(store, [5, 5, 5, 8], vecs, seqs=[10, 14, 19, 30])  # passage 5: three slots; passage 8: one
    loaded = store.load()
    assert loaded.doc_ids.tolist() == [5, 8] and loaded.rows == 4
    query = vecs[2]  # the third slot of passage 5 (its message 19)
    row_sims = loaded.row_cosines(query)
    best = loaded.best(row_sims)
    assert best[0] == pytest.approx(1.0, abs=1e-2) and best[0] == row_sims[:3].max()
    assert best[1] == pytest.approx(float(vecs[3].astype(np.float16).astype(np.float32) @ query), abs=1e-3)
    assert loaded.best_sequence(5, row_sims) == 19
    assert loaded.best_sequence(8, row_sims) is None  # its start slot: no one message (the snippet decides)
    assert loaded.best_sequence(5, loaded.row_cosines(vecs[0])) is None
    assert loaded.best_sequence(6, row_sims) is None


def _load_and_its_peak(store: VectorStore) -> tuple[Vectors, int]:
    """A load, and the most bytes Python held at once during it."""
    tracemalloc.start()
    try:
        return store.load(), tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_a_load_after_the_writer_added_a_file_reads_that_file_alone(tmp_path: Path):
    """A long-lived process searches while its background job writes a file every few seconds:
    each load joined every file read again into a new matrix (twice the vectors held at once,
    22 MB at 1.8 GB). Now the files already read are kept as they are and only the new one is read."""
    store = VectorStore(tmp_path)
    store.prepare()
    written = []
    for n in range(10):
        written.append(rows(list(range(200)), n))
        add(store, list(range(n * 200, n * 200 + 200)), written[-1])
    before = store.load()
    total = sum(b.nbytes for b in before.blocks)
    new = rows([1, 2], 99)
    add(store, [5000, 5001], new)
    after, peak = _load_and_its_peak(store)
    assert peak < total / 4, f"{peak} bytes held to add 2 rows to {total}"
    assert len(after.blocks) == 11 and all(a is b for a, b in zip(after.blocks, before.blocks))
    assert after.doc_ids.tolist() == list(range(2000)) + [5000, 5001]
    cosines = after.row_cosines(new[1])  # and the rows are all there, the new ones scored as themselves
    assert cosines.shape == (2002,) and float(cosines[-1]) == pytest.approx(1.0, abs=1e-2)
    assert np.allclose(cosines[:2000], np.concatenate(written).astype(np.float16).astype(np.float32) @ new[1], atol=2e-3)


def test_a_search_holds_each_row_in_half_of_float16s_bytes_and_scores_it_as_stored(tmp_path: Path):
    """In memory a row is int8 with its own step: half of float16's bytes (15 MB instead of 29 at 1.8 GB). A big
    (merged) file is converted a chunk at a time, so its float16 matrix is never held whole either."""
    store = VectorStore(tmp_path)
    store.prepare()
    vecs = rows(list(range(20_000)), 7)
    add(store, list(range(20_000)), vecs)
    as_stored = vecs.astype(np.float16)
    loaded, peak = _load_and_its_peak(store)
    assert sum(a.nbytes for a in (*loaded.blocks, *loaded.steps)) < 0.51 * as_stored.nbytes
    assert peak < 0.8 * as_stored.nbytes, f"{peak} bytes to load {as_stored.nbytes} bytes of float16"
    for query in (vecs[123], rows([0], 8)[0]):
        cosines = loaded.row_cosines(query)
        assert np.abs(cosines - as_stored.astype(np.float32) @ query).max() < 3e-3
    assert int(np.argmax(loaded.row_cosines(vecs[123]))) == 123


def test_a_merge_keeps_the_alive_vectors_as_stored_and_the_first_of_a_twice_embedded_doc(tmp_path: Path):
    store = VectorStore(tmp_path)
    store.prepare()
    written: dict[int, np.ndarray] = {}
    for n in range(MERGE_FILES + 1):  # one file more than a merge waits for
        ids = [n * 10 + k for k in range(3)] + ([5] if n == 3 else [])  # doc 5 again in a later file
        vecs = rows(ids, n)
        add(store, ids, vecs)
        for i, v in zip(ids, vecs.astype(np.float16), strict=True):
            written.setdefault(i, v)
    alive = np.array(sorted(i for i in written if i % 10 != 1))
    assert store.merge(alive)
    assert len(store._names()) == 1
    assert VectorStore(tmp_path).load().doc_ids.tolist() == alive.tolist()
    merged = read_file(store.folder / store._names()[0])  # (a search holds them as int8; the file keeps them as stored)
    expected = np.stack([written[i] for i in alive.tolist()])
    assert np.array_equal(merged["vectors"][np.argsort(merged["doc_ids"], kind="stable")], expected)
    assert not store.merge(alive)  # one file, all alive: nothing to do


def test_a_writer_that_searched_still_merges(tmp_path: Path):
    """A long-lived writer loads the vectors for its searches; its merge must still see
    every file (the doc-id cache once stayed empty for files load() had read)."""
    store = VectorStore(tmp_path)
    store.prepare()
    for i in range(MERGE_FILES + 2):
        add(store, [i], rows([i], i))
    store.load()
    assert store.merge(np.arange(MERGE_FILES + 2))
    assert len(store._names()) == 1
    assert store.load().doc_ids.tolist() == list(range(MERGE_FILES + 2))


def test_stored_vectors_are_found_by_the_key_of_their_text(tmp_path: Path):
    store = VectorStore(tmp_path)
    store.prepare()
    vecs = rows([1, 2], 4)
    add(store, [1, 2], vecs, seqs=[0, 0])
    found = store.stored_vectors(np.array([text_key("2/0"), text_key("nowhere")]))
    assert list(found) == [text_key("2/0")] and np.array_equal(found[text_key("2/0")], vecs[1].astype(np.float16))


def _npz(**members: np.ndarray) -> bytes:
    out = io.BytesIO()
    np.savez(out, **members)
    return out.getvalue()


def _claims_rows(data: bytes, member: str, rows: int) -> bytes:
    """``data`` with ``member``'s header rewritten to claim ``rows`` rows (its CRC made to match)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename == f"{member}.npy":
                header = body[: body.index(b"\n") + 1]
                old = header.decode("latin1")
                shape = old[old.index("'shape': (") + 10 : old.index(")", old.index("'shape': ("))]
                new = old.replace(f"'shape': ({shape})", f"'shape': ({rows},{shape.split(',', 1)[1] if ',' in shape else ''})")
                new = new.rstrip("\n").ljust(len(old) - 1) + "\n"
                body = new.encode("latin1")[: len(header)] + body[len(header) :]
            dst.writestr(info.filename, body)
    return out.getvalue()


GOOD = {"doc_ids": np.array([1, 2]), "seqs": np.array([0, 0]), "keys": np.array([3, 4]), "vectors": rows([1, 2], 9).astype(np.float16)}
FOREIGN = {
    "a string dtype": _npz(**{**GOOD, "vectors": np.array([["x"] * DIM] * 2)}),
    "float64 vectors": _npz(**{**GOOD, "vectors": rows([1, 2], 9).astype(np.float64)}),
    "another width": _npz(**{**GOOD, "vectors": np.zeros((2, 7), dtype=np.float16)}),
    "rows that disagree": _npz(**{**GOOD, "seqs": np.array([0, 0, 0])}),
    "a member missing": _npz(doc_ids=GOOD["doc_ids"], vectors=GOOD["vectors"]),
    "55 billion rows": _claims_rows(_npz(**GOOD), "vectors", 55_555_555_555),
    "string keys": _npz(**{**GOOD, "keys": np.array(["3", "4"])}),
}


@pytest.mark.parametrize("why", sorted(FOREIGN))
def test_a_foreign_file_that_passes_its_crc_is_damage_not_a_crash(tmp_path: Path, why: str):
    store = VectorStore(tmp_path)
    store.prepare()
    add(store, [1, 2], rows([1, 2], 0))
    (store.folder / "v-99999999999999999999-1.npz").write_bytes(FOREIGN[why])
    fresh = VectorStore(tmp_path)
    loaded = fresh.load()  # no ValueError, no MemoryError
    assert loaded.doc_ids.tolist() == [1, 2] and loaded.damaged == ("v-99999999999999999999-1.npz",)
    assert fresh.doc_ids() == (loaded.doc_ids, ["v-99999999999999999999-1.npz"])
    assert fresh.remove_damaged() == ["v-99999999999999999999-1.npz"]


@settings(max_examples=60, deadline=None, derandomize=True)
@given(st.binary(max_size=4096), st.integers(0, 4096))
def test_any_bytes_as_a_vector_file_load_or_count_as_damaged(data: bytes, cut: int):
    import tempfile

    with tempfile.TemporaryDirectory() as tmp:
        store = VectorStore(Path(tmp))
        store.prepare()
        good = _npz(**GOOD)
        (store.folder / "v-1.npz").write_bytes(good[:cut] + data)
        loaded = store.load()
        assert loaded.doc_ids.tolist() in ([], [1, 2])
        assert loaded.rows == sum(b.shape[0] for b in loaded.blocks) == sum(s.shape[0] for s in loaded.steps)
        assert all(b.dtype == np.int8 for b in loaded.blocks)


def test_slots_are_the_start_and_the_last_long_answer_messages():
    prompt = "why does the chart keep blank rows when a filter is off"
    answers = ["Let me look.", "x" * 300] + [f"message {i} " + "y" * (MIN_MESSAGE_CHARS + 10) for i in range(12)]
    body = "\n".join([prompt, *answers])
    marks, start = [], len(prompt) + 1
    for seq, text in enumerate(answers, 1):
        marks += [str(seq), str(start)]
        start += len(text) + 1
    got = slots(body, " ".join(marks), 0)
    assert got[0].sequence == 0 and got[0].text == body[:2000]
    messages = got[1:]
    assert len(messages) == MAX_MESSAGE_SLOTS  # "Let me look." is too short; the last 8 of the rest
    assert [s.sequence for s in messages] == list(range(len(answers) - MAX_MESSAGE_SLOTS + 1, len(answers) + 1))
    assert messages[-1].text == answers[-1] and len({s.key for s in got}) == len(got)
    assert slots("", None, 0) == [] and len(slots("just a prompt", None, 3)) == 1
