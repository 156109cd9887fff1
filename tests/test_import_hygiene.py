"""``core`` is the headless core: importing it (and its CLI entry point) never loads Textual.

Run in a fresh interpreter so what this test process already imported cannot hide a leak
(harlequin's ``tests/unit_tests/test_import_hygiene.py`` does the same).
"""

from __future__ import annotations

import subprocess
import sys

import pytest

CHECK = """
import sys
{imports}
leaked = sorted(m for m in sys.modules if m == "textual" or m.startswith("textual."))
print(",".join(leaked))
"""


@pytest.mark.parametrize(
    "imports",
    [
        "import core, core.api, core.front.cli",
        "import core.api, core.front.cli, core.config, core.archive.chains, core.refs, core.model, core.sources.claude, core.fixtures.demo",
        "from core.front.cli import build_parser; build_parser()",
    ],
)
def test_core_never_imports_textual(imports):
    proc = subprocess.run(
        [sys.executable, "-c", CHECK.format(imports=imports)], capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "", f"core pulled in: {proc.stdout.strip()}"


HEAVY = ("bm25s", "scipy", "numba", "jax", "torch")

SEARCH = """
import sys
from core.front.cli import main
code = main(["search", "watchdog", "--json"])
heavy = sorted(m for m in sys.modules if m.split(".")[0] in {heavy!r})
print("HEAVY:" + ",".join(heavy), file=sys.stderr)
sys.exit(code)
"""


def test_a_search_loads_no_heavy_optional_package(tmp_path):
    """bm25s (and the numba/jax it loads when installed) cost seconds per CLI call."""
    import os

    from core.fixtures.demo import write_demo_corpus

    write_demo_corpus(tmp_path)
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("XDG_CACHE_HOME", None)
    proc = subprocess.run(
        [sys.executable, "-c", SEARCH.format(heavy=set(HEAVY))], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert '"results"' in proc.stdout
    assert "HEAVY:\n" in proc.stderr, proc.stderr


EMBEDDING = ("onnxruntime", "tokenizers")

WARM_SEARCH = """
import sys
from core.front.cli import main
code = main(["search", {query!r}, "--json"])
loaded = sorted(m for m in sys.modules if m in {embedding!r})
print("EMBEDDING:" + ",".join(loaded), file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.semantic
@pytest.mark.parametrize(
    ("query", "embeds"),
    [("rollover_period", False), ("fix test_invoice_rollover flaky in CI", False), ("the page squashes badly on a phone screen", True)],
)
def test_a_code_like_search_loads_no_embedding_runtime(tmp_path, query, embeds):
    """Hybrid recall's onnxruntime loads only for a prose query, even with vectors on disk (and
    Hugging Face tokenizers never: the tokenizer is ours, in Python)."""
    import os

    from core.fixtures.demo import write_demo_corpus
    from core.semantic.embedder import SHIPPED_DIR, model_state

    state = model_state({"RELAY_SEARCH_MODEL": str(SHIPPED_DIR)})
    if not state.on:
        pytest.skip(f"the model cannot run here: {state.reason}")
    write_demo_corpus(tmp_path)
    env = {**os.environ, "HOME": str(tmp_path)}
    env.pop("XDG_CACHE_HOME", None)
    subprocess.run([sys.executable, "-m", "core", "index"], env=env, check=True, capture_output=True, timeout=300)
    proc = subprocess.run(
        [sys.executable, "-c", WARM_SEARCH.format(query=query, embedding=set(EMBEDDING))],
        capture_output=True, text=True, timeout=120, env=env,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    loaded = proc.stderr.split("EMBEDDING:")[1].strip()
    assert (loaded == "onnxruntime") if embeds else (loaded == ""), proc.stderr


# What a one-shot search never needs (issue 35): the front ends' stacks, the team store, the
# embedding runtime and the vector code (a code-like query uses no meaning, even with the model
# on), the cold index's worker processes and merge policy, relinking, the usage sums, resume rules,
# and the thread pool and logging modules only long-lived processes use. And dataclasses: a
# frozen slotted dataclass compiles six methods when its module loads (~5 M instructions each;
# the 28 a search used to create were ~18% of it), so the value types on this path are msgspec
# Structs, built in C.
ONE_SHOT_NEVER = (
    "textual", "mcp", "starlette", "uvicorn", "pydantic", "httpx", "psycopg", "watchdog", "onnxruntime", "tokenizers",
    "concurrent.futures", "logging", "multiprocessing", "dataclasses",
    "core.team.store", "core.front.mcp", "core.front.http_api", "core.front.serve", "core.outputs.export",
    "core.semantic.embedder", "core.semantic.vectors", "core.semantic.passages", "core.semantic.query_vectors",
    "core.index.merge_policy", "core.archive.links", "core.archive.sessions", "core.archive.watch",
    "core.outputs.usage", "core.outputs.usage_blocks", "core.outputs.resume",
)

ONE_SHOT = """
import sys
from core.front.cli import main
code = main({argv!r})
loaded = sorted(m for m in sys.modules if any(m == n or m.startswith(n + ".") for n in {never!r}))
print("LOADED:" + ",".join(loaded), file=sys.stderr)
sys.exit(code)
"""


@pytest.mark.parametrize("model", ["off", "on"])
@pytest.mark.parametrize(
    "argv",
    [["search", "watchdog"], ["search", "watchdog", "--json"], ["list", "--limit", "3"], ["show", "velvet-puzzling-eclipse#1", "--limit", "1"]],
    ids=["search", "search-json", "list", "show"],
)
def test_a_warm_one_shot_command_imports_only_what_it_uses(demo_home, argv, model):
    """Through the real CLI, on an indexed cache with nothing changed: a one-shot command loads
    none of what it does not use. ``on``: the model is on (no ``RELAY_SEARCH_MODEL=off``) and
    the query is two words at most, which go to BM25 alone: nothing of the model may load."""
    import os

    env = {**os.environ, "HOME": str(demo_home)}
    env.pop("XDG_CACHE_HOME", None)
    if model == "on":
        env.pop("RELAY_SEARCH_MODEL", None)
    proc = subprocess.run(
        [sys.executable, "-c", ONE_SHOT.format(argv=argv, never=ONE_SHOT_NEVER)], capture_output=True, text=True, timeout=120, env=env
    )
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip(), "the command printed nothing: it checked nothing"
    loaded = proc.stderr.split("LOADED:")[1].strip()
    assert loaded == "", f"{' '.join(argv)} loaded {loaded}"


@pytest.fixture(scope="module")
def demo_home(tmp_path_factory):
    """The demo corpus, indexed words only by the CLI (so the commands above find it warm)."""
    import os

    from core.fixtures.demo import write_demo_corpus

    home = tmp_path_factory.mktemp("home")
    write_demo_corpus(home)
    env = {**os.environ, "HOME": str(home), "RELAY_SEARCH_MODEL": "off"}
    env.pop("XDG_CACHE_HOME", None)
    subprocess.run([sys.executable, "-m", "core", "index"], env=env, check=True, capture_output=True, timeout=300)
    return home
