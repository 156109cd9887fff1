"""Values no agent writes, in fields every agent writes: they cost their field or their
file, never the archive (issue 24).

Through the real CLI (a subprocess, as a user runs it): token counts past 2**63 in
Claude's ``message.usage``, Codex's ``token_count`` and Gemini's ``tokens`` are read
as no count; and a file whose rows SQLite still refuses (the bound switched off in
the subprocess, by fault injection) is skipped and named in ``index --stats``, every
other file indexed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from .bad_input_corpus import build_corpus
from .hostile_support import cli_json, exchange, run_cli, write_jsonl

HUGE = [2**63, 2**64, 10**30]
POISON_SID = "33333333-3333-4333-8333-333333333333"


def _poison_usage(home: Path, value: int) -> Path:
    """A Claude session whose answer reports ``value`` tokens, plus huge counts in the
    Codex and Gemini files of the corpus (appended as those agents write them)."""
    records = exchange(POISON_SID, "a prompt about the zebu ledger", "The zebu ledger answer.", "2026-11-01T09:00:00Z")
    records[1]["message"].update(id="msg_1", model="claude-x", usage={
        "input_tokens": value, "output_tokens": value, "cache_read_input_tokens": -value,
        "cache_creation_input_tokens": float(value)})  # fmt: skip
    records[1]["requestId"] = "req_1"
    return write_jsonl(home / ".claude" / "projects" / "-home-t-proj" / f"{POISON_SID}.jsonl", records)


def test_token_counts_past_64_bits_are_no_count(tmp_path):
    corpus = build_corpus(tmp_path)
    _poison_usage(tmp_path, 2**64)
    corpus.append("codex", json.dumps({
        "timestamp": "2026-11-01T09:00:05Z", "type": "event_msg", "payload": {"type": "token_count", "info": {
            "last_token_usage": {"input_tokens": 2**63, "output_tokens": 10**30},
            "total_token_usage": {"input_tokens": 2**63, "total_tokens": 2**70}}}}).encode() + b"\n")  # fmt: skip
    gemini = json.loads(corpus.files["gemini"].read_text().splitlines()[-1])
    gemini.update(id="g-huge", tokens={"input": 2**63, "output": 10**30, "cached": -1, "thoughts": 2**64})
    corpus.append("gemini", json.dumps(gemini).encode() + b"\n")
    for command in (["index"], ["index", "--stats"], ["list"], ["search", "zebu"], ["usage"]):
        proc = run_cli(tmp_path, *command)
        assert proc.returncode == 0, (command, proc.stderr)
    stats = cli_json(tmp_path, "index", "--stats")
    assert stats["errors"] == []
    hits = cli_json(tmp_path, "search", "zebu")["results"]
    assert [h["session_id"] for h in hits] == [POISON_SID]
    for name, words in corpus.words.items():
        for word in words:
            found = {h["session_id"] for h in cli_json(tmp_path, "search", word)["results"]}
            assert corpus.sessions[name] in found, (name, word)


def _unbounded_env(tmp_path: Path) -> dict[str, str]:
    """Fault injection: the subprocess's count bound switched off (as if an adapter
    forgot it), so a count past 2**63 reaches the writer."""
    inject = tmp_path / "inject"
    inject.mkdir()
    (inject / "sitecustomize.py").write_text(
        "import core.sources.fields as fields\nfields.MAX_COUNT = 2**70\n"
    )
    return {"PYTHONPATH": os.pathsep.join([str(inject), *filter(None, [os.environ.get("PYTHONPATH")])])}


def test_a_file_whose_rows_cannot_be_stored_is_skipped_and_named(tmp_path):
    corpus = build_corpus(tmp_path)
    poisoned = _poison_usage(tmp_path, 2**63)
    env = _unbounded_env(tmp_path)
    proc = run_cli(tmp_path, "index", "--stats", "--json", env=env)
    assert proc.returncode == 0, proc.stderr
    errors = {e["path"]: e["error"] for e in json.loads(proc.stdout)["errors"]}
    assert str(poisoned) in errors and "could not be stored" in errors[str(poisoned)], errors
    assert "OverflowError" in errors[str(poisoned)]
    text = run_cli(tmp_path, "index", "--stats", env=env)
    assert f"error  {poisoned}: could not be stored" in text.stdout.decode()
    for name, words in corpus.words.items():  # every other file of the batch is stored
        for word in words:
            found = {h["session_id"] for h in cli_json(tmp_path, "search", word, env=env)["results"]}
            assert corpus.sessions[name] in found, (name, word)
    assert cli_json(tmp_path, "search", "zebu", env=env)["results"] == []
    listed = run_cli(tmp_path, "list", env=env)
    assert listed.returncode == 0 and b"No sessions found" not in listed.stdout
    # appended to: retried, and stored once the value fits
    write_jsonl(poisoned, exchange(POISON_SID, "a later zebu prompt", "A later zebu answer.", "2026-11-01T10:00:00Z",
                                   ids=("u2", "a2")), mode="a")  # fmt: skip
    data = poisoned.read_text().replace(str(2**63), "12")
    poisoned.write_text(data)
    assert {h["session_id"] for h in cli_json(tmp_path, "search", "zebu", env=env)["results"]} == {POISON_SID}


# --- lone surrogate escapes and byte-order marks (items 2 and 3) ------------------------------

CUT = "\\ud83d"  # what Node's JSON.stringify writes for half an emoji


def _spliced(path: Path, word: bytes, insert: bytes) -> None:
    """``insert`` written into ``path``'s JSON text right after the first ``word``."""
    data = path.read_bytes()
    assert word in data
    path.write_bytes(data.replace(word, word + insert, 1))


