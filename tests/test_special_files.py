"""Only regular files are read (issue 37, item 1).

A FIFO named like a transcript made every command hang for good (the open waits for
a writer); a link to ``/dev/zero`` grew memory without end. Each agent's tree here
holds FIFOs and ``/dev/zero`` links where its adapter looks (transcripts, Ash's
``state.json``, Gemini's ``.project_root`` and ``projects.json``); every command
must finish, and find every real session as before.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from mcp import Client

from .bad_input_corpus import Corpus, build_corpus
from .hostile_support import SCRIPT, cli_env, cli_json
from .test_mcp import relay_search_mcp

pytestmark = pytest.mark.skipif(not hasattr(os, "mkfifo") or not Path("/dev/zero").exists(), reason="needs FIFOs and /dev/zero")

LIMIT = 60  # seconds: each command takes about one; the bug hung for good


def _fifo(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    os.mkfifo(path)
    return path


def _zero(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.symlink_to("/dev/zero")
    return path


def special_corpus(home: Path) -> tuple[Corpus, list[Path]]:
    """The four-agent corpus with FIFOs and /dev/zero links in every agent's tree."""
    from core.fixtures.ash import AshSession
    from core.fixtures.gemini import GeminiChat

    corpus = build_corpus(home)
    # a Gemini project with no .project_root: its cwd is looked up in projects.json
    lost = GeminiChat(home / ".gemini", project="lost", session_id="5e551011-0000-4000-8000-0000000000e2", project_root=None)
    lost.user("a gemini prompt about the kudu registry")
    lost.gemini("The kudu registry answers.")
    corpus.sessions["gemini-lost"], corpus.words["gemini-lost"] = lost.session_id, ["kudu"]
    # an Ash session whose state.json is a FIFO
    ash = AshSession(home / ".ash", "telegram_8_8", state=False)
    ash.user("an ash prompt about the lemur planner")
    ash.assistant("The lemur planner plans.")
    corpus.sessions["ash-fifo-state"], corpus.words["ash-fifo-state"] = ash.key, ["lemur"]
    # an Ash session whose context.jsonl is a FIFO: its history.jsonl is read instead
    history = AshSession(home / ".ash", "telegram_7_7")
    history.user("an ash prompt about the mongoose relay")
    history.assistant("The mongoose relay relays.")
    history.context.unlink()
    corpus.sessions["ash-history"], corpus.words["ash-history"] = history.key, ["mongoose"]
    # a legacy Gemini chat (.json) beside a FIFO of its .jsonl name: the FIFO hides nothing
    legacy = GeminiChat(home / ".gemini", project="old", session_id="5e551011-0000-4000-8000-0000000000e3", legacy=True)
    legacy.user("a legacy gemini prompt about the numbat cache")
    legacy.gemini("The numbat cache is cold.")
    corpus.sessions["gemini-legacy"], corpus.words["gemini-legacy"] = legacy.session_id, ["numbat"]

    claude_project = corpus.files["bystander"].parent
    subagents = corpus.files["claude-sub"].parent
    rollouts = corpus.files["codex"].parent
    chats = corpus.files["gemini"].parent
    sessions = corpus.files["ash"].parent.parent
    codex = "rollout-2026-01-05T09-00-00-0199a000-0000-7000-8000-0000000000f{}.jsonl"
    special = [
        _fifo(claude_project / "c0ffee00-0000-4000-8000-000000000001.jsonl"),
        _fifo(subagents / "agent-fifo.jsonl"),
        _zero(subagents / "agent-zero.jsonl"),
        _fifo(rollouts / codex.format(1)),
        _zero(rollouts / codex.format(2)),
        _zero(rollouts / (codex.format(3) + ".zst")),
        _fifo(home / ".codex" / "archived_sessions" / "rollout-fifo.jsonl"),
        _fifo(chats / "session-2026-04-23T12-00-f1f0f1f0.jsonl"),
        _zero(chats / "session-2026-04-23T12-00-2e402e40.json"),
        _fifo(chats / "5e551011-0000-4000-8000-0000000000e1" / "subagent-fifo.jsonl"),
        _fifo(home / ".gemini" / "projects.json"),
        _fifo(sessions / "telegram_1_1" / "context.jsonl"),
        _zero(sessions / "telegram_2_2" / "context.jsonl"),
        _fifo(sessions / "telegram_3_3" / "history.jsonl"),
        _fifo(sessions / "telegram_9_9" / "subagents" / "fifo.jsonl"),
        _fifo(ash.dir / "state.json"),
        _fifo(history.context),
        _fifo(legacy.path.with_suffix(".jsonl")),
        _fifo(home / ".ash" / "chats" / "telegram" / "9" / "history.jsonl"),
    ]
    return corpus, special


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess:
    """``relay-search ARGS`` that must finish; a hang fails the test instead of stalling it."""
    try:
        return _run(home, *args)
    except subprocess.TimeoutExpired:
        pytest.fail(f"relay-search {' '.join(args)} hung on a FIFO or device file")


