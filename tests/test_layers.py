"""The house: core/ in layers that import one way, no import circles, small modules.

The layer order lives in ``pyproject.toml`` (``[tool.importlinter]``, run here through
import-linter's own entry point) and in ``docs/architecture.md``. A back-import — an
adapter importing the index, the archive importing the query API — fails the first
test; two modules importing each other, even only for type checking, fail the second.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import grimp
import pytest
from importlinter.cli import lint_imports

ROOT = Path(__file__).resolve().parent.parent
MAX_LINES = 450
LAYERS = ("sources", "index", "archive", "query", "outputs", "front")
MAX_LOOSE_MODULES = 12  # core/'s own .py files: the API and the vocabulary every layer shares


@pytest.fixture
def at_the_root(monkeypatch):
    monkeypatch.chdir(ROOT)
    monkeypatch.syspath_prepend(str(ROOT))


def test_the_layer_contracts_hold(at_the_root, capsys):
    code = lint_imports(config_filename=str(ROOT / "pyproject.toml"), no_cache=True, no_logo=True)
    report = capsys.readouterr().out
    assert code == 0, report
    assert "0 broken" in report and "2 kept" in report, report


def _circles(graph: grimp.ImportGraph) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    on_stack: set[str] = set()
    stack: list[str] = []
    found: list[list[str]] = []
    for start in sorted(graph.modules):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.find_modules_directly_imported_by(start))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            for child in children:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.find_modules_directly_imported_by(child)))))
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def test_no_module_imports_itself_round_a_circle(at_the_root):
    # (type-checking imports count: a circle there is still two modules that need each other)
    graph = grimp.build_graph("core", "tui", exclude_type_checking_imports=False, cache_dir=None)
    assert _circles(graph) == []


def test_the_circle_finder_finds_a_circle():
    graph = grimp.ImportGraph()
    for name in ("a", "a.x", "a.y", "a.z"):
        graph.add_module(name)
    graph.add_import(importer="a.x", imported="a.y")
    graph.add_import(importer="a.y", imported="a.z")
    graph.add_import(importer="a.z", imported="a.x")
    assert _circles(graph) == [["a.x", "a.y", "a.z"]]


def _modules(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


@pytest.mark.parametrize("package", ["core", "tui"])
def test_every_module_has_one_job_and_fits_in_450_lines(package):
    too_long = {
        str(p.relative_to(ROOT)): n
        for p in _modules(package)
        if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_LINES
    }
    assert too_long == {}


def test_ls_core_shows_the_flow():
    entries = {p.name for p in (ROOT / "core").iterdir() if not p.name.startswith((".", "__pycache__"))}
    assert set(LAYERS) <= entries
    for layer in LAYERS:
        assert (ROOT / "core" / layer / "__init__.py").is_file(), f"core/{layer} is not a package"
    loose = sorted(name for name in entries if name.endswith(".py") and name != "__init__.py")
    assert len(loose) <= MAX_LOOSE_MODULES, loose


def test_each_layer_imports_on_its_own():
    # each layer package imports on its own (no hidden order dependence between them)
    import subprocess

    for layer in LAYERS:
        proc = subprocess.run(
            [sys.executable, "-c", f"import core.{layer}"], capture_output=True, text=True, timeout=60,
            cwd=ROOT, env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        assert proc.returncode == 0, proc.stderr
