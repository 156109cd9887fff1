"""``relay-search export``: Markdown, HTML and JSON for a session, a chain, a range
or one turn, run through the installed console script on the demo corpus (its
chain has a compaction in session 3 and a subagent in session 1).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

from core.fixtures.demo import CHAIN_SLUG, write_demo_corpus
from core.model import COMPACTION_TEXT

from .support import open_archive
from .test_usage import independent_count

SCRIPT = Path(sys.executable).with_name("relay-search")
SUBAGENT_PROMPT = "Survey how bm25s persists an index"
SUBAGENT_ANSWER = "bm25s stores the index as CSC arrays"


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    home = tmp_path_factory.mktemp("export-home")
    corpus = write_demo_corpus(home)
    proc = run(home, home, "index")
    assert proc.returncode == 0, proc.stderr
    return home, corpus


def run(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    for name in ("PYTHONPATH", "RELAY_SEARCH_MODEL"):  # (the checkout's code, words only: as tests/hostile_support.cli_env)
        if os.environ.get(name):
            env[name] = os.environ[name]
    proc = subprocess.run([str(SCRIPT), *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def tree(root: Path) -> dict[str, int]:
    return {str(p.relative_to(root)): p.stat().st_size for p in root.rglob("*") if p.is_file()}


def export(demo, tmp_path: Path, *args: str) -> Path:
    home, corpus = demo
    tmp_path.mkdir(parents=True, exist_ok=True)
    before = tree(corpus.root)
    proc = run(home, tmp_path, "export", *args)
    assert proc.returncode == 0, proc.stderr
    assert tree(corpus.root) == before  # nothing written near the transcripts
    (written,) = [p for p in tmp_path.rglob("*") if p.is_file()]  # one file, in the current directory
    assert written.parent == tmp_path and proc.stdout.strip().endswith(f" to {written}")
    return written


# --- Markdown -----------------------------------------------------------------------------


def test_markdown_keeps_every_message_in_stream_order_with_tools_folded_in_place(demo, tmp_path: Path) -> None:
    home, corpus = demo
    md = export(demo, tmp_path, CHAIN_SLUG).read_text()
    assert md.startswith("# ") and f"- Reference: `{CHAIN_SLUG}`" in md
    with open_archive(home) as archive:
        for sid in corpus.chain_session_ids:
            at = md.index(f"## Session {corpus.chain_session_ids.index(sid) + 1} · `{sid}`")
            for m in archive.session_messages(sid):
                if m.turn is None and m.is_sidechain:
                    continue  # subagent work: checked below
                if m.type == "thinking":
                    assert m.text not in md  # only with --thinking
                    continue
                probe = {"tool_use": lambda: "🔧 `" + " ".join(m.text.split())[:40],
                         "compaction": lambda: f"*{COMPACTION_TEXT}*"}.get(m.type, lambda: m.text.split("\n")[0][:60])()
                found = md.find(probe, at)
                assert found > at, (sid, m.sequence, probe)
                at = found
    # a tool call is one line, its output in a <details> right under it
    call = md.index("- 🔧 `Glob: core/**/*.py`\n")
    assert md[call:].split("\n")[1].strip() == "<details><summary>output (3 lines)</summary>"


def test_markdown_nests_the_subagent_after_the_call_that_started_it(demo, tmp_path: Path) -> None:
    md = export(demo, tmp_path, f"{CHAIN_SLUG}#1").read_text()
    call = md.index("- 🔧 `Task: Survey bm25s persistence`")
    nested = md.index("> <details><summary>Subagent — Explore: Survey bm25s persistence</summary>")
    after = md.index("Proposal: one document per turn")  # the parent's next reply
    assert call < nested < md.index(f"> {SUBAGENT_PROMPT}") < md.index(f"> {SUBAGENT_ANSWER}") < after
    assert "## Turn 0" in md and '<a id="turn-1"></a>' in md  # one session: plain turn anchors


def test_thinking_only_when_asked_for(demo, tmp_path: Path) -> None:
    thought = "bm25s is already a dependency"
    assert thought not in export(demo, tmp_path / "a", f"{CHAIN_SLUG}#1").read_text()
    md = export(demo, tmp_path / "b", f"{CHAIN_SLUG}#1", "--thinking").read_text()
    assert f"<details><summary>thinking</summary>\n\n{thought}" in md


# --- HTML -----------------------------------------------------------------------------------


class Page(HTMLParser):
    """Collects what the checks need: tags in order, ids, links, text."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[str] = []
        self.tags: list[tuple[str, dict[str, str | None], tuple[str, ...]]] = []
        self.text: list[str] = []
        self.decl = ""

    def handle_decl(self, decl: str) -> None:
        self.decl = decl

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs), tuple(self.stack)))
        if tag not in ("meta", "br", "link", "img", "input"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-3:])  # well nested
        self.stack.pop()

    def handle_data(self, data):
        self.text.append(data)


