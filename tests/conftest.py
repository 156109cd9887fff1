from __future__ import annotations

from pathlib import Path

import pytest

from core.fixtures.demo import write_demo_corpus

from .support import open_archive


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
