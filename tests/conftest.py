from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from core.fixtures.demo import write_demo_corpus

from .support import open_archive


@pytest.fixture(autouse=True)
def _words_only_unless_semantic(request, monkeypatch):
    """Hybrid recall off (``RELAY_SEARCH_MODEL=off``) in every test not marked ``semantic``.

    The other tests pin BM25 rankings and timings; with the model on, ``relay-search index``
    would also embed every passage and a long-lived archive would embed in the background.
    Hybrid recall has tests of its own (tests/test_semantic.py), through every front end.
    """
    if request.node.get_closest_marker("semantic") is None:
        monkeypatch.setenv("RELAY_SEARCH_MODEL", "off")
    else:
        monkeypatch.delenv("RELAY_SEARCH_MODEL", raising=False)


@pytest.fixture
def demo_home(tmp_path: Path):
    corpus = write_demo_corpus(tmp_path)
    return tmp_path, corpus


@pytest.fixture
def demo(demo_home):
    home, corpus = demo_home
    archive = open_archive(home)
    try:
        yield archive, corpus
    finally:
        archive.close()


@pytest.fixture
def clipboard(monkeypatch):
    """pyperclip replaced by a spy that records what the app copied (tui.testing)."""
    import pyperclip

    from tui.testing import ClipboardSpy

    spy = ClipboardSpy()
    monkeypatch.setattr(pyperclip, "copy", spy)
    return spy


@pytest.fixture
def tiny_disk(tmp_path: Path) -> Iterator[Path]:
    """A real 2 MB filesystem (tmpfs), for a real ENOSPC: needs root (or CAP_SYS_ADMIN); skips elsewhere."""
    mount = tmp_path / "disk"
    mount.mkdir()
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m", "tmpfs", str(mount)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)
