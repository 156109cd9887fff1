"""Held-out retrieval evaluation on the real transcripts (issue 2, "Done when").

Every query of ``bench/eval/queries.json`` is run through

* **relay** — our search: ``core.api.Archive(...).search(query, limit=10)`` in-process
  (default) or the installed console script ``relay-search search QUERY --json
  --limit 10`` (``--cli``), with ``HOME`` = the eval home;
* **baseline** — the original conversation_search design: one plain ``bm25s`` index
  over turns (turn = user prompt + the assistant text that follows, tool results and
  thinking not indexed, as in ``bench/baseline.py``), tokenized with
  ``bm25s.tokenize(stopwords="en", stemmer=PyStemmer english)``, top 10 turns.

Scoring is at the conversation level: the ten ranked hits (turns) are collapsed to
their distinct sessions in order, and a query's rank is the position of the first
session equal to ``session_id`` or one of ``alt_session_ids`` (0 = not in the top 10).
recall@10 = share of queries with rank > 0; MRR@10 = mean of 1/rank. The "hit" columns
score the raw hit list instead (rank of the first matching turn), which is stricter.

Usage::

    .venv/bin/python -m bench.eval.evaluate [--home DIR] [--cli] [--system relay|baseline|both]
                                            [--queries FILE] [--json-out FILE]

Without ``--home`` a fresh home is laid out by :mod:`bench.eval.make_home` (and
removed afterwards unless ``--keep``). The relay cache lives inside that home.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from bench.baseline import parse_session_turns
from bench.eval.make_home import TRANSCRIPTS, build_home

HERE = Path(__file__).resolve().parent
QUERIES = HERE / "queries.json"
LIMIT = 10


# --------------------------------------------------------------------------------------
# Results


@dataclass
class Hit:
    session_id: str
    label: str  # project / file, for the miss report
    snippet: str
    score: float


@dataclass
class Outcome:
    query: dict[str, Any]
    hits: list[Hit]
    conv_rank: int = 0  # rank among distinct sessions (0 = miss)
    hit_rank: int = 0  # rank among raw hits (0 = miss)
    seconds: float = 0.0

    @property
    def expected(self) -> set[str]:
        return {self.query["session_id"], *self.query.get("alt_session_ids", [])}


@dataclass
class Report:
    system: str
    outcomes: list[Outcome] = field(default_factory=list)
    build_seconds: float = 0.0


def score(query: dict[str, Any], hits: list[Hit], seconds: float) -> Outcome:
    out = Outcome(query, hits[:LIMIT], seconds=seconds)
    expected = out.expected
    sessions: list[str] = []
    for i, h in enumerate(out.hits, 1):
        if h.session_id not in sessions:
            sessions.append(h.session_id)
        if not out.hit_rank and h.session_id in expected:
            out.hit_rank = i
    for i, sid in enumerate(sessions, 1):
        if sid in expected:
            out.conv_rank = i
            break
    return out


def metrics(outcomes: list[Outcome], attr: str = "conv_rank") -> tuple[int, float, float]:
    n = len(outcomes)
    if not n:
        return 0, 0.0, 0.0
    ranks = [getattr(o, attr) for o in outcomes]
    recall = sum(1 for r in ranks if r) / n
    mrr = sum(1.0 / r for r in ranks if r) / n
    return n, recall, mrr


def at_one(outcomes: list[Outcome]) -> float:
    """R@1: share of queries whose expected conversation is the first one listed."""
    return sum(1 for o in outcomes if o.conv_rank == 1) / len(outcomes) if outcomes else 0.0


# --------------------------------------------------------------------------------------
# Our system


def eval_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {
        "CLAUDE_CONFIG_DIR", "CODEX_HOME", "GEMINI_CLI_HOME", "GEMINI_HOME", "ASH_HOME",
        "XDG_CACHE_HOME", "XDG_DATA_HOME"}}
    env.update(HOME=str(home), XDG_CACHE_HOME=str(home / ".cache"), XDG_DATA_HOME=str(home / ".local" / "share"))
    return env


def run_relay(home: Path, queries: list[dict[str, Any]], cli: bool, mode: str = "auto") -> Report:
    report = Report(("relay (cli)" if cli else "relay") + ("" if mode == "auto" else f" {mode}"))
    env = eval_env(home)
    if cli:
        exe = Path(sys.executable).with_name("relay-search")
        if not exe.exists():
            raise SystemExit(f"evaluate: {exe} not found (install the package into this venv)")
        t0 = time.perf_counter()
        subprocess.run([str(exe), "index"], env=env, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        report.build_seconds = time.perf_counter() - t0
        for q in queries:
            t = time.perf_counter()
            proc = subprocess.run([str(exe), "search", q["query"], "--json", "--limit", str(LIMIT), "--mode", mode],
                                  env=env, capture_output=True, text=True)
            hits: list[Hit] = []
            if proc.returncode == 0 and proc.stdout.strip():
                for r in json.loads(proc.stdout).get("results", []):
                    hits.append(Hit(r["session_id"], f"{r.get('project')} #{r.get('turn_number')}", r.get("snippet") or "", float(r.get("score") or 0)))
            elif proc.returncode not in (0, 1):
                print(f"  relay-search exited {proc.returncode} for {q['query']!r}: {proc.stderr.strip()[:200]}", file=sys.stderr)
            report.outcomes.append(score(q, hits, time.perf_counter() - t))
        return report

    from core.api import Archive
    from core.config import Config

    t0 = time.perf_counter()
    archive = Archive.open(Config.from_env(env))
    archive.semantic.run_foreground()  # hybrid recall measured whole: every passage embedded first (all cores)
    report.build_seconds = time.perf_counter() - t0
    try:
        for q in queries:
            t = time.perf_counter()
            hits = [Hit(h.session_id, f"{h.project} #{h.turn_number}", h.snippet or "", float(h.score))
                    for h in archive.search(q["query"], limit=LIMIT, mode=mode)]
            report.outcomes.append(score(q, hits, time.perf_counter() - t))
    finally:
        archive.close()
    return report


# --------------------------------------------------------------------------------------
# Baseline: plain bm25s over turns (the original design)


def run_baseline(home: Path, queries: list[dict[str, Any]]) -> Report:
    import bm25s
    import Stemmer

    stemmer = Stemmer.Stemmer("english")
    report = Report("baseline bm25s")
    t0 = time.perf_counter()
    projects = home / ".claude" / "projects"
    files = sorted(p for p in projects.glob("*/*.jsonl") if not p.name.startswith("agent-"))
    doc_ids: list[tuple[str, str]] = []
    texts: list[str] = []
    for path in files:
        for sid, text in parse_session_turns(path):
            doc_ids.append((sid, path.parent.name))
            texts.append(text)
    retriever = bm25s.BM25()
    retriever.index(bm25s.tokenize(texts, stopwords="en", stemmer=stemmer, show_progress=False), show_progress=False)
    report.build_seconds = time.perf_counter() - t0
    for q in queries:
        t = time.perf_counter()
        tokens = bm25s.tokenize([q["query"]], stopwords="en", stemmer=stemmer, return_ids=False, show_progress=False)
        hits: list[Hit] = []
        if tokens[0]:
            docs, scores = retriever.retrieve(tokens, k=min(LIMIT, len(doc_ids)), show_progress=False, n_threads=1)
            for d, s in zip(docs[0], scores[0]):
                if s > 0:
                    sid, project = doc_ids[int(d)]
                    hits.append(Hit(sid, project, texts[int(d)][:200], float(s)))
        report.outcomes.append(score(q, hits, time.perf_counter() - t))
    return report


# --------------------------------------------------------------------------------------
# Printing


def _short(sid: str) -> str:
    return sid[:8] if len(sid) > 12 else sid


def print_tables(reports: list[Report]) -> None:
    styles = sorted({o.query.get("style", "?") for r in reports for o in r.outcomes})
    groups: list[tuple[str, Any]] = [("ALL", lambda o: True),
                                     ("ALL w/o orphan_subagent", lambda o: o.query.get("style") != "orphan_subagent")]
    groups += [(f"  style={s}", (lambda s: lambda o: o.query.get("style") == s)(s)) for s in styles]
    head = f"{'':28}" + "".join(f"| {r.system:^46} " for r in reports)
    sub = f"{'group':22}{'n':>6}" + "".join(f"| {'R@1':>7} {'R@10':>7} {'MRR@10':>7} {'hitR@10':>8} {'hitMRR':>8}  " for _ in reports)
    print(head)
    print(sub)
    print("-" * len(sub))
    for name, pred in groups:
        line = ""
        n = 0
        for r in reports:
            sel = [o for o in r.outcomes if pred(o)]
            n, rec, mrr = metrics(sel)
            _, hrec, hmrr = metrics(sel, "hit_rank")
            line += f"| {at_one(sel):7.3f} {rec:7.3f} {mrr:7.3f} {hrec:8.3f} {hmrr:8.3f}  "
        print(f"{name:22}{n:>6}" + line)
    for r in reports:
        qs = [o.seconds for o in r.outcomes]
        print(f"{r.system}: build/open {r.build_seconds:.2f}s, median query {sorted(qs)[len(qs) // 2] * 1000:.1f} ms")


def print_misses(report: Report) -> None:
    bad = [o for o in report.outcomes if o.conv_rank != 1]
    print(f"\n=== {report.system}: {sum(1 for o in bad if not o.conv_rank)} misses, "
          f"{sum(1 for o in bad if o.conv_rank)} ranked > 1 (of {len(report.outcomes)})")
    for o in bad:
        q = o.query
        where = f"rank {o.conv_rank}" if o.conv_rank else "MISS"
        alts = f" (alt {', '.join(_short(a) for a in q.get('alt_session_ids', []))})" if q.get("alt_session_ids") else ""
        print(f"- [{where}] {q['query']!r}  style={q.get('style')}  want {_short(q['session_id'])}{alts}")
        seen: list[str] = []
        for h in o.hits:
            if h.session_id in seen:
                continue
            seen.append(h.session_id)
            mark = "*" if h.session_id in o.expected else " "
            snippet = " ".join(h.snippet.split())[:110]
            print(f"     {mark}{len(seen)}. {_short(h.session_id):10} {h.label[:44]:44} {h.score:8.2f}  {snippet}")
            if len(seen) == 3:
                break
        if not o.hits:
            print("      (no hits)")


# --------------------------------------------------------------------------------------


def _session_id_of(path: Path) -> str:
    """The ``sessionId`` the file's records carry (the file name when none does)."""
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                sid = json.loads(line).get("sessionId")
            except (ValueError, AttributeError):
                continue
            if isinstance(sid, str) and sid:
                return sid
    return path.stem


