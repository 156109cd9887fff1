"""Embedding passages after BM25 is published: the newest first, never in a search's way.

Every alive passage without vectors is embedded (its slots: :mod:`core.semantic.passages`),
the most recent first, so the last days people search most have meaning-based recall
within seconds of a first start; a file of vectors is written per batch, so whatever
stops the job (Ctrl-C, kill, a full disk) keeps every batch done and the next run goes
on from there. Two ways to run it:

* in the background of a long-lived writer (the app, ``mcp``, ``serve``): one thread at
  the lowest priority, one text per model run (:meth:`SemanticJob.kick`);
* in the foreground of ``relay-search index``: one thread per core and a progress
  callback (:meth:`SemanticJob.run_foreground`).

A search never waits for it: it fuses what is embedded so far and says how many
passages still lack vectors. A one-shot CLI search does not embed (it would pay the
model's start-up and be killed mid-batch); it uses the vectors the other processes wrote.
A slot whose text was embedded before (a turn that grew keeps its earlier messages; a
repeated boilerplate answer) reuses that vector instead of running the model again.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from core.index.alive import alive_passages as alive_table

# core.semantic (the vector files, the embedding runtime's loader, the passages' slots) is
# imported where it is used: every archive has a job, and a search by words alone (a
# code-like query, the model off) never opens a vector file nor looks at the model.
if TYPE_CHECKING:
    from core.config import Config
    from core.index.bm25 import Snapshot
    from core.semantic.embedder import Embedder, ModelState
    from core.semantic.query_vectors import QueryVectors
    from core.semantic.vectors import VectorStore

    from .catalog import Catalog

FILE_BATCH = 64  # passages per vector file (~300 slots, a few seconds: what an interrupted run loses at most)
MAX_FAILURES = 3  # passes failing in a row before the job gives up and the stats say why
NO_TEXT = 0  # the key of a passage without text (a real text's key is 0 once in 2^63)
TRIM_EVERY = 64  # model runs between returning freed memory to the system (issue 25)
QUIET_AFTER_SEARCH = 0.5  # seconds a long-lived process's background embedding waits after a search

Progress = Callable[[int, int], None]  # (passages embedded, passages to embed) after each batch


class EmbeddedArchive(Protocol):
    """What the job needs of the archive (:class:`core.api.Archive` is one)."""

    writer: bool
    config: Config
    cache: Path
    catalog: Catalog
    _snapshot: Snapshot | None


def alive_passages(snapshot: Snapshot | None) -> tuple[np.ndarray, np.ndarray]:
    """The alive passages' doc ids (sorted) and their times (epoch seconds, aligned)."""
    table = alive_table(snapshot)
    return table.doc_ids, table.ts


def alive_doc_ids(snapshot: Snapshot | None) -> np.ndarray:
    return alive_passages(snapshot)[0]


def cpu_count() -> int:
    """The cores this process may run on (a CPU affinity or a container's cpuset counts)."""
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1


def newest_first(ids: np.ndarray, ts: np.ndarray) -> np.ndarray:
    """``ids`` ordered by time, the most recent first (then by doc id, newest first)."""
    return ids[np.lexsort((-ids, -np.nan_to_num(ts, nan=0.0)))]


