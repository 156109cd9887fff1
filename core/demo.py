"""The demo corpus: a small, believable ``~/.claude/projects`` for ``--demo``, tests and screenshots.

Written with the real-format builder so every front end sees exactly what it would on
a developer's machine: a five-session slug chain, compaction, subagents in both
layouts, a 1.0.x file with a ``summary`` record, a custom title, thinking blocks,
prompts as block lists, a ~300-turn session and a live one. Like real 2.1.x sessions,
each one has its own slug; only the chain's five share one. Each session talks about
one distinct problem with its own vocabulary, so searches have one clear right answer
(:attr:`DemoCorpus.queries`). Times are relative to ``now`` (fixed by default), so the
same call writes the same bytes.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from core.fixtures.claude import ClaudeTranscript, stable_uuid

DEFAULT_NOW = datetime(2026, 11, 20, 12, 0, tzinfo=timezone.utc)
PREFIX = "/home/demo/work"
CHAIN_SLUG = "velvet-puzzling-eclipse"


@dataclass(frozen=True, slots=True)
class DemoCorpus:
    """What :func:`write_demo_corpus` wrote, and the answers tests can expect."""

    root: Path  # the projects dir (``<home>/.claude/projects``)
    session_ids: tuple[str, ...]  # main sessions, oldest first
    chain_slug: str
    chain_session_ids: tuple[str, ...]  # session_number order
    live_session_id: str
    compacted_session_id: str
    queries: tuple[tuple[str, str], ...]  # (query, the session that answers it)
    now: datetime


def _sid(name: str) -> str:
    return stable_uuid("relay-search-demo", name)


def _t(name: str, project: str, start: datetime, **kw: Any) -> ClaudeTranscript:
    return ClaudeTranscript(_sid(name), cwd=f"{PREFIX}/{project}", start=start, **kw)


def _chain(now: datetime) -> list[ClaudeTranscript]:
    """Adding a BM25 index to relay-search, over five sessions of one slug."""
    root = f"{PREFIX}/relay-search"
    kw: dict[str, Any] = {"slug": CHAIN_SLUG, "git_branch": "feat/bm25-index"}

    s1 = _t("chain-1", "relay-search", now - timedelta(days=6, hours=3), **kw)
    s1.user("I want full-text search over our transcripts. Let's add a BM25 index to relay-search: look at how "
            "core/ is laid out and propose a design. Keep the catalog in SQLite.")
    s1.thinking("bm25s is already a dependency. The unit of retrieval should be a turn, since results link to "
                "turns. Need to check whether bm25s can add documents incrementally or only rebuild.")
    s1.tool("Glob", {"pattern": "core/**/*.py"},
            f"{root}/core/model.py\n{root}/core/config.py\n{root}/core/sources/base.py")
    s1.tool("Read", {"file_path": f"{root}/core/model.py"},
            '"""The normalized model every source adapter produces."""\n\nfrom dataclasses import dataclass\n\n'
            "@dataclass(frozen=True, slots=True)\nclass Turn:\n    session_id: str\n"
            "    number: int\n    user_text: str")
    sub = s1.subagent("a3f19c0", "Survey how bm25s persists an index (save/load, mmap) and whether it supports "
                      "adding documents without a full rebuild.", subagent_type="Explore",
                      description="Survey bm25s persistence", duration=timedelta(seconds=48))
    sub.tool("Bash", {"command": "python -c 'import bm25s, inspect; print(inspect.signature(bm25s.BM25.save))'"},
             "(self, save_dir, corpus=None, data_name='data.csc.index.npy', indices_name='indices.csc.index.npy', "
             "indptr_name='indptr.csc.index.npy', vocab_name='vocab.index.json', params_name='params.index.json')")
    sub.tool("Grep", {"pattern": "mmap", "path": f"{root}/.venv/lib/python3.12/site-packages/bm25s",
                      "output_mode": "files_with_matches"},
             "Found 2 files\nbm25s/__init__.py\nbm25s/utils/corpus.py")
    sub.assistant("bm25s stores the index as CSC arrays (data/indices/indptr .npy) plus vocab.index.json and "
                  "params.index.json; BM25.load(dir, mmap=True) memory-maps the arrays. There is no incremental "
                  "add: index() recomputes document frequencies, so new documents mean a rebuild of that index. "
                  "Sharding (a big frozen shard plus a small fresh shard) keeps rebuilds cheap.")
    s1.assistant("Proposal: one document per turn, stored in SQLite (turn id → session, sequence, text). bm25s "
                 "holds the inverted index as a large frozen shard plus a small live shard that is rebuilt on "
                 "change, merged when it passes ~5,000 turns. Parameters start at k1=1.2, b=0.75.")
    s1.user("k1 of 1.2 seems low for long tool outputs. What does the k1 saturation parameter actually do?")
    s1.assistant("k1 controls term-frequency saturation: the contribution of a term grows with its count but "
                 "flattens out, and k1 sets how fast. With k1=1.2 the tenth occurrence adds little over the "
                 "third, which is what we want for tool outputs that repeat a word hundreds of times. b=0.75 "
                 "normalizes by document length so long turns don't win by sheer size.")
    s1.tool("Write", {"file_path": f"{root}/core/index/bm25.py", "content":
                      '"""Turn-level BM25 index on bm25s: a frozen shard plus a live shard."""\n\n'
                      "K1 = 1.2\nB = 0.75\n"})
    s1.tool("Bash", {"command": "pytest tests/test_bm25.py -q", "description": "Run the BM25 tests"},
            "....                                                                     [100%]\n4 passed in 0.31s")
    s1.assistant("The index skeleton is in place: core/index/bm25.py with the two-shard layout, and 4 tests pass.")

    s2 = _t("chain-2", "relay-search", now - timedelta(days=5, hours=1), **kw)
    s2.user("Continuing on the BM25 index: searching 'indexing' doesn't find turns that say 'indexed'. Add stemming.")
    stem = "import Stemmer; print(Stemmer.Stemmer('english').stemWords(['indexing', 'indexed']))"
    s2.tool("Bash", {"command": f'python -c "{stem}"'}, "['index', 'index']")
    s2.assistant("PyStemmer's snowball English stemmer maps both to 'index'. I'll stem in the tokenizer and drop "
                 "English stopwords with bm25s's built-in 'en' list.")
    tok = f"{root}/core/index/tokenize.py"
    s2.tool("Edit", {"file_path": tok, "old_string": "tokens = text.lower().split()", "new_string":
                     "tokens = STEMMER.stemWords(t for t in WORD.findall(text.lower()) if t not in STOPWORDS)"})
    s2.tool("Bash", {"command": "pytest tests/test_tokenize.py -q"},
            "Exit code 1\nFAILED tests/test_tokenize.py::test_keeps_identifiers - "
            "AssertionError: assert 'snake_cas' == 'snake_case'\n1 failed, 6 passed in 0.12s",
            is_error=True)
    s2.assistant("The snowball stemmer mangles identifiers ('snake_case' → 'snake_cas'). Identifiers are split on "
                 "underscores and dots first, and the unstemmed token is kept alongside the stem.")
    s2.tool("Edit", {"file_path": tok, "old_string": "if t not in STOPWORDS)",
                     "new_string": "if t not in STOPWORDS) + identifiers(text)"})
    s2.tool("Bash", {"command": "pytest tests/test_tokenize.py -q"}, "7 passed in 0.10s")
    s2.assistant("Stemming and stopwords are in; identifiers survive intact.")

    s3 = _t("chain-3", "relay-search", now - timedelta(days=3, hours=5), hooks=("$HOME/.claude/hooks/format.sh",), **kw)
    s3.user("Next: keep the index live. When Claude Code appends to a transcript the index should update "
            "without a rebuild.")
    s3.tool("Read", {"file_path": f"{root}/core/watch.py"}, "File does not exist.", is_error=True)
    s3.assistant("There is no watcher yet. Plan: a watchdog Observer on the projects dir, events debounced for "
                 "250 ms, and a per-file byte offset so only appended lines are parsed and re-indexed.")
    s3.tool("Write", {"file_path": f"{root}/core/watch.py",
                      "content": "from watchdog.observers import Observer\n\nDEBOUNCE = 0.25\n"})
    s3.progress()
    s3.tool("Bash", {"command": "pytest tests/test_watch.py -q"},
            "Exit code 1\nFAILED tests/test_watch.py::test_partial_line_reread - assert 0 == 1\n"
            "1 failed, 5 passed in 1.02s",
            is_error=True)
    s3.progress("bash_progress", output="collecting ... 6 items")
    s3.compact("Analysis:\n1. The user asked to keep the BM25 index live while transcripts grow.\n2. core/watch.py "
               "was created: watchdog Observer, 250 ms debounce, per-file byte offsets.\n3. "
               "test_partial_line_reread fails: a partial last line is consumed and never re-read.\n\n"
               "Pending: fix the partial-line handling in the tailer.")
    s3.user("ok continue, the partial last line test still fails")
    s3.assistant("The tailer advanced its offset past a line without a trailing newline. It now stops at the last "
                 "newline, so a partial line is read again once it is complete.")
    s3.tool("Edit", {"file_path": f"{root}/core/watch.py", "old_string": "self.offset = f.tell()",
                     "new_string": "self.offset += data.rfind(b\"\\n\") + 1"})
    s3.tool("Bash", {"command": "pytest tests/test_watch.py -q"}, "6 passed in 0.98s")
    s3.assistant("Watcher done: debounced watchdog events, incremental reindex from byte offsets, 6 tests pass.")

    s4 = _t("chain-4", "relay-search", now - timedelta(days=1, hours=2), **kw)
    s4.user("Search results are dominated by huge tool outputs. Downweight the tool output field.")
    s4.tool("Grep", {"pattern": "def score", "path": f"{root}/core/index", "output_mode": "content", "-n": True},
            "core/index/bm25.py:61:    def score(self, query: str) -> list[Hit]:")
    s4.assistant("I'll index two fields per turn: `text` (prompt, answer, tool names) and `tool_io` (bounded tool "
                 "inputs and outputs), and score bm25(text) + 0.3 × bm25(tool_io). Error messages stay findable "
                 "but no longer outrank the conversation.")
    s4.tool("Edit", {"file_path": f"{root}/core/index/bm25.py", "old_string": "return self.text.score(query)",
                     "new_string": "return self.text.score(query) + TOOL_IO_WEIGHT * self.tool_io.score(query)"})
    s4.tool("Bash", {"command": "python bench/run.py --queries 5000"},
            "indexed 41,207 turns in 3.8 s\nqueries: 5000  p50 3.1 ms  p95 9.8 ms  p99 14.2 ms")
    s4.command("model", "Set model to opus (claude-opus-4-6)")
    s4.assistant("Tool output is now a separate field weighted 0.3; p95 query latency is 9.8 ms on 41k turns.")

    s5 = _t("chain-5", "relay-search", now - timedelta(minutes=6), step=timedelta(seconds=25), **kw)
    s5.user("Last bit for this feature: snippets. Highlight the matched terms and cut a 300-char window "
            "with an ellipsis.")
    s5.thinking("Pick the window with the most distinct query terms, then snap to word boundaries.")
    s5.tool("Read", {"file_path": f"{root}/core/index/snippets.py"},
            "def snippet(text: str, terms: set[str]) -> str:\n    return text[:300]")
    s5.tool("Edit", {"file_path": f"{root}/core/index/snippets.py", "old_string": "    return text[:300]",
                     "new_string": "    start = densest_window(text, terms, 300)\n"
                                   "    return highlight(ellipsize(text, start, 300), terms)"})
    s5.tool("Bash", {"command": "pytest tests/test_snippets.py -q"}, "3 passed in 0.05s")
    s5.assistant("Snippets now center on the densest window of matches, highlight each term and add an ellipsis "
                 "at cut edges.")
    s5.user("nice, run the whole suite")
    s5.tool("Bash", {"command": "pytest -q"}, "187 passed in 6.42s")
    s5.assistant("All 187 tests pass.")
    return [s1, s2, s3, s4, s5]


def _storefront(now: datetime) -> ClaudeTranscript:
    """A CSS layout fix, prompts written as block lists by the VS Code extension."""
    css = f"{PREFIX}/storefront/src/styles/checkout.css"
    t = _t("storefront-css", "storefront", now - timedelta(days=2, hours=4), git_branch="fix/checkout-sidebar",
           slug="amber-drifting-lantern")
    t.user("The order summary sidebar overlaps the footer on the checkout page when the cart has more than 6 "
           "items. It's position: sticky inside a flex container.", ide_file=css, images=1)
    t.tool("Read", {"file_path": css}, ".checkout-layout {\n  display: flex;\n  align-items: stretch;\n}\n\n"
           ".order-summary {\n  position: sticky;\n  top: 0;\n  height: 100vh;\n}")
    t.assistant("The sidebar is `height: 100vh` and stretched by `align-items: stretch`, so it grows past its "
                "column and runs into the footer. Use `align-self: flex-start` with "
                "`max-height: calc(100vh - var(--header-h))` and `overflow-y: auto` instead.")
    t.tool("Edit", {"file_path": css, "old_string": "  height: 100vh;",
                    "new_string": "  align-self: flex-start;\n  max-height: calc(100vh - var(--header-h));\n"
                                  "  overflow-y: auto;"})
    t.user("Better, but on mobile the layout collapses wrong: the sidebar ends up above the form.", as_blocks=True)
    t.assistant("Below 768px I'll switch to a grid with explicit `grid-template-areas` so the form comes first.")
    t.tool("Edit", {"file_path": css, "old_string": "}\n\n.order-summary",
                    "new_string": "}\n\n@media (max-width: 768px) {\n  .checkout-layout { display: grid; "
                                  "grid-template-areas: 'form' 'summary'; }\n}\n\n.order-summary"})
    t.tool("Bash", {"command": "npx playwright test e2e/checkout-layout.spec.ts"},
           "Running 2 tests using 2 workers\n  2 passed (4.1s)")
    t.assistant("Fixed on desktop and mobile; the Playwright layout tests pass.")
    t.title("Checkout sidebar overlaps footer")
    return t


def _postgres(now: datetime) -> ClaudeTranscript:
    """A 2.0.x session (before slugs existed): SQLite → PostgreSQL, with an old-layout subagent."""
    t = _t("billing-postgres", "billing-api", now - timedelta(days=21), version="2.0.37", git_branch="feat/postgres")
    t.user("We're moving billing-api from SQLite to PostgreSQL 16. Plan the migration: schema, data copy, and the "
           "code paths that use SQLite-specific SQL.")
    sub = t.subagent("5f3c9e1a", "Find every place in billing_api/ that uses SQLite-specific SQL: AUTOINCREMENT, "
                     "datetime('now'), INSERT OR REPLACE, PRAGMA.", layout="old", subagent_type="Explore",
                     duration=timedelta(seconds=75))
    sub.tool("Grep", {"pattern": "AUTOINCREMENT|datetime\\('now'\\)|INSERT OR REPLACE|PRAGMA",
                      "path": f"{PREFIX}/billing-api/billing_api", "output_mode": "content"},
             "billing_api/repo/invoices.py:88:    INSERT OR REPLACE INTO invoices\n"
             "billing_api/schema.sql:4:  id INTEGER PRIMARY KEY AUTOINCREMENT,\n"
             "billing_api/schema.sql:9:  created_at TEXT DEFAULT (datetime('now')),\n"
             "billing_api/db.py:21:    conn.execute('PRAGMA foreign_keys = ON')")
    sub.assistant("Four SQLite-isms: INSERT OR REPLACE in repo/invoices.py:88 (→ INSERT … ON CONFLICT DO UPDATE), "
                  "AUTOINCREMENT and datetime('now') in schema.sql (→ GENERATED ALWAYS AS IDENTITY, now()), and "
                  "PRAGMA foreign_keys in db.py (drop it; PostgreSQL enforces foreign keys).")
    t.assistant("Plan: 1) an alembic revision that recreates the schema with identity columns and timestamptz; "
                "2) replace the four SQLite-isms; 3) copy the data in batches with psycopg COPY; 4) reset sequences.")
    t.tool("Write", {"file_path": f"{PREFIX}/billing-api/migrations/versions/0007_postgres.py",
                     "content": "revision = '0007_postgres'\ndown_revision = '0006_credit_notes'\n"})
    t.tool("Bash", {"command": "alembic upgrade head"},
           "Exit code 1\nsqlalchemy.exc.ProgrammingError: (psycopg.errors.UndefinedFunction) "
           "function datetime(unknown) does not exist\nLINE 4:   created_at TEXT DEFAULT (datetime('now')),",
           is_error=True)
    t.assistant("The old default leaked into the revision. created_at becomes `timestamptz DEFAULT now()`.")
    t.tool("Edit", {"file_path": f"{PREFIX}/billing-api/migrations/versions/0007_postgres.py",
                    "old_string": "server_default=sa.text(\"datetime('now')\")",
                    "new_string": "server_default=sa.func.now()"})
    t.tool("Bash", {"command": "alembic upgrade head && pg_dump --schema-only billing | grep -c 'CREATE TABLE'"},
           "INFO  [alembic.runtime.migration] Running upgrade 0006_credit_notes -> 0007_postgres\n9")
    t.tool("Bash", {"command": "python scripts/copy_sqlite_to_pg.py --batch 5000"},
           "customers: 1,204 rows\ninvoices: 48,213 rows\nline_items: 311,870 rows\nsequences reset with setval()")
    t.assistant("Migration done: schema via alembic, 361k rows copied with COPY, sequences reset.")
    return t


def _flaky(now: datetime) -> ClaudeTranscript:
    """Debugging a flaky test, with hook and Bash progress noise."""
    t = _t("billing-flaky", "billing-api", now - timedelta(days=4, hours=6), git_branch="fix/flaky-rollover",
           hooks=("$HOME/.claude/hooks/guard.sh",), permission_mode="acceptEdits", slug="quiet-sorting-falcon")
    t.user("test_invoice_rollover is flaky in CI: it fails maybe 1 in 20 runs with an off-by-one day. Find out why.")
    t.tool("Bash", {"command": "pytest tests/test_invoices.py::test_invoice_rollover --count 50 -x -q"},
           "Exit code 1\nE   AssertionError: assert datetime.date(2026, 4, 1) == datetime.date(2026, 3, 31)\n"
           "FAILED tests/test_invoices.py::test_invoice_rollover\n1 failed, 37 passed in 2.10s", is_error=True)
    t.progress("bash_progress", output="37 passed")
    t.thinking("Off by one day, intermittently. The code probably uses UTC and the test local time; on the "
               "self-hosted runner (Europe/Berlin) they disagree for an hour or two after midnight.")
    t.tool("Grep", {"pattern": "date.today|datetime.now", "path": f"{PREFIX}/billing-api", "output_mode": "content"},
           "billing_api/periods.py:14:    today = datetime.now(timezone.utc).date()\n"
           "tests/test_invoices.py:31:    expected_end = date.today().replace(day=1) - timedelta(days=1)")
    t.assistant("Root cause: `rollover_period()` uses `datetime.now(timezone.utc).date()` but the test builds its "
                "expectation with `date.today()` in the runner's local timezone. Between midnight and 01:00/02:00 "
                "Berlin time the two dates differ. Fix: freeze time with freezegun and pass `today` explicitly.")
    t.tool("Edit", {"file_path": f"{PREFIX}/billing-api/tests/test_invoices.py",
                    "old_string": "def test_invoice_rollover(db):",
                    "new_string": "@freeze_time(\"2026-04-01 00:30:00+02:00\")\ndef test_invoice_rollover(db):"})
    t.tool("Bash", {"command": "pytest tests/test_invoices.py::test_invoice_rollover --count 200 -q"},
           "200 passed in 11.84s")
    t.user("also run pyright before I push")
    t.tool("Bash", {"command": "uv run pyright"},
           "0 errors, 0 warnings, 0 informations\n"
           "WARNING: there is a new pyright version available (v1.1.389 -> v1.1.390).\n"
           "pyright 1.1.390 is available\n"
           "Please install the new version or set PYRIGHT_PYTHON_FORCE_VERSION to `latest`")
    t.assistant("Type check is clean (a newer pyright exists but nothing requires it). The flaky test is fixed: "
                "200 consecutive runs pass with time frozen at the Berlin midnight edge.")
    return t


def _rust(now: datetime) -> ClaudeTranscript:
    """A Rust borrow-checker error, with thinking blocks and an AI title."""
    t = _t("ferrite-borrow", "ferrite", now - timedelta(days=9, hours=2), slug="brisk-folding-otter")
    t.user("cargo build fails in src/cache.rs with a borrow checker error I don't understand")
    t.tool("Bash", {"command": "cargo build"},
           "Exit code 101\nerror[E0502]: cannot borrow `*self` as mutable because it is also borrowed as immutable\n"
           "  --> src/cache.rs:42:13\n   |\n40 |         if let Some(v) = self.entries.get(&key) {\n"
           "   |                          ------------ immutable borrow occurs here\n41 |             "
           "self.touch(key);\n   |             ^^^^^^^^^^^^^^^ mutable borrow occurs here\n"
           "42 |             return Some(v);",
           is_error=True)
    t.thinking("Classic conditional-return-of-a-borrow: `v` borrows self.entries and is returned, so the shared "
               "borrow must last for the whole function, and touch(&mut self) conflicts with it.")
    t.tool("Read", {"file_path": f"{PREFIX}/ferrite/src/cache.rs"},
           "pub fn get(&mut self, key: u64) -> Option<&Block> {\n    if let Some(v) = self.entries.get(&key) {\n"
           "        self.touch(key);\n        return Some(v);\n    }\n    None\n}")
    t.assistant("`v` is a reference into `self.entries` that you return, so the immutable borrow lives until the "
                "function returns, and `self.touch(key)` needs `&mut self` while it is alive. Touch first, then "
                "look the entry up again.")
    t.tool("Edit", {"file_path": f"{PREFIX}/ferrite/src/cache.rs",
                    "old_string": "    if let Some(v) = self.entries.get(&key) {\n        self.touch(key);\n"
                                  "        return Some(v);\n    }\n    None",
                    "new_string": "    if !self.entries.contains_key(&key) {\n        return None;\n    }\n"
                                  "    self.touch(key);\n    self.entries.get(&key)"})
    t.tool("Bash", {"command": "cargo test cache::"},
           "running 9 tests\n.........\ntest result: ok. 9 passed; 0 failed; 0 ignored")
    t.user("why didn't the first version compile if the borrow ends at the return?")
    t.thinking("Explain NLL problem case #3 and that Polonius accepts it.")
    t.assistant("Because the reference is returned on one path, the borrow checker (NLL) makes it last to the end "
                "of the function on every path. This is the known 'problem case #3'; the Polonius borrow checker "
                "accepts the original code, stable rustc does not yet.")
    t.title("Fix E0502 in LRU cache get", kind="ai-title")
    return t


def _legacy(now: datetime) -> ClaudeTranscript:
    """A 1.0.x session: no git branch, opened with /clear, titled by a ``summary`` record."""
    t = _t("notes-cli-ruff", "notes-cli", now - timedelta(days=120), version="1.0.51", git_branch=None)
    t.command("clear")
    t.user("set up ruff via pre-commit for notes-cli; the CI lint job should fail on unsorted imports")
    t.tool("Write", {"file_path": f"{PREFIX}/notes-cli/.pre-commit-config.yaml", "content":
                     "repos:\n  - repo: https://github.com/astral-sh/ruff-pre-commit\n    rev: v0.5.0\n"
                     "    hooks:\n      - id: ruff\n        args: [--fix]\n"})
    t.tool("Bash", {"command": "pre-commit run --all-files"},
           "ruff" + "." * 69 + "Failed\n- hook id: ruff\n"
           "- files were modified by this hook\nFound 12 errors (12 fixed, 0 remaining).")
    t.assistant("ruff's `I` rules replace isort, so no separate isort hook is needed. Enabling them in pyproject.")
    t.tool("Edit", {"file_path": f"{PREFIX}/notes-cli/pyproject.toml", "old_string": 'select = ["E", "F"]',
                    "new_string": 'select = ["E", "F", "I"]'})
    t.tool("Bash", {"command": "pre-commit run --all-files"}, "ruff" + "." * 69 + "Passed")
    leaf = t.assistant("Import sorting is now enforced by ruff in pre-commit and in CI.")
    t.summary("Pre-commit ruff import sorting for notes-cli", leaf)
    return t


_MODULES = ("consumer.py", "offsets.py", "dlq.py", "schema_registry.py", "backfill.py", "metrics.py", "sink.py")
_FUNCS = ("poll_batch", "commit_offsets", "route_to_dlq", "decode_avro", "replay_range", "emit_counters", "flush_sink")
_ASKS = (
    "Add a unit test for `{f}` in {m} covering an empty batch.",
    "`{f}` in {m} swallows exceptions; log them with the partition and offset.",
    "Add type hints to {m} and make `{f}` keyword-only after the first argument.",
    "Rename the config key for `{f}` in {m} to something clearer and keep the old one as a fallback.",
    "Make `{f}` in {m} retry with exponential backoff, max 5 attempts.",
    "Add a Prometheus histogram around `{f}` in {m}.",
)


def _long(now: datetime, turns: int = 300) -> ClaudeTranscript:
    """A ~300-turn working session on a Kafka ingest service (size, paging, scrolling)."""
    rng = random.Random("demo-long")
    t = _t("ingest-long", "ingest-pipeline", now - timedelta(days=12), step=timedelta(seconds=9),
           slug="tidal-humming-quokka")
    for n in range(turns):
        if n == 150:
            t.compact("Analysis:\nA long series of small changes to the ingest service: tests, logging, retries "
                      "and metrics across consumer.py, offsets.py, dlq.py and sink.py. All tests pass.")
        if n == 217:
            t.user("Dashboards show consumer lag jumping whenever partitions rebalance. I think it's watermark skew "
                   "between partitions 3 and 7. How do we compute the low watermark?")
            t.tool("Grep", {"pattern": "low_watermark", "path": f"{PREFIX}/ingest-pipeline/ingest",
                            "output_mode": "content"},
                   "ingest/offsets.py:57:    low = min(p.low_watermark for p in assigned)")
            t.assistant("The low watermark is the minimum over assigned partitions, and after a rebalance the new "
                        "owner reports a stale watermark for partitions 3 and 7 until the first fetch. That skew "
                        "shows up as a lag spike. Skip partitions whose watermark is older than the assignment.")
            continue
        m, f = rng.choice(_MODULES), rng.choice(_FUNCS)
        t.user(rng.choice(_ASKS).format(f=f, m=m) + f" (step {n + 1})")
        path = f"{PREFIX}/ingest-pipeline/ingest/{m}"
        if n % 3 == 0:
            t.tool("Read", {"file_path": path}, f"def {f}(batch, *, timeout=5.0):\n    ...")
        t.tool("Edit", {"file_path": path, "old_string": f"def {f}(batch, *, timeout=5.0):",
                        "new_string": f"def {f}(batch: Batch, *, timeout: float = 5.0) -> None:"})
        if n % 4 == 0:
            passed = f"{rng.randint(4, 30)} passed in 0.{rng.randint(10, 99)}s"
            t.tool("Bash", {"command": f"pytest tests/test_{m[:-3]}.py -q"}, passed)
        t.assistant(f"Done: `{f}` in {m} updated" + (" and its tests pass." if n % 4 == 0 else "."))
    return t


def write_demo_corpus(home: Path, *, now: datetime | None = None) -> DemoCorpus:
    """Write the demo corpus under ``home/.claude/projects`` and describe it.

    File mtimes are set to each file's last record so "live" and "recent" agree with
    the timestamps inside.
    """
    now = now or DEFAULT_NOW
    root = Path(home) / ".claude" / "projects"
    chain = _chain(now)
    others = [_legacy(now), _postgres(now), _long(now), _rust(now), _flaky(now), _storefront(now)]
    sessions = sorted(chain + others, key=lambda s: s.start)
    for s in sessions:
        main = s.write_under(root)
        for f in [main] + [main.parent / c.relpath for c in s.subagents]:
            stamp = (s.end or now).timestamp()
            os.utime(f, (stamp, stamp))
    by = {name: _sid(name) for name in ("chain-1", "chain-2", "chain-3", "chain-4", "chain-5", "storefront-css",
                                         "billing-postgres", "billing-flaky", "ferrite-borrow", "notes-cli-ruff",
                                         "ingest-long")}
    return DemoCorpus(
        root=root,
        session_ids=tuple(s.session_id for s in sessions),
        chain_slug=CHAIN_SLUG,
        chain_session_ids=tuple(s.session_id for s in chain),
        live_session_id=chain[-1].session_id,
        compacted_session_id=by["chain-3"],
        queries=(
            ("k1 saturation", by["chain-1"]),
            ("snowball stemmer", by["chain-2"]),
            ("partial line watchdog debounce", by["chain-3"]),
            ("downweight tool output field", by["chain-4"]),
            ("snippet ellipsis", by["chain-5"]),
            ("sidebar overlaps footer", by["storefront-css"]),
            ("psycopg UndefinedFunction", by["billing-postgres"]),
            ("flaky test_invoice_rollover", by["billing-flaky"]),
            ("pyright 1.1.390", by["billing-flaky"]),
            ("E0502 borrow", by["ferrite-borrow"]),
            ("ruff import sorting pre-commit", by["notes-cli-ruff"]),
            ("watermark skew", by["ingest-long"]),
        ),
        now=now,
    )


def demo_environment(*, refresh: bool) -> dict[str, str]:
    """The environment of ``relay-search --demo …``: the demo's own HOME, never yours.

    It lives at ``~/.cache/relay-search-demo`` (its transcripts, cache and tags
    inside it). The app (``refresh``) writes the corpus afresh each start, so its
    newest session is live now; a subcommand writes it only when it is missing, so
    ``relay-search --demo show …`` after the app answers at once and shows the same.
    """
    from .config import Config

    home = Config.from_env().cache_path.parent / "relay-search-demo"
    if refresh or not (home / ".claude" / "projects").is_dir():
        write_demo_corpus(home, now=datetime.now(timezone.utc))
    return {"HOME": str(home), "USER": os.environ.get("USER", "")}
