"""``relay-search export`` of a transcript holding terminal escapes (issue #37 item 6).

Markdown is plain text a user may ``cat``: its control characters are shown as the CLI
shows them (``␛``, ``␇``, ``␡``, ``<9B>``). HTML the same (``<9B>`` as text, not a tag).
JSON escapes them, DEL and C1 too (``json.dumps`` leaves those raw). Checked byte by byte.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from .hostile_support import run_cli
from .test_tui_escapes import ANSWER, COMMAND, OUTPUT, PROMPT, SID, write_poisoned


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = write_poisoned(tmp_path_factory.mktemp("export-escapes"))
    assert run_cli(home, "index").returncode == 0
    return home


def controls(data: bytes) -> list[str]:
    """The control characters in ``data`` (UTF-8, strictly) but newline and tab."""
    text = data.decode("utf-8")
    return sorted({f"U+{ord(c):04X}" for c in text if (ord(c) < 0x20 and c not in "\n\t") or 0x7F <= ord(c) <= 0x9F})


@pytest.mark.parametrize("fmt", ["md", "html"])
def test_markdown_and_html_show_the_escapes(home: Path, tmp_path: Path, fmt: str):
    target = tmp_path / f"out.{fmt}"
    proc = run_cli(home, "export", SID[:8], "--format", fmt, "-o", str(target))
    assert proc.returncode == 0, proc.stderr
    data = target.read_bytes()
    assert not controls(data), controls(data)
    text = data.decode("utf-8")
    assert "␛]52;c;cm0gLXJmIH4K␇" in text and "␛]0;owned␇" in text and "␛[2J" in text and "␡" in text
    assert ("<9B>31m" if fmt == "md" else "&lt;9B&gt;31m") in text
    assert "kestrel output ␛" in text  # the tool's output too
    assert "<9B>" not in text or fmt == "md"  # (in HTML <9B> would be markup)


def test_json_escapes_them_del_and_c1_too(home: Path, tmp_path: Path):
    target = tmp_path / "out.json"
    proc = run_cli(home, "export", SID[:8], "--format", "json", "-o", str(target))
    assert proc.returncode == 0, proc.stderr
    data = target.read_bytes()
    assert not controls(data), controls(data)
    assert b"\\u001b]52;c;" in data and b"\\u009b31m" in data and b"\\u007f" in data
    text = json.dumps(json.loads(data))  # and the strings come back whole
    for piece in (PROMPT, ANSWER, COMMAND, OUTPUT):
        assert json.dumps(piece)[1:-1] in text, piece


@given(st.text(alphabet=st.characters(codec=None, max_codepoint=0x2FF) | st.sampled_from("\ud83d\udce9\u2028\U0001f389"), max_size=12))
def test_the_fast_check_finds_exactly_what_the_rule_shows(text: str):
    """``visible`` looks for a control character on the text's bytes first (ASCII is most
    text): it finds one exactly where the rule's regex does, surrogates and C1 included."""
    from core.words import _CONTROL, has_control

    assert has_control(text) == (_CONTROL.search(text) is not None)