class SemanticJob:
    """The archive's vectors: the store every search reads, and (in the writer) the job that fills it."""

    def __init__(self, archive: EmbeddedArchive) -> None:
        self._archive = archive
        self._thread: threading.Thread | None = None
        self._again = threading.Event()
        self._idle = threading.Event()
        self._stop = threading.Event()
        self._quiet_until = 0.0  # the background job makes no model run before this (monotonic) time
        self._failure = ""
        self._batch_lock = threading.Lock()
        self._epoch = 0  # bumped by a rebuild: doc ids counted before it mean other passages
        self.pending = 0  # passages not embedded yet, as the job last counted

    @cached_property
    def store(self) -> VectorStore:
        from core.semantic.embedder import MODEL_ID
        from core.semantic.vectors import VectorStore

        return VectorStore(self._archive.cache, MODEL_ID)

    @cached_property
    def _queries(self) -> QueryVectors:
        from core.semantic.query_vectors import QueryVectors

        return QueryVectors(self.store.folder)

    @property
    def env(self) -> Mapping[str, str]:
        return self._archive.config.env

    def state(self) -> ModelState:
        from core.semantic.embedder import ModelState, model_state

        state = model_state(self._archive.config.env, self._archive.cache)
        if state.on and self._failure:
            return ModelState(False, self._failure, folder=state.folder)
        return state

    def embedder(self) -> Embedder | None:
        from core.semantic.embedder import load

        return load(self._archive.config.env, self._archive.cache)

    def query_vector(self, query: str) -> np.ndarray | None:
        """``query``'s vector: remembered in the cache (no model loaded), else embedded and remembered."""
        vector = self._queries.get(query)
        if vector is None:
            embedder = self.embedder()
            if embedder is None:
                return None
            vector = embedder.embed_query(query)
            self._queries.put(query, vector)
        return vector

    def counts(self) -> tuple[int, int]:
        """(passages embedded, alive passages): what a search without all vectors says."""
        alive = alive_doc_ids(self._archive._snapshot)
        embedded = int(np.isin(alive, self.store.doc_ids()[0], kind="sort").sum()) if alive.shape[0] else 0
        return embedded, int(alive.shape[0])

    def summary(self) -> dict[str, Any]:
        """What ``index --stats``, MCP, HTTP and the app say about semantic recall."""
        state = self.state()
        embedded, passages = self.counts()
        return {
            "on": state.on, "reason": state.reason, "model": state.model_id,
            "embedded": embedded, "passages": passages, "vector_bytes": self.store.nbytes(),
        }  # fmt: skip

    def kick(self) -> None:
        """Embed what is missing in the background (the writer only); returns at once."""
        if not self._archive.writer or self._stop.is_set() or not self.state().on:
            return
        self._idle.clear()
        self._again.set()
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name="relay-search-embed", daemon=True)
            self._thread.start()

    def wait(self, timeout: float | None = None) -> bool:
        """Block until every alive passage has a vector (or the model cannot run); False on timeout."""
        if not self._archive.writer or not self.state().on:
            return True
        self.kick()
        return self._idle.wait(timeout)

    def close(self) -> None:
        self._stop.set()
        self._again.set()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def run_foreground(self, progress: Progress | None = None, *, threads: int | None = None) -> tuple[int, int]:
        """Embed every passage without vectors now, ``threads`` model runs at a time (default: one per
        core), the newest first; returns (passages embedded by this call, passages that were missing).
        A KeyboardInterrupt stops it after the batch files written so far."""
        if not self._archive.writer or not self.state().on:
            return 0, 0
        embedder = self.embedder()
        if embedder is None:
            return 0, 0
        from concurrent.futures import ThreadPoolExecutor

        workers = max(1, threads or cpu_count())
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="relay-search-embed") as pool:

            def embed_all(texts: list[str]) -> list[np.ndarray]:
                return list(pool.map(embedder.embed_one, texts)) if workers > 1 else [embedder.embed_one(t) for t in texts]

            try:
                return self._embed_missing(embed_all, progress)
            except KeyboardInterrupt:
                pool.shutdown(wait=True, cancel_futures=True)
                raise

    def searched(self) -> None:
        """A search ran: the background job yields the CPU (and the interpreter) for a moment. Its
        model runs and the app's keystrokes shared the interpreter: on the 1.8 GB bench, keystroke →
        hit list p95 was 130 ms while a backlog embedded (search alone 52 ms)."""
        self._quiet_until = time.monotonic() + QUIET_AFTER_SEARCH

    def _paced(self, embed: Callable[[str], np.ndarray], text: str) -> np.ndarray:
        self._wait_quiet()
        return embed(text)

    def _wait_quiet(self) -> None:
        """Until no search came for QUIET_AFTER_SEARCH (or closing): before each model run, before
        loading the model (importing onnxruntime, the tokenizer, the session: ~125 ms of the
        interpreter on the bench machine), before each pass over the passages (one starts after
        every live change), and before each step of a pass that is not a model run: a batch's
        passages cut into slots, its file written, the files merged. The app starts the job two
        seconds after its first sync, often while someone types their first query, and the keys
        shared the interpreter with that work; a burst of keys that began during a batch's last
        model run met the next batch's preparation, which nothing paced."""
        while (wait := self._quiet_until - time.monotonic()) > 0 and not self._stop.is_set():
            self._stop.wait(wait)

    def _run(self) -> None:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)  # Linux: this thread only
        except (AttributeError, OSError):
            pass
        self._wait_quiet()
        embedder = self.embedder()  # (also the query side's: a long-lived process's first prose query is quick)
        if embedder is None:  # the files passed their checks, yet the runtime or the tokenizer refused them
            self._failure = self._failure or self.state().reason or "the model failed to load"
            self._idle.set()
            return
        failures = 0
        while not self._stop.is_set():
            try:
                embedded, missing = self._embed_missing(lambda texts: [self._paced(embedder.embed_one, t) for t in texts])
                done = embedded >= missing
                failures = 0
            except Exception as exc:  # never in the way: what is not embedded is found by words
                if self._stop.is_set():
                    break
                failures += 1
                import logging  # (here: a one-shot command never loads it)

                logging.getLogger(__name__).warning("relay-search: embedding paused: %s", exc)
                if failures >= MAX_FAILURES:  # the same error again and again: say so in the stats
                    self._failure = f"embedding failed: {exc}"
                    break
                self._again.set()  # try again (after a rebuild the catalog is a new one)
                continue
            if done and not self._again.is_set():  # (else a newer snapshot or a rebuild came: count again)
                self._idle.set()
            self._again.wait()
        self._idle.set()

    def _embed_missing(self, embed_texts: Callable[[list[str]], list[np.ndarray]], progress: Progress | None = None) -> tuple[int, int]:
        """One pass: embed every alive passage without vectors, newest first, a file per batch. Returns
        (passages embedded, passages missing at the start); fewer when a newer snapshot (a kick), a
        rebuild (:meth:`paused`) or closing cut it short."""
        self._again.clear()
        epoch = self._epoch
        self._wait_quiet()  # (a pass starts again after each live change; a foreground ``index`` never waits)
        self.store.prepare()
        self.store.remove_damaged()
        alive, ts = alive_passages(self._archive._snapshot)
        lacking = ~np.isin(alive, self.store.doc_ids()[0], kind="sort")
        missing = newest_first(alive[lacking], ts[lacking])
        total = int(missing.shape[0])
        self.pending = total
        done = 0
        if progress is not None:
            progress(0, total)
        for start in range(0, total, FILE_BATCH):
            self._wait_quiet()  # (before taking the lock: a rebuild waits for a batch, not for the typing between them)
            with self._batch_lock:  # a rebuild waits for this batch; its doc ids mean other passages after it
                if self._stop.is_set() or self._again.is_set() or self._epoch != epoch:
                    self._again.set()
                    return done, total
                batch = missing[start : start + FILE_BATCH].tolist()
                self._embed_batch(batch, embed_texts)
            done += len(batch)
            self.pending = max(0, total - done)
            if progress is not None:
                progress(done, total)
        self._wait_quiet()
        self.store.merge(alive)
        return done, total

    def _embed_batch(self, batch: list[int], embed_texts: Callable[[list[str]], list[np.ndarray]]) -> None:
        """Every slot of ``batch``'s passages, as one file: known texts reuse their vectors, each new text
        is embedded once."""
        from core.memory import release_freed_memory
        from core.semantic.embedder import DIM
        from core.semantic.passages import Slot, slots

        docs = self._archive.catalog.docs(batch)
        rows: list[tuple[int, Slot]] = []
        for doc_id in batch:
            if doc_id in docs:
                doc = docs[doc_id]
                # a passage with no text (only tool calls) gets one zero row: embedded, never close to anything
                rows += [(doc_id, slot) for slot in slots(doc["body"], doc.get("marks"), doc["first_seq"]) or [Slot(doc["first_seq"], "", NO_TEXT)]]
        if not rows:
            return
        keys = np.array([slot.key for _, slot in rows], dtype=np.int64)
        known = self.store.stored_vectors(keys)
        known[NO_TEXT] = np.zeros(DIM, dtype=np.float16)
        new: dict[int, str] = {}
        for _, slot in rows:
            if slot.key not in known:
                new.setdefault(slot.key, slot.text)
        texts = list(new.values())
        made: list[np.ndarray] = []
        for at in range(0, len(texts), TRIM_EVERY):
            if self._stop.is_set():  # closing: a model run takes milliseconds, a batch seconds
                return
            made += embed_texts(texts[at : at + TRIM_EVERY])
            release_freed_memory()  # glibc keeps the runs' freed activations otherwise (issue 25)
        known.update(zip(new, made))
        vectors = np.zeros((len(rows), DIM), dtype=np.float16)  # as stored: half the bytes
        for i, (_, slot) in enumerate(rows):
            vectors[i] = known[slot.key]
        ids = np.array([doc_id for doc_id, _ in rows], dtype=np.int64)
        seqs = np.array([slot.sequence for _, slot in rows], dtype=np.int64)
        self._wait_quiet()  # (its last model run may have ended in someone's burst of keys; a rebuild waits this out too)
        self.store.add(ids, seqs, keys, vectors)

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Hold the job off while the cache is wiped: no batch of old doc ids is written after it."""
        with self._batch_lock:
            self._epoch += 1
            yield
        self._again.set()
