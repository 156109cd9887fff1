"""Hybrid recall (core/query/hybrid.py, core/semantic/, core/archive/semantic_job.py) through the front ends.

One demo corpus is indexed and embedded once per module by ``relay-search index`` (a real
subprocess: ~300 passages, a few seconds); each test that damages or moves the cache works
on a copy of it.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from core.api import Archive
from core.config import Config
from core.fixtures.demo import write_demo_corpus
from core.front.http_api import build_http_app
from core.front.mcp import build_server
from core.query.hybrid import is_code_like
from core.semantic.embedder import MODEL_ENV, MODEL_FILE, SHIPPED_DIR, model_state
from core.semantic.vectors import VECTORS_DIR

REPO = Path(__file__).resolve().parent.parent
PARAPHRASE = "the page squashes badly on a phone screen"  # the storefront's mobile layout turn, in other words
MEANT_REF = "amber-drifting-lantern#1:1"  # "on mobile the layout collapses wrong: the sidebar ends up above the form"
CODE_LIKE = [
    "rollover_period",
    "`datetime.now`",
    "sidebar form",
    "fix test_invoice_rollover flaky in CI",
    "run pytest -q again",
]

STATE = model_state({MODEL_ENV: str(SHIPPED_DIR)})  # the shipped model, whatever this shell's RELAY_SEARCH_MODEL says
pytestmark = [
    pytest.mark.semantic,
    pytest.mark.skipif(not STATE.on, reason=f"the model cannot run here: {STATE.reason}"),
]


def env_for(home: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("XDG_") and k != MODEL_ENV}
    return {**env, "HOME": str(home), "PYTHONPATH": str(REPO), **extra}


def cli(home: Path, *args: str, ok: bool = True, **extra: str) -> subprocess.CompletedProcess:
    proc = subprocess.run(
        [sys.executable, "-m", "core", *args], env=env_for(home, **extra), capture_output=True, text=True, timeout=300
    )
    assert "Traceback" not in proc.stderr, proc.stderr
    if ok:
        assert proc.returncode == 0, proc.stderr
    return proc


def search(home: Path, query: str, *args: str, **extra: str) -> list[dict[str, Any]]:
    return json.loads(cli(home, "search", query, "--json", "--limit", "10", *args, **extra).stdout)["results"]


def vector_files(home: Path) -> dict[str, int]:
    root = home / ".cache" / "relay-search" / VECTORS_DIR
    return {str(p.relative_to(root)): p.stat().st_size for p in sorted(root.rglob("*.npz"))}


def semantic_stats(home: Path, **extra: str) -> dict[str, Any]:
    return json.loads(cli(home, "index", "--json", **extra).stdout)["semantic"]


@pytest.fixture(scope="module")
def indexed(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("semantic")
    write_demo_corpus(home)
    cli(home, "index")  # indexes, then embeds every passage before it exits
    return home


@pytest.fixture
def copy(tmp_path: Path) -> Path:
    """A home of its own, indexed and embedded, for a test that changes the cache (a copied
    home would not do: the catalog keeps absolute paths, so a copy indexes everything anew)."""
    write_demo_corpus(tmp_path)
    cli(tmp_path, "index")
    return tmp_path


def test_a_paraphrase_finds_its_turn_by_meaning(indexed: Path):
    lexical = search(indexed, PARAPHRASE, "--mode", "lexical")
    assert MEANT_REF not in [h["ref"] for h in lexical]  # none of its words is in that turn
    hybrid = search(indexed, PARAPHRASE)
    found = {h["ref"]: h for h in hybrid}
    assert MEANT_REF in found, [h["ref"] for h in hybrid]
    assert found[MEANT_REF]["by_meaning"] is True
    # its snippet comes from the passage that matched (no query word to centre on: its start)
    assert found[MEANT_REF]["snippet"].startswith("Better, but on mobile the layout collapses wrong"), found[MEANT_REF]["snippet"]
    assert all("by_meaning" not in h for h in hybrid if h["ref"] in {x["ref"] for x in lexical})
    text = cli(indexed, "search", PARAPHRASE).stdout
    assert f"{MEANT_REF}  [" in text and "(by meaning)" in text


@pytest.mark.parametrize("query", CODE_LIKE)
def test_a_code_like_query_ranks_exactly_as_bm25(indexed: Path, query: str):
    assert is_code_like(query)
    assert search(indexed, query) == search(indexed, query, "--mode", "lexical")


def test_hybrid_mode_forces_meaning_even_for_a_code_like_query(indexed: Path):
    forced = search(indexed, "smartphone display", "--mode", "hybrid")
    assert forced and forced[0]["ref"] == MEANT_REF
    assert search(indexed, "smartphone display") == search(indexed, "smartphone display", "--mode", "lexical")
    assert search(indexed, "smartphone display") != forced


@pytest.mark.parametrize(
    ("query", "code_like"),
    [
        ("how did we fix the flaky invoice test", False),
        ("two words", True),
        ("why does foo_bar break things", True),
        ("the parseArgs helper fails on windows", True),
        ("upgrade to python3 and retry the build", True),
        ("act --container-architecture linux/amd64 -j test", True),
        ('the "exact phrase" in the middle', True),
        ("what did we decide, finally, about caching?", False),
    ],
)
def test_the_routing_rule(query: str, code_like: bool):
    assert is_code_like(query) is code_like


def test_every_filter_applies_to_the_meaning_list(indexed: Path):
    assert MEANT_REF in [h["ref"] for h in search(indexed, PARAPHRASE, "--project", "storefront")]
    for args in (
        ["--project", "billing-api"],
        ["--agent", "codex"],
        ["--session", "velvet-puzzling-eclipse"],
        ["--to", "2000-01-01"],
    ):
        hits = search(indexed, PARAPHRASE, *args)
        assert MEANT_REF not in [h["ref"] for h in hits], args
    assert all(h["project"] == "billing-api" for h in search(indexed, PARAPHRASE, "--project", "billing-api"))


@pytest.mark.parametrize(
    "query", ["lunch menu for the office party next friday", "kubernetes helm chart ingress TLS renewal"]
)
def test_nothing_is_invented_for_an_unrelated_query(indexed: Path, query: str):
    """The cosine floor: an archive that never discussed it gets no hit by meaning (BM25's word matches stay)."""
    hybrid = search(indexed, query)
    assert not any(h.get("by_meaning") for h in hybrid)
    assert {h["ref"] for h in hybrid} <= {h["ref"] for h in search(indexed, query, "--mode", "lexical")}


@pytest.mark.parametrize("setting", ["missing", "bad-hash", "off"])
def test_without_the_model_search_is_bm25_and_stats_say_why(indexed: Path, tmp_path: Path, setting: str):
    if setting == "missing":
        value, why = str(tmp_path / "nowhere"), "model file missing"
    elif setting == "bad-hash":
        folder = tmp_path / "model"
        shutil.copytree(SHIPPED_DIR, folder)
        data = bytearray((folder / MODEL_FILE).read_bytes())
        data[len(data) // 2] ^= 0xFF
        (folder / MODEL_FILE).write_bytes(bytes(data))
        value, why = str(folder), "wrong sha256"
    else:
        value, why = "off", "turned off"
    hits = search(indexed, PARAPHRASE, **{MODEL_ENV: value})
    assert hits == search(indexed, PARAPHRASE, "--mode", "lexical")
    stats = cli(indexed, "index", "--stats", **{MODEL_ENV: value}).stdout
    assert "semantic recall: off (" in stats and why in stats, stats
    state = semantic_stats(indexed, **{MODEL_ENV: value})
    assert state["on"] is False and why in state["reason"]


@pytest.mark.parametrize("model", ["off", "shipped"])
def test_with_the_model_off_a_search_leaves_the_vectors_unread(indexed: Path, monkeypatch, model: str):
    """The vectors are read for the query's meaning only: turned off, a long-lived process
    would hold them for nothing (17 MB on the 1.8 GB bench)."""
    from core.semantic.vectors import VectorStore

    reads: list[int] = []
    real_load = VectorStore.load

    def counted_load(self):
        reads.append(1)
        return real_load(self)

    monkeypatch.setattr(VectorStore, "load", counted_load)
    setting = "off" if model == "off" else str(SHIPPED_DIR)
    config = Config.from_env({**env_for(indexed), MODEL_ENV: setting})
    with Archive.open(config, sync=False) as archive:
        hits = archive.search(PARAPHRASE, limit=10)
    assert hits
    assert bool(reads) == (model == "shipped")


def test_vectors_persist_and_a_damaged_file_is_rebuilt(copy: Path):
    before = vector_files(copy)
    assert before
    state = semantic_stats(copy)  # a restart: nothing to embed again
    assert state["on"] and state["embedded"] == state["passages"] > 0
    assert vector_files(copy) == before
    name = next(iter(before))
    path = copy / ".cache" / "relay-search" / VECTORS_DIR / name
    data = bytearray(path.read_bytes())
    data[len(data) // 2 : len(data) // 2 + 64] = b"\x00" * 64
    path.write_bytes(bytes(data))
    search(copy, PARAPHRASE)  # a reader skips the damaged file, no traceback
    state = semantic_stats(copy)  # the writer deletes it and embeds its passages again
    assert state["embedded"] == state["passages"]
    assert name not in vector_files(copy)
    assert MEANT_REF in [h["ref"] for h in search(copy, PARAPHRASE)]


def test_a_model_change_re_embeds(copy: Path):
    root = copy / ".cache" / "relay-search" / VECTORS_DIR
    old = root / "some-older-model"
    shutil.copytree(next(p for p in root.iterdir() if p.is_dir()), old)
    cli(copy, "index")
    assert not old.exists()


def test_a_second_process_reuses_the_vectors_while_another_holds_the_lock(copy: Path):
    before = vector_files(copy)
    hold = (
        "from core.api import Archive; from core.config import Config; import sys\n"
        "a = Archive(Config.from_env(), writer=True); print('held' if a.writer else 'no', flush=True); sys.stdin.read()"
    )
    holder = subprocess.Popen(
        [sys.executable, "-c", hold], env=env_for(copy), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        found = {h["ref"]: h for h in search(copy, PARAPHRASE)}
        assert found[MEANT_REF]["by_meaning"] is True
    finally:
        assert holder.stdin is not None
        holder.stdin.close()
        holder.wait(timeout=30)
    assert vector_files(copy) == before  # read, not written


def _archive(home: Path) -> Archive:
    return Archive.open(Config.from_env(env_for(home)), read_only=True, sync=False)


async def test_mcp_mode_and_the_by_meaning_label(indexed: Path):
    archive = _archive(indexed)
    try:
        async with Client(build_server(archive), raise_exceptions=True) as client:

            async def call(**args: Any) -> list[dict[str, Any]]:
                result = await client.call_tool("search_history", {"query": PARAPHRASE, "limit": 10, **args})
                assert result.structured_content is not None
                return result.structured_content["results"]

            hybrid, lexical = await call(), await call(mode="lexical")
            assert any(h["ref"] == MEANT_REF and h["by_meaning"] for h in hybrid)
            assert MEANT_REF not in [h["ref"] for h in lexical]
            assert MEANT_REF not in [h["ref"] for h in await call(project="billing-api")]
    finally:
        archive.close()


async def test_http_mode_label_and_stats(indexed: Path):
    archive = _archive(indexed)
    try:
        transport = httpx.ASGITransport(app=build_http_app(archive))
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            hybrid = (await client.get("/search", params={"q": PARAPHRASE})).json()["results"]
            lexical = (await client.get("/search", params={"q": PARAPHRASE, "mode": "lexical"})).json()["results"]
            assert any(h["ref"] == MEANT_REF and h.get("by_meaning") for h in hybrid)
            assert MEANT_REF not in [h["ref"] for h in lexical]
            code = (await client.get("/search", params={"q": "rollover_period"})).json()["results"]
            assert (
                code
                == (await client.get("/search", params={"q": "rollover_period", "mode": "lexical"})).json()["results"]
            )
            bad = await client.get("/search", params={"q": PARAPHRASE, "mode": "psychic"})
            assert bad.status_code == 400 and "mode must be one of" in bad.text
            stats = (await client.get("/stats")).json()["semantic"]
            assert stats["on"] and stats["embedded"] == stats["passages"] > 0
    finally:
        archive.close()


def test_a_rebuild_embeds_the_new_passages_again(copy: Path):
    before = vector_files(copy)
    cli(copy, "index", "--rebuild")
    state = semantic_stats(copy)
    assert state["embedded"] == state["passages"] > 0
    assert not set(before) & set(vector_files(copy))  # the old doc ids' vectors went with the old catalog
    assert MEANT_REF in [h["ref"] for h in search(copy, PARAPHRASE)]


LEAN_PROBE = """
import sys
from core.memory import long_lived_process
from core.semantic import embedder
if sys.argv[1] == "long-lived":
    long_lived_process()
model = embedder.load({embedder.MODEL_ENV: str(embedder.SHIPPED_DIR)})
try:
    entry = model._session.get_session_options().get_session_config_entry("session.disable_prepacking")
except Exception:  # (onnxruntime raises for an entry never set)
    entry = ""
vector = model.embed_one("the page squashes badly on a phone screen")
print(entry or "-", " ".join(f"{x:.6f}" for x in vector[:8]))
"""


@pytest.mark.parametrize("kind", ["long-lived", "one-shot"])
def test_a_long_lived_process_loads_the_model_without_prepacked_weights(kind: str):
    """The app, ``mcp`` and ``serve`` keep one copy of the weights (4–5 MB less resident); a
    foreground ``index`` prepacks them for speed. The vectors are the same either way."""
    run = [subprocess.run([sys.executable, "-c", LEAN_PROBE, k], capture_output=True, text=True, timeout=120, cwd=REPO)
           for k in (kind, "one-shot")]  # fmt: skip
    assert all(r.returncode == 0 for r in run), run[0].stderr
    (entry, *vector), (_, *plain) = (r.stdout.split() for r in run)
    assert entry == ("1" if kind == "long-lived" else "-")
    assert vector == plain