def parse(text: str) -> Page:
    page = Page()
    page.feed(text)
    page.close()
    assert page.stack == []
    return page


def test_html_is_one_self_contained_page_with_turn_anchors_and_a_header(demo, tmp_path: Path) -> None:
    home, corpus = demo
    page_text = export(demo, tmp_path, f"{CHAIN_SLUG}#3", "--format", "html").read_text()
    page = parse(page_text)
    assert page.decl.lower() == "doctype html"
    names = [t for t, _, _ in page.tags]
    assert "script" not in names and "link" not in names and "img" not in names and "iframe" not in names
    for _, attrs, _ in page.tags:
        for key in ("src", "href", "srcset", "action"):
            value = attrs.get(key)
            assert value is None or value.startswith("#"), (key, value)  # nothing outside the page
    assert "url(" not in page_text and "@import" not in page_text
    assert names.count("style") == 1
    with open_archive(home) as archive:
        info = archive.one_session(f"{CHAIN_SLUG}#3")
        turns = archive.get_conversation(f"{CHAIN_SLUG}#3").turns
    ids = [a.get("id") for t, a, _ in page.tags if t == "article"]
    assert ids == [f"turn-{t.number}" for t in turns] and len(ids) == 2
    assert [a["href"] for t, a, _ in page.tags if t == "a"] == [f"#{i}" for i in ids]
    header = "".join(page.text)
    assert f"{CHAIN_SLUG}#3" in header and info.session_id in header and info.cwd in header
    assert info.first_timestamp[:10] in header  # the dates
    # the compaction sits inside turn 0, before turn 1's prompt
    assert page_text.index(f'<div class="compaction">{COMPACTION_TEXT}</div>') < page_text.index('id="turn-1"')
    # every tool output is folded: a <pre> only ever inside <details>
    pres = [stack for t, _, stack in page.tags if t == "pre"]
    assert pres and all("details" in stack for stack in pres)


def test_html_nests_subagent_work_inside_its_turn(demo, tmp_path: Path) -> None:
    page = parse(export(demo, tmp_path, f"{CHAIN_SLUG}#1", "--format", "html").read_text())
    subagents = [(a, stack) for t, a, stack in page.tags if t == "details" and a.get("class") == "subagent"]
    assert len(subagents) == 1 and "article" in subagents[0][1]


def test_a_chain_in_one_html_file_has_a_section_per_session(demo, tmp_path: Path) -> None:
    page = parse(export(demo, tmp_path, CHAIN_SLUG, "--format", "html").read_text())
    sections = [a["id"] for t, a, _ in page.tags if t == "section"]
    assert sections == [f"session-{n}" for n in range(1, 6)]
    assert [a["id"] for t, a, _ in page.tags if t == "article"][:2] == ["s1-turn-0", "s1-turn-1"]


# --- JSON -----------------------------------------------------------------------------------


