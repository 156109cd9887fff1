"""The local embedding model: all-MiniLM-L6-v2, int8 ONNX, run by onnxruntime.

The model ships with relay-search (``core/semantic/model/``, exported from the original
weights by ``scripts/export_minilm.py``; Apache-2.0, see the LICENSE and NOTICE there).
Nothing is ever downloaded. The file's size and sha256 are checked before it is loaded,
so a damaged or foreign file turns semantic recall off (with the reason) instead of
giving wrong vectors; the verdict is remembered in the cache per file version (path,
size, mtime, inode), so a process hashes the 22 MB file only when it changed.
``RELAY_SEARCH_MODEL`` names another folder holding the same two files (a system-wide
copy), or ``off`` turns semantic recall off. Only regular files are read: a FIFO or a
device named as the model is refused without blocking (issue 37).

onnxruntime is imported only when a model is loaded: a code-like query (BM25 alone)
never pays for it. The tokenizer is :mod:`core.semantic.wordpiece`, in Python: the same
ids as Hugging Face ``tokenizers`` for the shipped ``tokenizer.json``, without its ~13 MB
and ~40 ms to load (issue 35). onnxruntime's telemetry is turned off before
it is imported (``ORT_DISABLE_TELEMETRY``): otherwise its import writes a device id and
a database under ``~/.cache/Microsoft`` (issue 35).

Texts are embedded one at a time, without padding: the int8 graph quantises a run's
activations with one scale, so in a batch a passage's vector depended on its
batch-mates (min cosine 0.968 against the same text alone; issue 34), and one at a
time was also cheaper (no padding to the longest: ~7 ms a passage against ~11).
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from core.memory import is_long_lived
from core.sources.regular import open_regular

MODEL_FILE = "minilm-l6-v2-int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
MODEL_SHA256 = "e91a6ed62e892f34dc4d211b173f2d7b6367437e65fdbf54f7f61c14aea86d11"
MODEL_SIZE = 22_812_057  # bytes: a file of another size is not this model (refused without reading it)
TOKENIZER_MAX_BYTES = 16 << 20  # ours is 466 KB
# Vectors are stored under it: a new model, or a new way of embedding, re-embeds. "s1": one
# passage per run (batch-invariant), several slots per passage (issue 34).
MODEL_ID = f"all-MiniLM-L6-v2-int8-{MODEL_SHA256[:12]}-s1"
DIM = 384
MAX_TOKENS = 128  # of each slot's text (256 doubled the cost for +0.015 MRR in the study)
MODEL_ENV = "RELAY_SEARCH_MODEL"
QUERY_CACHE = 64  # query vectors remembered
VERDICT_FILE = "model-check.json"  # in the cache: the hash check's verdict per file version
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


_checked: dict[tuple[str, int, int, int], str] = {}  # file version → "" or why the file is refused
_check_lock = threading.Lock()


def _version(st: os.stat_result, path: Path) -> tuple[str, int, int, int]:
    return (str(path), st.st_size, st.st_mtime_ns, st.st_ino)


def _remembered(cache: Path | None, version: tuple[str, int, int, int]) -> str | None:
    if cache is None:
        return None
    try:
        with open(cache / VERDICT_FILE, encoding="utf-8") as f:
            saved = json.load(f)
        if isinstance(saved, dict) and saved.get("version") == list(version) and isinstance(saved.get("verdict"), str):
            return saved["verdict"]
    except (OSError, ValueError):
        pass
    return None


def _remember(cache: Path | None, version: tuple[str, int, int, int], verdict: str) -> None:
    """Write the verdict beside the index (best effort: a read-only cache hashes again next time)."""
    if cache is None or not cache.is_dir():
        return
    tmp = cache / f".tmp-{VERDICT_FILE}-{os.getpid()}"
    try:
        tmp.write_text(json.dumps({"version": list(version), "verdict": verdict}), encoding="utf-8")
        os.replace(tmp, cache / VERDICT_FILE)
    except OSError:
        tmp.unlink(missing_ok=True)


def _file_problem(path: Path, cache: Path | None) -> str:
    """Why this model file cannot be used ("" when it can); hashed once per file version."""
    try:
        f = open_regular(path)
    except FileNotFoundError as exc:
        return f"model file missing ({path}: {exc.strerror or exc})"
    except OSError as exc:
        return f"model file unusable ({path}: {exc.strerror or exc})"
    with f:
        st = os.fstat(f.fileno())
        if st.st_size != MODEL_SIZE:
            return f"model file {path} is not the model ({st.st_size:,} bytes, not {MODEL_SIZE:,})"
        version = _version(st, path)
        with _check_lock:
            if version not in _checked:
                remembered = _remembered(cache, version)
                if remembered is None:
                    digest = hashlib.sha256()
                    try:
                        for block in iter(lambda: f.read(1 << 20), b""):
                            digest.update(block)
                        remembered = "" if digest.hexdigest() == MODEL_SHA256 else f"model file {path} has the wrong sha256"
                    except OSError as exc:
                        return f"model file unreadable ({path}: {exc.strerror or exc})"
                    _remember(cache, version, remembered)
                _checked[version] = remembered
            return _checked[version]


def model_state(env: Mapping[str, str], cache: Path | None = None) -> ModelState:
    """Can the model load? Checks the packages (without importing them), the files and the hash
    (``cache``: where the hash's verdict is remembered across processes)."""
    folder = model_folder(env)
    if folder is None:
        return ModelState(False, f"turned off ({MODEL_ENV}=off)")
    if importlib.util.find_spec("onnxruntime") is None:
        return ModelState(False, "onnxruntime not installed", folder=str(folder))
    problem = _file_problem(folder / MODEL_FILE, cache)
    if not problem:
        problem = _load_failures.get(str(folder), "")
    return ModelState(not problem, problem, folder=str(folder))


def _read_tokenizer(path: Path) -> str:
    """The tokenizer's JSON text, read only from a regular file of a sane size; raises ValueError naming it."""
    try:
        with open_regular(path) as f:
            data = f.read(TOKENIZER_MAX_BYTES + 1)
    except OSError as exc:
        raise ValueError(f"tokenizer file unusable ({path}: {exc.strerror or exc})") from None
    if len(data) > TOKENIZER_MAX_BYTES:
        raise ValueError(f"tokenizer file {path} is too large to be ours")
    return data.decode("utf-8", "replace")


def _import_runtime() -> Any:
    os.environ["ORT_DISABLE_TELEMETRY"] = "1"  # before the import: it writes its files at import
    import onnxruntime as ort

    return ort


_sessions: dict[str, Any] = {}  # folder → the onnxruntime session every embedder of the process shares


def _session(folder: Path) -> Any:
    """One onnxruntime session per model file (the caller holds ``_load_lock``).

    ``run`` is thread-safe, so queries and the embedding threads share it (a second session
    would hold a second copy of the weights, ~40 MB). With one intra-op thread a run computes
    on its caller's thread: the background job's thread runs at the lowest priority, and the
    foreground ``index`` runs one thread per core. Without the memory arena and its planned
    pattern each run frees what it allocated (issue 25). No graph optimisation: it made the
    session slower to create and embedding no faster (measured: 10.6–12.1 against 13.0–13.2 ms
    a 128-token passage). A long-lived process (the app, ``mcp``, ``serve``) does not prepack the
    weights: a second, reordered copy of the int8 matrices, 4–5 MB more resident for runs ~5%
    faster (15.0–16.0 against 16.0–16.2 ms a passage), which only a foreground ``index`` needs."""
    ort = _import_runtime()
    key = str(folder)
    if key not in _sessions:
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.log_severity_level = 3
        options.enable_cpu_mem_arena = False
        options.enable_mem_pattern = False
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_DISABLE_ALL
        if is_long_lived():
            options.add_session_config_entry("session.disable_prepacking", "1")
        _sessions[key] = ort.InferenceSession(str(folder / MODEL_FILE), options, providers=["CPUExecutionProvider"])
    return _sessions[key]


class Embedder:
    """Texts → L2-normalised float32 vectors (mean pooling is in the graph), one text per model run."""

    def __init__(self, folder: Path) -> None:
        from core.semantic.wordpiece import WordPiece

        text = _read_tokenizer(folder / TOKENIZER_FILE)
        try:
            self._tokenizer = WordPiece.from_json(text, max_tokens=MAX_TOKENS)
        except ValueError as exc:
            raise ValueError(f"tokenizer file {folder / TOKENIZER_FILE} is damaged: {exc}") from None
        self._session: Any = _session(folder)
        self._queries: dict[str, np.ndarray] = {}

    def embed_query(self, text: str) -> np.ndarray:
        """One query's vector, remembered for the next few calls (the app asks again on every refresh)."""
        vector = self._queries.get(text)
        if vector is None:
            vector = self.embed_one(text)
            if len(self._queries) >= QUERY_CACHE:
                self._queries.pop(next(iter(self._queries)))
            self._queries[text] = vector
        return vector

    def embed_one(self, text: str) -> np.ndarray:
        """One text's vector: the same whatever else is embedded beside it (thread-safe)."""
        ids = np.array([self._tokenizer.encode(text)], dtype=np.int64)
        out = self._session.run(["embedding"], {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0]
        return np.asarray(out[0], dtype=np.float32)

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if not texts:
            return np.zeros((0, DIM), dtype=np.float32)
        return np.stack([self.embed_one(t) for t in texts])


_loaded: dict[str, Embedder] = {}
_load_failures: dict[str, str] = {}  # folder → why its files passed the checks yet failed to load
_load_lock = threading.Lock()


def load(env: Mapping[str, str], cache: Path | None = None) -> Embedder | None:
    """The process's embedder (loaded once per folder), or None when the model cannot run
    (:func:`model_state` then says why, naming the file that failed)."""
    state = model_state(env, cache)
    if not state.on:
        return None
    with _load_lock:
        if state.folder not in _loaded:
            try:
                _loaded[state.folder] = Embedder(Path(state.folder))
            except ValueError as exc:  # our own check of the tokenizer: it names the file
                _load_failures[state.folder] = str(exc)
                return None
            except Exception as exc:  # a broken runtime or model file: search stays BM25
                _load_failures[state.folder] = f"the model failed to load (onnxruntime: {str(exc)[:200]})"
                return None
        return _loaded[state.folder]
