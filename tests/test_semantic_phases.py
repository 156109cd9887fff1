"""Meaning without the wait (issue 35) and recall in every message (issue 34), through the CLI,
MCP and HTTP: ``index`` publishes the words first and embeds in a second, visible phase, the
newest passages first; Ctrl-C keeps what is made; a search never waits and says what it lacks;
a conclusion said only in a late answer message is found by a paraphrase; nothing is written
outside our folders; a model file that is a FIFO or a device never hangs a command.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from mcp import Client

from core.api import Archive
from core.config import Config
from core.fixtures.claude import ClaudeTranscript
from core.fixtures.demo import write_demo_corpus
from core.front.http_api import build_http_app
from core.front.mcp import build_server
from core.semantic.embedder import MODEL_ENV, MODEL_FILE, SHIPPED_DIR, TOKENIZER_FILE, model_state

from .hostile_support import drain_terminal

REPO = Path(__file__).resolve().parent.parent
STATE = model_state({MODEL_ENV: str(SHIPPED_DIR)})
pytestmark = [
    pytest.mark.semantic,
    pytest.mark.skipif(not STATE.on, reason=f"the model cannot run here: {STATE.reason}"),
]

# A long turn whose conclusion is said only in its last answer message, past what the turn's
# start (its prompt and first answers) holds; the paraphrase shares no word (nor stem) with it.
PROMPT = "The nightly export job keeps timing out after about an hour, can you dig into it?"
FILLER = [
    "Let me look at the export job's logs and the scheduler configuration first.",
    "The scheduler starts it on time and the first batches are quick; the slowdown starts later.",
    "I'll check the connection settings and the writer next, then time a run with more logging.",
    "Timing a local run with a copy of yesterday's data to see where the minutes go.",
]
CONCLUSION = (
    "Root cause found: the exporter opened a fresh database connection for every row it wrote, so the pool "
    "was drained after a few thousand rows and every later write waited until the timeout. It now reuses a "
    "connection per batch of 500 rows; the nightly export finishes in four minutes."
)
LATE = "0e5a1c3b-7d2f-4a8e-9b61-2f4c8d9e1a07"
PARAPHRASE = "the midnight extract exhausted its db handles since each line got a brand new handle"


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_") and k != MODEL_ENV}
    paths = [extra.pop("PYTHONPATH", ""), str(REPO)]
    return {**env, "HOME": str(home), "PYTHONPATH": os.pathsep.join(p for p in paths if p), **extra}


def cli(home: Path, *args: str, ok: bool = True, **extra: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, "-m", "core", *args], env=env_for(home, **extra), capture_output=True, text=True, timeout=300)
    assert "Traceback" not in proc.stderr and "unexpected error" not in proc.stderr, proc.stderr
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def search_json(home: Path, query: str, *args: str, **extra: str) -> dict[str, Any]:
    return json.loads(cli(home, "search", query, "--json", "--limit", "10", *args, **extra).stdout)


def slow_embedding(tmp_path: Path, seconds: float = 0.03) -> str:
    """A PYTHONPATH whose ``sitecustomize`` makes each model run ``seconds`` longer (as a slower
    machine or a bigger archive would): the embedding phase then lasts long enough to act in."""
    inject = tmp_path / "inject"
    inject.mkdir(exist_ok=True)
    (inject / "sitecustomize.py").write_text(
        "import time\nimport core.semantic.embedder as embedder\n"
        "_one = embedder.Embedder.embed_one\n"
        f"def slow(self, text):\n    time.sleep({seconds})\n    return _one(self, text)\n"
        "embedder.Embedder.embed_one = slow\n"
    )
    return str(inject)


def late_turn() -> ClaudeTranscript:
    """The long turn whose conclusion is its last answer message (the session's only turn so far)."""
    t = ClaudeTranscript(LATE, cwd="/home/dev/exporter", start=datetime(2026, 11, 20, tzinfo=timezone.utc))
    t.user(PROMPT)
    for i, text in enumerate(FILLER):
        t.assistant(text)
        t.tool("Bash", {"command": f"tail -n 50 logs/export-{i}.log"}, f"batch {i} ok\n" * 5)
    t.assistant(CONCLUSION)
    return t


def write_late_conclusion(home: Path) -> None:
    t = late_turn()
    t.user("thanks, ship it")
    t.assistant("Merged.")
    t.write_under(home / ".claude" / "projects")


@pytest.fixture(scope="module")
def embedded(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("phases")
    write_demo_corpus(home)
    write_late_conclusion(home)
    cli(home, "index")
    return home


def _archive(home: Path) -> Archive:
    return Archive.open(Config.from_env({**env_for(home), MODEL_ENV: str(SHIPPED_DIR)}), sync=False)


# --- issue 34: recall in every message ------------------------------------------------------


def test_a_conclusion_in_a_late_answer_message_is_found_by_a_paraphrase(embedded: Path):
    lexical = search_json(embedded, PARAPHRASE, "--mode", "lexical")["results"]
    assert not [h for h in lexical if h["session_id"] == LATE]  # no word of it is in that turn
    found = [h for h in search_json(embedded, PARAPHRASE)["results"] if h["session_id"] == LATE]
    assert found and found[0].get("by_meaning") is True and found[0]["turn_number"] == 0
    with _archive(embedded) as archive:  # the turn's start alone is not close enough: the message is
        embedder = archive.semantic.embedder()
        assert embedder is not None
        query = embedder.embed_query(PARAPHRASE)
        assert float(embedder.embed_one(PROMPT + "\n" + "\n".join(FILLER)) @ query) < 0.35
        assert float(embedder.embed_one(CONCLUSION) @ query) > 0.45


async def test_a_hit_found_by_meaning_points_at_its_message_over_mcp_and_http(embedded: Path):
    with _archive(embedded) as archive:
        async with Client(build_server(archive), raise_exceptions=True) as client:
            got = (await client.call_tool("search_history", {"query": PARAPHRASE, "limit": 10})).structured_content
            hit = next(h for h in got["results"] if h["session_id"] == LATE)
            assert hit["by_meaning"] is True
            context = await client.call_tool(
                "get_message_context", {"session_id": hit["session_id"], "sequence": hit["sequence"], "before": 0, "after": 0}
            )
            assert "Root cause found" in json.dumps(context.structured_content)
        transport = httpx.ASGITransport(app=build_http_app(archive))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as http:
            answer = (await http.get("/search", params={"q": PARAPHRASE})).json()
        assert any(h["session_id"] == LATE and h["sequence"] == hit["sequence"] for h in answer["results"])


def test_an_apostrophe_is_not_a_quote_so_the_query_is_prose(embedded: Path):
    query = "why can't the midnight extract get db handles anymore"
    assert [h for h in search_json(embedded, query)["results"] if h["session_id"] == LATE and h.get("by_meaning")]
    assert not [h for h in search_json(embedded, query, "--mode", "lexical")["results"] if h["session_id"] == LATE]


# --- issue 35: words first, then meaning, visibly ----------------------------------------


def test_index_on_a_terminal_shows_the_words_then_an_embedding_bar(tmp_path: Path):
    write_demo_corpus(tmp_path)
    primary, secondary = os.openpty()
    proc = subprocess.Popen([sys.executable, "-m", "core", "index"], env=env_for(tmp_path), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=secondary)  # fmt: skip
    os.close(secondary)
    screen = drain_terminal(primary, proc, 240).decode("utf-8", "replace")
    stdout = proc.communicate(timeout=60)[0].decode()
    os.close(primary)
    assert proc.returncode == 0 and "Traceback" not in screen
    assert stdout.startswith("indexed ")  # the words' line, printed before the second phase starts
    bars = [part for part in screen.split("\r") if part.startswith("embedding ")]
    assert len(bars) >= 2, screen
    total = bars[-1].split("/")[1].split()[0]
    assert f"{total}/{total} passages" in bars[-1] and "100%" in bars[-1]
    assert all(" passages · " in b and "/s · " in b for b in bars) and any(" s left" in b for b in bars), bars


def test_index_without_a_terminal_says_when_embedding_starts_and_ends(tmp_path: Path):
    write_demo_corpus(tmp_path)
    proc = cli(tmp_path, "index")
    lines = proc.stderr.strip().splitlines()
    assert "\r" not in proc.stderr and len(lines) == 2, proc.stderr
    n = lines[0].split()[1]
    assert lines[0].startswith(f"embedding {n} passages") and lines[1] == f"embedded {n} passages for meaning-based recall"
    again = cli(tmp_path, "index")  # nothing left to embed: nothing said
    assert again.stderr == ""


def _wait_for_line(proc: subprocess.Popen, prefix: str, seconds: float = 120) -> str:
    deadline = time.monotonic() + seconds
    assert proc.stderr is not None
    while time.monotonic() < deadline:
        line = proc.stderr.readline().decode()
        if line.startswith(prefix):
            return line
        assert line or proc.poll() is None, f"exited {proc.returncode} before {prefix!r}"
    raise AssertionError(f"no {prefix!r} line")


def test_words_are_searchable_by_another_process_while_vectors_are_made(tmp_path: Path):
    write_demo_corpus(tmp_path)
    env = env_for(tmp_path, PYTHONPATH=slow_embedding(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "core", "index"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for_line(proc, "embedding ")
        words = search_json(tmp_path, "rollover_period")  # BM25 alone: answered now
        prose = search_json(tmp_path, "the page squashes badly on a phone screen")
        assert proc.poll() is None, "the index finished before the searches: the test proves nothing"
    finally:
        proc.communicate(timeout=300)
    assert words["results"] and "meaning_missing" not in words
    gap = prose["meaning_missing"]
    assert prose["results"] and 0 < gap["missing"] <= gap["passages"] and "relay-search index" in gap["note"]
    assert proc.returncode == 0
    assert "meaning_missing" not in search_json(tmp_path, "the page squashes badly on a phone screen")  # all embedded now


def test_a_prose_search_without_vectors_says_so_on_stderr_and_does_not_wait(tmp_path: Path):
    write_demo_corpus(tmp_path)
    cli(tmp_path, "index", **{MODEL_ENV: "off"})  # words only, as a user who never ran `index` with the model
    proc = cli(tmp_path, "search", "the page squashes badly on a phone screen")
    assert proc.stdout.strip() and proc.stderr.count("\n") == 1
    assert proc.stderr.startswith("relay-search: no passage has vectors yet, so this search ran by words only")
    assert cli(tmp_path, "search", "rollover_period").stderr == ""  # a code-like query never uses meaning


def test_ctrl_c_keeps_the_words_and_the_vectors_made_newest_first_and_index_goes_on(tmp_path: Path):
    write_demo_corpus(tmp_path)
    env = env_for(tmp_path, PYTHONPATH=slow_embedding(tmp_path))
    proc = subprocess.Popen([sys.executable, "-m", "core", "index"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            start_new_session=True)  # fmt: skip
    folder = tmp_path / ".cache" / "relay-search" / "vectors"
    try:
        _wait_for_line(proc, "embedding ")
        deadline = time.monotonic() + 120
        while not list(folder.rglob("v-*.npz")):  # a first batch is stored
            assert time.monotonic() < deadline and proc.poll() is None
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGINT)
    finally:
        _, err = proc.communicate(timeout=120)
    stderr = err.decode()
    assert proc.returncode == 130 and "Traceback" not in stderr, stderr
    assert "interrupted;" in stderr and "`relay-search index` goes on from there" in stderr
    with _archive(tmp_path) as archive:
        embedded, passages = archive.semantic.counts()
        assert 0 < embedded < passages
        ids, ts = _alive(archive)
        have = np.isin(ids, archive.semantic.store.doc_ids()[0])
        assert ts[have].min() >= ts[~have].max()  # the newest passages were embedded first
        assert archive.search("rollover_period")  # every word is indexed
    rest = cli(tmp_path, "index")
    assert rest.stderr.splitlines()[-1] == f"embedded {passages - embedded} passages for meaning-based recall"
    with _archive(tmp_path) as archive:
        assert archive.semantic.counts() == (passages, passages)


def _alive(archive: Archive) -> tuple[np.ndarray, np.ndarray]:
    from core.archive.semantic_job import alive_passages

    return alive_passages(archive._snapshot)


def test_a_fresh_run_writes_nothing_outside_our_folders(tmp_path: Path):
    from watchdog.events import FileSystemEvent, FileSystemEventHandler
    from watchdog.observers.inotify import InotifyObserver

    home = tmp_path / "home"
    home.mkdir()
    # SQLite's temporary files (a savepoint's sub-journal, a big sort) are unlinked as
    # soon as they are opened, so no listing after the run sees them: watch the folder
    # SQLite would put them in while the commands run
    scratch = tmp_path / "tmp"
    scratch.mkdir()
    created: list[str] = []

    class Created(FileSystemEventHandler):
        def on_created(self, event: FileSystemEvent) -> None:
            created.append(str(event.src_path))

    observer = InotifyObserver()
    observer.schedule(Created(), str(scratch), recursive=True)
    observer.start()
    try:
        temp = {"SQLITE_TMPDIR": str(scratch), "TMPDIR": str(scratch)}
        cli(home, "--demo", "index", **temp)
        cli(home, "--demo", "search", "the page squashes badly on a phone screen", **temp)
        cli(home, "index", **temp)
        cli(home, "search", "why does the layout collapse on narrow screens", **temp)
        cli(home, "--demo", "tag", "quiet-sorting-falcon", "keep", **temp)
    finally:
        observer.stop()
        observer.join(10)
    assert created == []
    ours = (home / ".cache" / "relay-search", home / ".cache" / "relay-search-demo", home / ".local" / "share" / "relay-search")
    stray = [p for p in home.rglob("*") if p.is_file() and not any(p.is_relative_to(o) for o in ours)]
    assert stray == [], stray
    assert not (home / ".cache" / "Microsoft").exists()


# --- issue 37 #2: the model's files are checked without blocking ------------------------


@pytest.mark.parametrize("kind", ["fifo", "dev-zero", "huge"])
def test_a_model_file_that_is_not_the_model_never_hangs_a_command(tmp_path: Path, kind: str):
    write_demo_corpus(tmp_path)
    folder = tmp_path / "model"
    folder.mkdir()
    shutil.copy(SHIPPED_DIR / TOKENIZER_FILE, folder / TOKENIZER_FILE)
    if kind == "fifo":
        os.mkfifo(folder / MODEL_FILE)
    elif kind == "dev-zero":
        (folder / MODEL_FILE).symlink_to("/dev/zero")
    else:
        with open(folder / MODEL_FILE, "wb") as f:  # sparse: 3 GB that read as zeros
            f.truncate(3 << 30)
    started = time.monotonic()
    stats = json.loads(cli(tmp_path, "index", "--json", **{MODEL_ENV: str(folder)}).stdout)["semantic"]
    found = search_json(tmp_path, "the page squashes badly on a phone screen", **{MODEL_ENV: str(folder)})
    assert time.monotonic() - started < 60
    assert stats["on"] is False and str(folder / MODEL_FILE) in stats["reason"]
    assert found["results"] and "meaning_missing" not in found  # by words, as with the model off


def test_a_damaged_tokenizer_is_named(tmp_path: Path):
    write_demo_corpus(tmp_path)
    folder = tmp_path / "model"
    folder.mkdir()
    (folder / MODEL_FILE).symlink_to(SHIPPED_DIR / MODEL_FILE)
    (folder / TOKENIZER_FILE).write_text('{"version": "1.0", "model": {"type": "nonsense"')
    stats = json.loads(cli(tmp_path, "index", "--json", **{MODEL_ENV: str(folder)}).stdout)["semantic"]
    assert stats["on"] is False and f"tokenizer file {folder / TOKENIZER_FILE} is damaged" in stats["reason"], stats
    assert "onnxruntime" not in stats["reason"]


# --- issue 35 #3: a query asked again skips the model -------------------------------------

SEARCH_AND_LIST_RUNTIME = """
import sys
from core.front.cli import main
code = main(["search", {query!r}, "--json"])
print("RUNTIME:" + ",".join(sorted(m for m in ("onnxruntime", "tokenizers") if m in sys.modules)), file=sys.stderr)
sys.exit(code)
"""


def test_a_prose_query_asked_again_finds_the_same_without_loading_the_model(embedded: Path):
    query = "what made the nightly job slow down after the first batches"
    runs = [
        subprocess.run([sys.executable, "-c", SEARCH_AND_LIST_RUNTIME.format(query=query)], env=env_for(embedded),
                       capture_output=True, text=True, timeout=120)  # fmt: skip
        for _ in range(2)
    ]
    assert all(r.returncode == 0 for r in runs), runs[0].stderr
    first, again = (r.stderr.strip().splitlines()[-1] for r in runs)
    assert first == "RUNTIME:onnxruntime" and again == "RUNTIME:"
    assert json.loads(runs[0].stdout) == json.loads(runs[1].stdout)


COUNT_MODEL_RUNS = (
    "import atexit, sys\nimport core.semantic.embedder as embedder\n"
    "_one = embedder.Embedder.embed_one\nruns = []\n"
    "def counted(self, text):\n    runs.append(text)\n    return _one(self, text)\n"
    "embedder.Embedder.embed_one = counted\n"
    "atexit.register(lambda: print(f'MODEL RUNS: {len(runs)}', file=sys.stderr))\n"
)


def _model_runs(stderr: str) -> int:
    return int(stderr.rsplit("MODEL RUNS: ", 1)[1].split()[0])


def test_a_grown_turn_and_a_repeated_answer_reuse_their_vectors(tmp_path: Path):
    inject = tmp_path / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(COUNT_MODEL_RUNS)
    t = late_turn()
    other = ClaudeTranscript("5b0f9e2a-1c3d-4e5f-8a7b-6c5d4e3f2a1b", cwd="/home/dev/other", start=datetime(2026, 11, 21, tzinfo=timezone.utc))
    other.user("Same problem in the staging export: can you check?")
    other.assistant(" ".join(FILLER))
    other.assistant(CONCLUSION)  # the same answer, word for word
    root = tmp_path / ".claude" / "projects"
    t.write_under(root)
    other.write_under(root)
    first = cli(tmp_path, "index", PYTHONPATH=str(inject))
    with _archive(tmp_path) as archive:
        slots = archive.semantic.store.load().rows
    assert _model_runs(first.stderr) == slots - 1  # the repeated answer was embedded once for both
    t.assistant("Follow-up: a regression test now exports 10,000 rows and checks the pool never holds more than a connection per batch.")
    t.write_under(root)  # the session grows: its last turn gets a new doc id
    grown = cli(tmp_path, "index", PYTHONPATH=str(inject))
    assert "embedded 1 passage for" in grown.stderr
    assert _model_runs(grown.stderr) == 2  # its start (which now holds the new text) and the new message; the rest reused
    with _archive(tmp_path) as archive:
        embedded, passages = archive.semantic.counts()
        assert embedded == passages == 2


def test_a_passage_without_text_counts_as_embedded(tmp_path: Path):
    t = ClaudeTranscript("7a1e3c5d-2b4f-4c6e-8d0a-1f3e5c7a9b2d", cwd="/home/dev/tools", start=datetime(2026, 11, 22, tzinfo=timezone.utc))
    t.tool("Bash", {"command": "git status"}, "nothing to commit")  # before any prompt: a turn of tool calls only
    t.user("what changed in the exporter since yesterday?")
    t.assistant("Only the batch size of the connection reuse; nothing else moved.")
    t.write_under(tmp_path / ".claude" / "projects")
    cli(tmp_path, "index")
    with _archive(tmp_path) as archive:
        embedded, passages = archive.semantic.counts()
        assert embedded == passages == 2  # not waiting for vectors for ever (index said so at each run)
    assert cli(tmp_path, "index").stderr == "" and "meaning_missing" not in search_json(tmp_path, "what moved in the exporter lately")


def test_while_typing_meaning_uses_the_finished_words(embedded: Path):
    """Search as you type: the half-typed last word is not embedded (its vector means nothing yet, and a
    model run per key would cost the app its keystroke budget); the words before it are."""
    from core.query.meaning import meant_text

    assert meant_text("the midnight extract exhausted its db hand", typing=True) == "the midnight extract exhausted its db"
    assert meant_text("the midnight extract exhausted its db ", typing=True) == "the midnight extract exhausted its db "
    assert meant_text(PARAPHRASE, typing=False) == PARAPHRASE
    with _archive(embedded) as archive:
        typed = archive.search(PARAPHRASE[:-3], typing=True)  # "... brand new han"
        assert [h for h in typed if h.session_id == LATE and h.by_meaning]
        assert not [h for h in archive.search("the midnight extr", typing=True) if h.by_meaning]  # two finished words: not prose


def _keys(archive: Archive, start_job: Callable[[], None] = lambda: None) -> tuple[float, float]:
    """A burst of keys: a search every 0.1 s for 1.5 s, ``start_job`` called after the first;
    when the first and the last came."""
    first = last = time.monotonic()
    archive.search("rollover_period")
    start_job()
    while time.monotonic() - first < 1.5:
        time.sleep(0.1)
        last = time.monotonic()
        archive.search("rollover_period")
    return first, last


def test_the_background_job_starts_its_work_only_once_searches_pause(tmp_path: Path, monkeypatch):
    """Started while someone types (the app starts it two seconds after its first sync, and again
    after each live change), the job loads no model and looks at no passage until the searches
    pause: that work shares the interpreter with them too."""
    import threading

    import core.semantic.embedder as embedder
    from core.archive.catalog import Catalog
    from core.archive.semantic_job import QUIET_AFTER_SEARCH
    from core.semantic.vectors import VectorStore

    write_demo_corpus(tmp_path)
    in_job: list[tuple[str, float]] = []  # what the job's thread did, when
    real_load, real_docs, real_prepare = embedder.load, Catalog.docs, VectorStore.prepare

    def load(*args, **kwargs):
        in_job.append(("model", time.monotonic()))
        return real_load(*args, **kwargs)

    def docs(self, *args, **kwargs):
        if threading.current_thread().name == "relay-search-embed":
            in_job.append(("passages", time.monotonic()))
        return real_docs(self, *args, **kwargs)

    def prepare(self):
        in_job.append(("a pass", time.monotonic()))
        return real_prepare(self)

    monkeypatch.setattr(embedder, "load", load)
    monkeypatch.setattr(Catalog, "docs", docs)
    monkeypatch.setattr(VectorStore, "prepare", prepare)
    with _archive(tmp_path) as archive:
        archive.sync()
        _, last = _keys(archive, archive.embed_in_background)
        assert archive.wait_semantic(timeout=300)
        early = [(what, round(at - last, 3)) for what, at in in_job if at < last + QUIET_AFTER_SEARCH - 0.05]
        assert early == [], early
        assert {what for what, _ in in_job} == {"model", "a pass", "passages"}

        in_job.clear()  # a live change while someone types: a new session, a new pass
        t = ClaudeTranscript("3c2b1a09-8f7e-4d6c-9b5a-4e3d2c1b0a9f", cwd="/home/dev/late", start=datetime(2026, 11, 23, tzinfo=timezone.utc))
        t.user("why does the nightly export stall at the third batch?")
        t.assistant("The connection pool ran dry: each batch held a connection until the next began.")
        t.write_under(tmp_path / ".claude" / "projects")

        def changed() -> None:
            archive.sync()
            archive.search("rollover_period")  # (keys came while it synced, however long that took)
            archive.embed_in_background()

        _, last = _keys(archive, changed)
        assert archive.wait_semantic(timeout=300)
        assert archive.semantic.counts()[0] == archive.semantic.counts()[1]
    early = [(what, round(at - last, 3)) for what, at in in_job if at < last + QUIET_AFTER_SEARCH - 0.05]
    assert early == [], early
    assert {what for what, _ in in_job} == {"a pass", "passages"}


def test_a_long_lived_writer_s_embedding_waits_while_searches_come(tmp_path: Path, monkeypatch):
    """The app, mcp and serve embed in the background; a search (a keystroke in the app) makes that
    job wait QUIET_AFTER_SEARCH, so the two never share the interpreter during a burst of keys."""
    import core.semantic.embedder as embedder
    from core.archive.semantic_job import QUIET_AFTER_SEARCH

    write_demo_corpus(tmp_path)
    started: list[float] = []
    real = embedder.Embedder.embed_one

    def counted(self, text):
        started.append(time.monotonic())
        return real(self, text)

    monkeypatch.setattr(embedder.Embedder, "embed_one", counted)
    with _archive(tmp_path) as archive:
        archive.sync()
        archive.embed_in_background()
        deadline = time.monotonic() + 120
        while len(started) < 3:  # the job is under way
            assert time.monotonic() < deadline
            time.sleep(0.01)
        first, last = _keys(archive)  # keys keep coming
        quiet = [t for t in started if first + 0.05 < t < last + QUIET_AFTER_SEARCH - 0.05]
        assert quiet == [], f"{len(quiet)} model runs while searches came"
        assert archive.wait_semantic(timeout=300)  # and it goes on afterwards
        assert archive.semantic.counts()[0] == archive.semantic.counts()[1]


def test_a_burst_of_keys_during_a_batch_s_last_model_run_holds_off_the_rest_of_the_batch(tmp_path: Path, monkeypatch):
    """Keys that begin during a batch's last model run: the batch's file is not written, the next
    batch's passages are not read and the files are not merged until the searches pause (each is
    work in the interpreter the keys share; model runs alone were paced before)."""
    import threading

    import core.archive.semantic_job as semantic_job
    import core.semantic.embedder as embedder
    from core.archive.catalog import Catalog
    from core.semantic.vectors import VectorStore

    quiet = semantic_job.QUIET_AFTER_SEARCH
    write_demo_corpus(tmp_path)
    monkeypatch.setattr(semantic_job, "FILE_BATCH", 1)  # a batch per passage: most model runs end one
    steps: list[tuple[str, float]] = []  # the job's steps other than model runs, when each began
    searches: list[float] = []
    in_run = threading.Event()
    real_run, real_docs, real_add, real_merge = embedder.Embedder.embed_one, Catalog.docs, VectorStore.add, VectorStore.merge
    real_searched = semantic_job.SemanticJob.searched

    def slow_run(self, text):
        in_run.set()
        time.sleep(0.03)  # a model run long enough for a burst to begin inside it
        try:
            return real_run(self, text)
        finally:
            in_run.clear()

    def step(name: str, real):
        def recorded(self, *args, **kwargs):
            if threading.current_thread().name == "relay-search-embed":
                steps.append((name, time.monotonic()))
            return real(self, *args, **kwargs)

        return recorded

    def searched(self):
        searches.append(time.monotonic())
        real_searched(self)

    monkeypatch.setattr(embedder.Embedder, "embed_one", slow_run)
    monkeypatch.setattr(Catalog, "docs", step("passages read", real_docs))
    monkeypatch.setattr(VectorStore, "add", step("file written", real_add))
    monkeypatch.setattr(VectorStore, "merge", step("files merged", real_merge))
    monkeypatch.setattr(semantic_job.SemanticJob, "searched", searched)
    with _archive(tmp_path) as archive:
        archive.sync()
        archive.embed_in_background()
        bursts = []
        for _ in range(4):  # each begins inside a model run; most runs are their batch's last
            assert in_run.wait(timeout=120)
            searches.clear()
            _keys(archive)
            bursts.append((searches[0], searches[-1]))
            time.sleep(quiet + 0.2)  # the job goes on between bursts
        assert archive.wait_semantic(timeout=300)
        assert archive.semantic.counts()[0] == archive.semantic.counts()[1]
    during = [(what, round(at - first, 3)) for what, at in steps for first, last in bursts if first < at < last + quiet - 0.05]
    assert during == [], during
    assert {what for what, _ in steps} == {"passages read", "file written", "files merged"}