def _run(home: Path, *args: str) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(SCRIPT), *args], env=cli_env(home), capture_output=True, timeout=LIMIT)
    stderr = proc.stderr.decode("utf-8", "replace")
    assert "Traceback" not in stderr and "unexpected error" not in stderr, stderr
    return proc


def test_fifos_and_devices_are_skipped_by_list_index_and_search(tmp_path):
    corpus, special = special_corpus(tmp_path)
    listed = _cli(tmp_path, "list", "--json", "--limit", "100")  # the first command: a cold index
    assert listed.returncode == 0, listed.stderr
    found = {s["session_id"] for s in json.loads(listed.stdout)["sessions"]}
    assert set(corpus.sessions.values()) <= found, found
    indexed = _cli(tmp_path, "index", "--rebuild")
    assert indexed.returncode == 0, indexed.stderr
    stats = cli_json(tmp_path, "index", "--stats")
    assert stats["errors"] == [], stats["errors"]  # skipped, not failed: none of them is a transcript
    for name, words in corpus.words.items():
        for word in words:
            hits = _cli(tmp_path, "search", word, "--json")
            assert hits.returncode == 0, hits.stderr
            assert corpus.sessions[name] in {h["session_id"] for h in json.loads(hits.stdout)["results"]}, (name, word)
    shown = _cli(tmp_path, "show", corpus.sessions["gemini-lost"])
    assert shown.returncode == 0 and b"kudu registry" in shown.stdout
    for path in special:  # nothing was written into the transcript dirs
        assert path.is_symlink() or path.is_fifo()


def test_a_transcript_replaced_by_a_fifo_leaves_the_index(tmp_path):
    corpus = build_corpus(tmp_path)
    assert corpus.sessions["codex"] in {h["session_id"] for h in cli_json(tmp_path, "search", "eland")["results"]}
    corpus.files["codex"].unlink()
    _fifo(corpus.files["codex"])
    _cli(tmp_path, "index")
    assert cli_json(tmp_path, "search", "eland")["results"] == []
    assert corpus.sessions["gemini"] in {h["session_id"] for h in cli_json(tmp_path, "search", "gerenuk")["results"]}


async def test_mcp_on_a_cold_cache_finds_the_word_past_fifos(tmp_path):
    corpus, _ = special_corpus(tmp_path)
    server = relay_search_mcp(tmp_path)
    server = server.model_copy(update={"env": {**(server.env or {}), "RELAY_SEARCH_MODEL": "off"}})
    async with Client(server, raise_exceptions=True, read_timeout_seconds=LIMIT) as client:
        hits = await client.call_tool("search_history", {"query": "hoopoe", "limit": 10})
        assert corpus.sessions["gemini"] in {h["session_id"] for h in hits.structured_content["results"]}
        hits = await client.call_tool("search_history", {"query": "lemur", "limit": 10})
        assert corpus.sessions["ash-fifo-state"] in {h["session_id"] for h in hits.structured_content["results"]}
