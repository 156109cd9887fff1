"""Embedding passages in the background, after BM25 is published.

The writer process (the app, ``mcp``, ``serve``, ``relay-search index``) embeds every
alive passage that has no vector yet, in one thread at the lowest priority with one
onnxruntime thread, writing a vector file per batch (:mod:`core.semantic.vectors`).
A search never waits for it: it fuses what is embedded so far. A one-shot CLI search
does not embed (it would pay the model's start-up and be killed mid-batch); it uses
the vectors the other processes wrote.
"""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np

from core.memory import release_freed_memory
from core.semantic.embedder import DIM, MODEL_ID, Embedder, ModelState, load, model_state
from core.semantic.vectors import VectorStore

if TYPE_CHECKING:
    from core.config import Config
    from core.index.bm25 import Snapshot

    from .catalog import Catalog

FILE_BATCH = 256  # passages per vector file
MAX_FAILURES = 3  # passes failing in a row before the job gives up and the stats say why
# Passages per model run (similar lengths together: little padding). Not a memory knob: the
# int8 graph quantizes a run's activations with one scale for the whole run, so another
# size gives other vectors (one passage per run: 192 MB instead of 235 at peak, but the
# dev eval's R@1 fell 0.794 → 0.786; issue 25).
RUN_BATCH = 16


class EmbeddedArchive(Protocol):
    """What the job needs of the archive (:class:`core.api.Archive` is one)."""

    writer: bool
    config: Config
    cache: Path
    catalog: Catalog
    _snapshot: Snapshot | None


def alive_doc_ids(snapshot: Snapshot | None) -> np.ndarray:
    if snapshot is None or not snapshot.segments:
        return np.zeros(0, dtype=np.int64)
    return np.sort(
        np.concatenate(
            [np.asarray(s.doc_ids, dtype=np.int64)[a] for s, a in zip(snapshot.segments, snapshot.alive, strict=True)]
        )
    )


def _batches(ids: np.ndarray, size: int) -> Iterator[np.ndarray]:
    for start in range(0, ids.shape[0], size):
        yield ids[start : start + size]


class SemanticJob:
    """The archive's vectors: the store every search reads, and (in the writer) the job that fills it."""

    def __init__(self, archive: EmbeddedArchive) -> None:
        self._archive = archive
        self.store = VectorStore(archive.cache, MODEL_ID)
        self._thread: threading.Thread | None = None
        self._again = threading.Event()
        self._idle = threading.Event()
        self._stop = threading.Event()
        self._failure = ""
        self._batch_lock = threading.Lock()
        self._epoch = 0  # bumped by a rebuild: doc ids counted before it mean other passages
        self.pending = 0  # passages not embedded yet, as the job last counted

    @property
    def env(self) -> Mapping[str, str]:
        return self._archive.config.env

    def state(self) -> ModelState:
        state = model_state(self._archive.config.env)
        if state.on and self._failure:
            return ModelState(False, self._failure, folder=state.folder)
        return state

    def summary(self) -> dict[str, Any]:
        """What ``index --stats``, MCP, HTTP and the app say about semantic recall."""
        state = self.state()
        alive = alive_doc_ids(self._archive._snapshot)
        embedded = int(np.isin(alive, self.store.doc_ids()[0]).sum()) if alive.shape[0] else 0
        return {
            "on": state.on, "reason": state.reason, "model": state.model_id,
            "embedded": embedded, "passages": int(alive.shape[0]), "vector_bytes": self.store.nbytes(),
        }  # fmt: skip

    def kick(self) -> None:
        """Embed what is missing (the writer only); returns at once."""
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

    def _run(self) -> None:
        try:
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), 19)  # Linux: this thread only
        except (AttributeError, OSError):
            pass
        # the query side's model too, so a long-lived process's first prose query is quick
        load(self._archive.config.env)
        embedder = load(self._archive.config.env, role="background")
        if embedder is None:  # the files passed their checks, yet the runtime refused them
            self._failure = self._failure or "the model failed to load (onnxruntime refused it)"
            self._idle.set()
            return
        failures = 0
        while not self._stop.is_set():
            try:
                done = self._embed_missing(embedder)
                failures = 0
            except Exception as exc:  # never in the way: what is not embedded is found by words
                if self._stop.is_set():
                    break
                failures += 1
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

    def _embed_missing(self, embedder: Embedder) -> bool:
        """One pass: embed every alive passage without a vector, a file per batch. True when done;
        False when a newer snapshot (a kick), a rebuild (:meth:`paused`) or closing cut it short."""
        self._again.clear()
        epoch = self._epoch
        self.store.prepare()
        self.store.remove_damaged()
        alive = alive_doc_ids(self._archive._snapshot)
        missing = alive[~np.isin(alive, self.store.doc_ids()[0])]
        self.pending = int(missing.shape[0])
        for ids in _batches(missing, FILE_BATCH):
            with self._batch_lock:  # a rebuild waits for this batch; its doc ids mean other passages after it
                if self._stop.is_set() or self._again.is_set() or self._epoch != epoch:
                    self._again.set()
                    return False
                docs = self._archive.catalog.docs(ids.tolist())
                ids = np.array([i for i in ids.tolist() if i in docs], dtype=np.int64)
                texts = [docs[i]["body"] or "" for i in ids.tolist()]
                order = np.argsort([len(t) for t in texts], kind="stable")
                vectors = np.zeros((ids.shape[0], DIM), dtype=np.float16)  # as stored: half the bytes
                for run in _batches(order, RUN_BATCH):
                    if self._stop.is_set():  # closing: a model run takes a fraction of a second, a file several
                        return False
                    vectors[run] = embedder.embed([texts[j] for j in run.tolist()])
                    # A run's activations (~100 MB for 16 passages) are freed, but glibc keeps them
                    # fragmented: trimmed, the peak is ~13 MB lower (220 → 207 MB embedding 1,500
                    # passages) and the resident set falls back to ~105 MB between runs, not ~200
                    # (issue 25); a trim costs ~4 ms beside a run's ~270 ms (measured loaded).
                    release_freed_memory()
                if ids.shape[0]:
                    self.store.add(ids, vectors)
            self.pending = max(0, self.pending - int(ids.shape[0]))
        self.store.merge(alive)
        return True

    @contextmanager
    def paused(self) -> Iterator[None]:
        """Hold the job off while the cache is wiped: no batch of old doc ids is written after it."""
        with self._batch_lock:
            self._epoch += 1
            yield
        self._again.set()