def _legacy_gemini(home: Path) -> tuple[Path, str]:
    from core.fixtures.gemini import GeminiChat

    chat = GeminiChat(home / ".gemini", project="legacy", session_id="5e551011-0000-4000-8000-00000000a1a1", legacy=True)
    chat.user("a legacy prompt about the kinkajou table")
    chat.gemini("The kinkajou table is legacy.")
    return chat.path, chat.session_id


def test_lone_surrogate_escapes_cost_half_a_character_not_the_line(tmp_path):
    corpus = build_corpus(tmp_path)
    _spliced(corpus.files["claude"], b"aardvark", f" {CUT} cut".encode())  # Claude's first prompt
    _spliced(corpus.files["claude"], b"caracal queue drains", f" \\udc00 {CUT}\\ude00 ok".encode())  # + a pair
    _spliced(corpus.files["codex"], b"eland", f" {CUT}".encode())
    _spliced(corpus.files["gemini"], b"gerenuk", " \\uDBFF".encode())
    _spliced(corpus.files["ash"], b"ibis", f" {CUT}".encode())
    legacy, legacy_sid = _legacy_gemini(tmp_path)
    _spliced(legacy, b"kinkajou", f" {CUT}".encode())
    stats = cli_json(tmp_path, "index", "--stats")
    assert stats["skipped_lines"] == 0 and stats["errors"] == [], stats
    for name, words in {**corpus.words, "legacy": ["kinkajou"]}.items():
        sid = legacy_sid if name == "legacy" else corpus.sessions[name]
        for word in words:
            found = {h["session_id"] for h in cli_json(tmp_path, "search", word)["results"]}
            assert sid in found, (name, word)
    shown = run_cli(tmp_path, "show", corpus.sessions["claude"])
    text = shown.stdout.decode()
    assert "aardvark \ufffd cut" in text and "drains \ufffd \U0001f600 ok" in text, text
    assert "USER: \n" not in text and "ASSISTANT: \n" not in text
    legacy_text = run_cli(tmp_path, "show", legacy_sid).stdout.decode()
    assert "kinkajou \ufffd table" in legacy_text


def test_an_escaped_backslash_before_u_is_text_not_a_surrogate(tmp_path):
    corpus = build_corpus(tmp_path)
    _spliced(corpus.files["claude"], b"aardvark", b" C:\\\\ud83d path")  # the JSON text C:\\ud83d: a literal backslash
    assert cli_json(tmp_path, "index", "--stats")["skipped_lines"] == 0
    assert "aardvark C:\\ud83d path" in run_cli(tmp_path, "show", corpus.sessions["claude"]).stdout.decode()


def test_a_byte_order_mark_at_the_start_of_a_file_costs_nothing(tmp_path):
    corpus = build_corpus(tmp_path)
    legacy, legacy_sid = _legacy_gemini(tmp_path)
    for path in (*corpus.files.values(), legacy):
        path.write_bytes(b"\xef\xbb\xbf" + path.read_bytes())
    stats = cli_json(tmp_path, "index", "--stats")
    assert stats["skipped_lines"] == 0 and stats["errors"] == [], stats
    for name, words in {**corpus.words, "legacy": ["kinkajou"]}.items():
        sid = legacy_sid if name == "legacy" else corpus.sessions[name]
        for word in words:
            found = {h["session_id"] for h in cli_json(tmp_path, "search", word)["results"]}
            assert sid in found, (name, word)
    listed = {s["session_id"]: s for s in cli_json(tmp_path, "list")["sessions"]}
    assert listed[corpus.sessions["codex"]]["project"] != listed[corpus.sessions["codex"]]["session_id"]
