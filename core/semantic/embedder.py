"""The local embedding model: all-MiniLM-L6-v2, int8 ONNX, run by onnxruntime + tokenizers.

The model ships with relay-search (``core/semantic/model/``, exported from the original
weights by ``scripts/export_minilm.py``; Apache-2.0, see the LICENSE and NOTICE there).
Nothing is ever downloaded. The file's sha256 is checked before it is loaded, so a
damaged or foreign file turns semantic recall off (with the reason) instead of giving
wrong vectors. ``RELAY_SEARCH_MODEL`` names another folder holding the same two files
(a system-wide copy), or ``off`` turns semantic recall off.

onnxruntime and tokenizers are imported only when a model is loaded: a code-like
query (BM25 alone) never pays for them.
"""

from __future__ import annotations

import hashlib
import importlib.util
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

MODEL_FILE = "minilm-l6-v2-int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
MODEL_SHA256 = "e91a6ed62e892f34dc4d211b173f2d7b6367437e65fdbf54f7f61c14aea86d11"
MODEL_ID = f"all-MiniLM-L6-v2-int8-{MODEL_SHA256[:12]}"  # vectors are stored under it: a new model re-embeds
DIM = 384
MAX_TOKENS = 128  # of each passage's prompt + answer (256 doubled the cost for +0.015 MRR in the study)
PASSAGE_CHARS = 2_000  # enough text for 128 tokens; the tokenizer need not read a whole answer
MODEL_ENV = "RELAY_SEARCH_MODEL"
QUERY_CACHE = 64  # query vectors remembered
SHIPPED_DIR = Path(__file__).resolve().parent / "model"


@dataclass(frozen=True, slots=True)
class ModelState:
    """Whether semantic recall can run here, and if not, why (``index --stats``, the app, MCP, HTTP)."""

    on: bool
    reason: str  # "" when on
    model_id: str = MODEL_ID
    folder: str = ""


def model_folder(env: Mapping[str, str]) -> Path | None:
    """Where the model is: ``RELAY_SEARCH_MODEL`` if set (None for ``off``), else the shipped folder.

    Read from the archive's environment, else the process's: the setting belongs to the
    installation, so an archive opened with an explicit environment (a HOME elsewhere) keeps it."""
    chosen = (env.get(MODEL_ENV) or os.environ.get(MODEL_ENV) or "").strip()
    if chosen.lower() in ("off", "0", "none", "false"):
        return None
    return Path(chosen).expanduser() if chosen else SHIPPED_DIR


_checked: dict[tuple[str, int, int], str] = {}  # (path, size, mtime) → "" or why the file is refused
_check_lock = threading.Lock()


def _file_problem(path: Path) -> str:
    """Why this model file cannot be used ("" when it can); the hash is computed once per file version."""
    try:
        st = path.stat()
    except OSError as exc:
        return f"model file missing ({path}: {exc.strerror or exc})"
    key = (str(path), st.st_size, st.st_mtime_ns)
    with _check_lock:
        if key not in _checked:
            digest = hashlib.sha256()
            try:
                with path.open("rb") as f:
                    for block in iter(lambda: f.read(1 << 20), b""):
                        digest.update(block)
                _checked[key] = "" if digest.hexdigest() == MODEL_SHA256 else f"model file {path} has the wrong sha256"
            except OSError as exc:
                _checked[key] = f"model file unreadable ({path}: {exc.strerror or exc})"
        return _checked[key]


def model_state(env: Mapping[str, str]) -> ModelState:
    """Can the model load? Checks the packages (without importing them), the files and the hash."""
    folder = model_folder(env)
    if folder is None:
        return ModelState(False, f"turned off ({MODEL_ENV}=off)")
    missing = [m for m in ("onnxruntime", "tokenizers") if importlib.util.find_spec(m) is None]
    if missing:
        return ModelState(False, f"{' and '.join(missing)} not installed", folder=str(folder))
    problem = _file_problem(folder / MODEL_FILE)
    if not problem and not (folder / TOKENIZER_FILE).is_file():
        problem = f"tokenizer missing ({folder / TOKENIZER_FILE})"
    return ModelState(not problem, problem, folder=str(folder))


_sessions: dict[tuple[str, int], Any] = {}  # (folder, threads) → the onnxruntime session the embedders share


def _session(folder: Path, threads: int) -> Any:
    """One onnxruntime session per model file and thread count (the caller holds ``_load_lock``).

    The query embedder and the background job share it: ``run`` is thread-safe, and a second
    session would hold a second copy of the weights (~40 MB). Without the memory arena and
    its planned pattern each run frees what it allocated: the arena grew to the largest batch
    and stayed there (~270 MB resident embedding 1,500 passages with one session, against 207
    with :func:`core.memory.release_freed_memory` after each run; issue 25). The price: those pages are faulted in anew each
    run: 3–18% more CPU per passage in loaded runs (noisy); a query's embedding takes the same ~2 ms."""
    import onnxruntime as ort

    key = (str(folder), threads)
    if key not in _sessions:
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads  # never more than 1–2 cores: search and indexing come first
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        _sessions[key] = ort.InferenceSession(str(folder / MODEL_FILE), options, providers=["CPUExecutionProvider"])
    return _sessions[key]


class Embedder:
    """Texts → L2-normalised float32 vectors (mean pooling is in the graph)."""

    def __init__(self, folder: Path, *, threads: int = 1) -> None:
        from tokenizers import Tokenizer

        self._session: Any = _session(folder, threads)
        self._tokenizer: Any = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
        self._tokenizer.enable_truncation(max_length=MAX_TOKENS)
        self._tokenizer.enable_padding(pad_id=0, pad_token="[PAD]")
        self._lock = threading.Lock()  # the tokenizer's padding settings are shared state
        self._queries: dict[str, np.ndarray] = {}

    def embed_query(self, text: str) -> np.ndarray:
        """One query's vector, remembered for the next few calls (the app asks again on every refresh)."""
        vector = self._queries.get(text)
        if vector is None:
            vector = self.embed([text])[0]
            if len(self._queries) >= QUERY_CACHE:
                self._queries.pop(next(iter(self._queries)))
            self._queries[text] = vector
        return vector

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        with self._lock:
            encoded = self._tokenizer.encode_batch([t[:PASSAGE_CHARS] for t in texts])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            return np.asarray(
                self._session.run(["embedding"], {"input_ids": ids, "attention_mask": mask})[0], dtype=np.float32
            )


_loaded: dict[tuple[str, str], Embedder] = {}
_load_lock = threading.Lock()


def load(env: Mapping[str, str], *, role: str = "query", threads: int = 1) -> Embedder | None:
    """The process's embedder for ``role`` (loaded once per folder), or None when the model cannot run.

    The background job and queries get separate embedders (tokenizer and lock): a query never
    waits for a batch. They share the model's session (:func:`_session`).
    """
    state = model_state(env)
    if not state.on:
        return None
    key = (state.folder, role)
    with _load_lock:
        if key not in _loaded:
            try:
                _loaded[key] = Embedder(Path(state.folder), threads=threads)
            except Exception:  # a broken runtime or file: search stays BM25
                return None
        return _loaded[key]
