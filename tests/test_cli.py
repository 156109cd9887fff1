"""The installed ``relay-search`` console script, run as a user would (SPEC §8).

Every call is a real subprocess with ``HOME`` pointed at a temp dir holding the demo
corpus and no XDG variables, so the cache lands in ``$HOME/.cache/relay-search``.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from core.fixtures.demo import CHAIN_SLUG, write_demo_corpus

SCRIPT = Path(sys.executable).with_name("relay-search")
SEARCH_FIELDS = {
    "session_id", "slug", "session_number", "project", "agent", "turn_number", "sequence", "score", "snippet",
    "timestamp", "ref",
}  # fmt: skip
OPTIONAL_FIELDS = {"user"}  # team scale (SPEC §9); the MCP result model allows it too
SESSION_FIELDS = {"session_id", "agent", "project", "slug", "summary", "first_timestamp", "last_timestamp", "turn_count",
                  "ref", "files"}  # fmt: skip


class Run:
    def __init__(self, home: Path) -> None:
        self.home = home
        self.stderrs: list[str] = []

    def __call__(self, *args: str) -> subprocess.CompletedProcess:
        env = {"HOME": str(self.home), "PATH": os.environ.get("PATH", "/usr/bin:/bin")}
        proc = subprocess.run([str(SCRIPT), *args], env=env, capture_output=True, text=True, timeout=120)
        self.stderrs.append(proc.stderr)
        assert "Traceback" not in proc.stderr, proc.stderr
        return proc

    def json(self, *args: str):
        proc = self(*args, "--json")
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)

    def many(self, calls: list[tuple[str, ...]]) -> list[subprocess.CompletedProcess]:
        """Independent invocations side by side (several processes sharing one cache, as in real use)."""
        with ThreadPoolExecutor(max_workers=6) as pool:
            return list(pool.map(lambda args: self(*args), calls))


@pytest.fixture(scope="module")
def cli(tmp_path_factory):
    home = tmp_path_factory.mktemp("cli-home")
    corpus = write_demo_corpus(home)
    run = Run(home)
    run.tree = tree(corpus.root)
    first = run("index")
    assert first.returncode == 0, first.stderr
    assert (home / ".cache" / "relay-search").is_dir()
    yield run, corpus
    assert not any("Traceback" in err for err in run.stderrs)


def tree(root: Path) -> dict[str, tuple[int, int]]:
    return {str(p): (p.stat().st_size, p.stat().st_mtime_ns) for p in sorted(root.rglob("*"))}


def one_line(stderr: str) -> str:
    lines = stderr.splitlines()
    assert len(lines) == 1, stderr
    return lines[0]


# --- JSON shapes ---------------------------------------------------------------------------


def test_search_json_prints_exactly_the_mcp_shape(cli):
    run, corpus = cli
    data = run.json("search", "bm25 index", "--limit", "5")
    assert list(data) == ["results"]
    results = data["results"]
    assert 1 <= len(results) <= 5
    for hit in results:
        assert SEARCH_FIELDS <= set(hit) <= SEARCH_FIELDS | OPTIONAL_FIELDS
        assert len(hit["snippet"]) <= 300
        assert hit["agent"] == "claude"
        assert isinstance(hit["score"], float) and isinstance(hit["sequence"], int)
        assert hit["session_id"] in corpus.session_ids
    scores = [h["score"] for h in results]
    assert scores == sorted(scores, reverse=True)


def test_search_json_with_no_match_is_an_empty_list(cli):
    run, _ = cli
    proc = run("search", "zzqxjv", "--json")
    assert proc.returncode == 0 and json.loads(proc.stdout) == {"results": []}


def test_search_filters(cli):
    run, corpus = cli
    hits = run.json("search", "test", "--project", "billing-api", "--limit", "50")["results"]
    assert hits and {h["project"] for h in hits} == {"billing-api"}
    assert run.json("search", "test", "--agent", "codex")["results"] == []


def test_list_json(cli):
    run, corpus = cli
    data = run.json("list")
    assert list(data) == ["sessions"]
    sessions = data["sessions"]
    assert {s["session_id"] for s in sessions} == set(corpus.session_ids)
    for s in sessions:
        assert SESSION_FIELDS <= set(s)
        assert "session_number" not in s  # only in one chain's listing (SPEC §5)
    lasts = [s["last_timestamp"] for s in sessions]
    assert lasts == sorted(lasts, reverse=True)  # newest activity first
    assert sessions[0]["session_id"] == corpus.live_session_id and sessions[0]["is_live"] in (True, False)


def test_list_json_slug_is_the_chain_oldest_first(cli):
    run, corpus = cli
    sessions = run.json("list", "--slug", CHAIN_SLUG)["sessions"]
    assert [s["session_id"] for s in sessions] == list(corpus.chain_session_ids)
    assert [s["session_number"] for s in sessions] == [1, 2, 3, 4, 5]


def test_show_ref_json(cli):
    run, corpus = cli
    conv = run.json("show", f"{CHAIN_SLUG}#2-3")
    assert [s["session_id"] for s in conv["sessions"]] == list(corpus.chain_session_ids[1:3])
    assert conv["slug"] == CHAIN_SLUG
    assert conv["turns"] and all({"user_text", "assistant_text", "tools_used", "turn_number"} <= set(t) for t in conv["turns"])
    whole = run.json("show", corpus.chain_session_ids[0])
    assert whole["session_id"] == corpus.chain_session_ids[0]
    assert [t["turn_number"] for t in whole["turns"]] == [0, 1]


def test_show_turn(cli):
    run, corpus = cli
    turn = run.json("show", f"{CHAIN_SLUG}#3:1")
    assert turn["user_text"] == "ok continue, the partial last line test still fails"
    assert turn["turn_number"] == 1 and turn["session_id"] == corpus.chain_session_ids[2]
    assert {"tool": "Edit", "file": "/home/demo/work/relay-search/core/watch.py"} in turn["tools_used"]
    text = run("show", f"{CHAIN_SLUG}#3:1")
    assert text.returncode == 0
    assert "ok continue, the partial last line test still fails" in text.stdout
    by_id = run.json("show", f"{corpus.chain_session_ids[2][:8]}:1")
    assert turn["ref"] == f"{CHAIN_SLUG}#3:1" and by_id["ref"] == f"{corpus.chain_session_ids[2]}:1"
    assert {**by_id, "ref": turn["ref"]} == turn  # each answer names the ref it was asked by


def test_index_stats(cli):
    run, corpus = cli
    proc = run("index", "--stats")
    assert proc.returncode == 0, proc.stderr
    assert f"{len(corpus.session_ids)} sessions" in proc.stdout
    assert "skipped lines: 0" in proc.stdout
    stats = run.json("index", "--stats")
    assert stats["sessions"] == len(corpus.session_ids) and stats["skipped_lines"] == 0


# --- exit codes --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "args, message",
    [
        (("show", "nope"), "relay-search: Unknown session_id: nope"),
        (("show", "nope", "--json"), "relay-search: Unknown session_id: nope"),
        (("show", f"{CHAIN_SLUG}#9"), "relay-search: Session 9 out of range (1-5)"),
        (("show", CHAIN_SLUG, "--session", "7"), "relay-search: Session 7 out of range (1-5)"),
        (("show", f"{CHAIN_SLUG}#3:7"), "relay-search: Turn 7 out of range (session has 2 turns)"),
        (("search", "bm25", "--session", "ffffffff-0000"), "relay-search: Unknown session_id: ffffffff-0000"),
    ],
)
def test_not_found_and_bad_ranges_exit_1_with_one_line(cli, args, message):
    run, _ = cli
    proc = run(*args)
    assert proc.returncode == 1
    assert one_line(proc.stderr) == message
    assert proc.stdout == ""


BAD_INPUT = [
    ("search",),  # missing query
    ("search", "x", "--limit", "abc"),
    ("search", "x", "--limit", "0"),
    ("search", "x", "--limit", "501"),
    ("list", "--bogus"),
    ("frobnicate",),
    ("show", f"{CHAIN_SLUG}#x"),
    ("show", f"{CHAIN_SLUG}#5-3"),
    ("show", ""),
    ("search", "x", "--from", "not-a-date"),  # even when the query has no searchable term
    ("search", "bm25", "--to", "2026-02-30", "--json"),
    ("list", "--to", "2026-13-45"),
    ("list", "--from", "yesterdayish"),
]


def test_bad_input_exits_1_with_one_line(cli):
    run, _ = cli
    wrong = []
    for args, proc in zip(BAD_INPUT, run.many(BAD_INPUT)):
        lines = proc.stderr.splitlines()
        if proc.returncode != 1 or len(lines) != 1 or not lines[0].startswith("relay-search") or proc.stdout:
            wrong.append((args, proc.returncode, proc.stderr, proc.stdout[:200]))
    assert wrong == []


def test_text_search_without_matches_exits_0_with_a_note_on_stderr(cli):
    # One rule, text or --json: an empty result is an answer (0); errors are 1.
    run, _ = cli
    proc = run("search", "zzqxjv")
    assert proc.returncode == 0 and proc.stdout == ""
    assert one_line(proc.stderr)


def test_ok_commands_exit_0(cli):
    run, _ = cli
    expected = {  # what each prints first: the hit, the newest session, the reference, the count
        ("search", "snowball stemmer"): f"{CHAIN_SLUG}#2:0  [relay-search · claude · 2026-11-15 11:00]",
        ("list",): f"{CHAIN_SLUG}#5 ",
        ("show", f"{CHAIN_SLUG}#5"): f"relay-search reference: {CHAIN_SLUG}#5",
        ("index",): "indexed 0 files, 0.0 MB; 0 sessions changed",
    }
    for args, first_line in expected.items():
        proc = run(*args)
        assert proc.returncode == 0, (args, proc.stderr)
        assert proc.stdout.splitlines()[0].startswith(first_line), (args, proc.stdout)


# --- the demo queries ----------------------------------------------------------------------------


def test_demo_queries_find_their_session_first(cli):
    run, corpus = cli
    assert len(corpus.queries) >= 10
    calls = [("search", query, "--json") for query, _ in corpus.queries]
    wrong = []
    for (query, session_id), proc in zip(corpus.queries, run.many(calls)):
        assert proc.returncode == 0, proc.stderr
        results = json.loads(proc.stdout)["results"]
        if not results or results[0]["session_id"] != session_id:
            wrong.append((query, session_id, [(r["ref"], r["score"]) for r in results[:3]]))
    assert wrong == []


def test_nothing_is_written_into_the_transcript_tree(cli):
    run, corpus = cli
    run("search", "bm25", "--json")
    assert tree(corpus.root) == run.tree