def _from_dev_set(data: dict[str, Any], transcripts: Path) -> list[dict[str, Any]]:
    """``../shared/eval/dev-queries.json`` ({"queries": [{q, file, kind, why}]}) in this
    script's shape: ``file`` (one path or a list, relative to the transcripts) becomes the
    expected session ids, ``kind`` the style. Negatives (``file`` null) have no right
    answer to rank and are left out of these metrics."""
    out = []
    for q in data["queries"]:
        files = q.get("file")
        if not files:
            continue
        ids = [_session_id_of(transcripts / f) for f in ([files] if isinstance(files, str) else files)]
        out.append({"query": q["q"], "session_id": ids[0], "alt_session_ids": ids[1:], "style": q.get("kind", "?")})
    return out


def load_queries(path: Path, transcripts: Path = TRANSCRIPTS) -> list[dict[str, Any]]:
    queries = json.loads(path.read_text(encoding="utf-8"))
    if isinstance(queries, dict) and "queries" in queries:  # the dev set's format
        queries = _from_dev_set(queries, transcripts)
    for q in queries:
        if not q.get("query") or not q.get("session_id"):
            raise SystemExit(f"evaluate: bad query entry {q!r}")
    return queries


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description="held-out conversation retrieval eval (relay vs bm25s baseline)")
    ap.add_argument("--home", type=Path, help="an eval home made by bench.eval.make_home (default: a fresh one)")
    ap.add_argument("--transcripts", type=Path, default=TRANSCRIPTS)
    ap.add_argument("--queries", type=Path, default=QUERIES)
    ap.add_argument("--system", choices=("relay", "baseline", "both"), default="both")
    ap.add_argument("--cli", action="store_true", help="run relay through the relay-search console script")
    ap.add_argument("--keep", action="store_true", help="keep the temp home")
    ap.add_argument("--mode", choices=("auto", "hybrid", "lexical"), default="auto", help="relay's search mode (hybrid recall)")
    ap.add_argument("--json-out", type=Path, help="write per-query results here")
    args = ap.parse_args(argv)

    queries = load_queries(args.queries, args.transcripts)
    made = args.home is None
    home = build_home(None, args.transcripts) if made else args.home
    print(f"home: {home}  queries: {len(queries)}  sessions: {len({q['session_id'] for q in queries})}")
    try:
        reports: list[Report] = []
        if args.system in ("relay", "both"):
            reports.append(run_relay(home, queries, args.cli, args.mode))
        if args.system in ("baseline", "both"):
            reports.append(run_baseline(home, queries))
        print()
        print_tables(reports)
        for r in reports:
            print_misses(r)
        if args.json_out:
            args.json_out.write_text(json.dumps({
                r.system: [{**o.query, "conv_rank": o.conv_rank, "hit_rank": o.hit_rank,
                            "top": [h.session_id for h in o.hits]} for o in r.outcomes]
                for r in reports}, indent=1, ensure_ascii=False))
    finally:
        if made and not args.keep:
            shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