def test_json_is_the_messages_api_shape(demo, tmp_path: Path) -> None:
    data = json.loads(export(demo, tmp_path, CHAIN_SLUG, "--format", "json").read_text())
    assert data["ref"] == CHAIN_SLUG and len(data["sessions"]) == 5
    for session in data["sessions"]:
        messages = session["messages"]
        assert messages[0]["role"] == "user"
        pending: list[str] = []
        for prev, msg in zip([None, *messages], messages):
            assert set(msg) == {"role", "content"} and msg["role"] in ("user", "assistant")
            assert prev is None or prev["role"] != msg["role"]  # roles alternate
            for block in msg["content"]:
                kind = block["type"]
                assert kind in ("text", "tool_use", "tool_result")  # no thinking without --thinking
                if kind == "tool_use":
                    assert msg["role"] == "assistant" and isinstance(block["input"], dict) and block["name"]
                    pending.append(block["id"])
                elif kind == "tool_result":
                    assert msg["role"] == "user" and block["tool_use_id"] == pending.pop(0)
        # the session's tokens, its subagents' included, counted from the raw records
        files = [*demo[1].root.rglob(f"{session['session_id']}.jsonl"), *demo[1].root.rglob(f"{session['session_id']}/subagents/*.jsonl")]
        assert session["usage"]["total_tokens"] == sum(independent_count(files, [], [])["claude"][:4])
    first, third = data["sessions"][0], data["sessions"][2]
    (sub,) = first["subagents"]
    assert sub["label"] == "Explore: Survey bm25s persistence" and sub["turn"] == 0
    assert sub["messages"][0]["content"][0]["text"].startswith(SUBAGENT_PROMPT)
    tool_use = [b for m in first["messages"][: sub["at_message"]] for b in m["content"] if b["type"] == "tool_use"]
    assert tool_use[-1]["name"] == "Task"  # placed after the call that started it
    assert [e["type"] for e in third["events"]] == ["compaction", "summary"]  # the compaction summary (issue 34)
    assert third["events"][1]["text"].startswith("Compaction summary: ")


# --- files, directories, one turn -------------------------------------------------------------


def test_a_directory_and_several_sessions_give_one_file_each_and_an_index(demo, tmp_path: Path) -> None:
    home, _ = demo
    proc = run(home, tmp_path, "export", f"{CHAIN_SLUG}#2-4", "--format", "html", "-o", "out/")
    assert proc.returncode == 0, proc.stderr
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert files == ["index.html", f"{CHAIN_SLUG}-s2.html", f"{CHAIN_SLUG}-s3.html", f"{CHAIN_SLUG}-s4.html"]
    index = parse((tmp_path / "out" / "index.html").read_text())
    assert [a["href"] for t, a, _ in index.tags if t == "a"] == files[1:]
    assert "index.html" in proc.stdout


def test_one_turn_exports_only_that_turn(demo, tmp_path: Path) -> None:
    out = export(demo, tmp_path, f"{CHAIN_SLUG}#3:1", "--format", "md")
    assert out.name == f"{CHAIN_SLUG}-s3-turn-1.md"
    md = out.read_text()
    assert "## Turn 1 " in md and "## Turn 0" not in md and "- Turn 1 only" in md


def test_default_is_the_current_directory_and_never_the_transcript_folders(demo, tmp_path: Path) -> None:
    home, corpus = demo
    before = tree(corpus.root)
    inside = corpus.root / next(iter(os.listdir(corpus.root)))
    proc = run(home, inside, "export", CHAIN_SLUG)
    assert proc.returncode == 1 and proc.stderr.count("\n") == 1 and "inside the transcripts" in proc.stderr
    assert tree(corpus.root) == before
    proc = run(home, tmp_path, "export", "no-such-session")
    assert proc.returncode == 1 and proc.stderr.strip() == "relay-search: Unknown session_id: no-such-session"
    assert list(tmp_path.iterdir()) == []
