"""Ash contexts in linear time (issue 25): reading a 1 MB and a 4x longer ``context.jsonl``.

    python -m bench.ash_growth                 # 1 MB and 4 MB, branches included; prints JSON
    python -m bench.ash_growth --mb 1 --scale 4 --runs 3

Writes one Ash session with the fixtures (``core.fixtures.ash``: prompts, answers,
tool calls with output, a fork every ``--fork-every`` turns, a compaction now and
then) until its context is ``--mb`` MB, and one ``--scale`` times as long, then
times a cold read of each as the indexer does it (``core.archive.ingest.run_job``:
parse, tree, entries, turn documents, term counts; best of ``--runs``). Targets:
1 MB in ≤ 1 s, ``--scale`` x the lines in ≤ 1.25 x ``--scale`` the time.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def write_session(home: Path, target_bytes: int, fork_every: int = 25) -> Path:
    """An Ash session of about ``target_bytes`` of context; returns context.jsonl."""
    from core.fixtures.ash import AshSession

    session = AshSession(home / ".ash", key="telegram_1_2")
    turn = 0
    while not session.context.exists() or session.context.stat().st_size < target_bytes:
        prompt = session.user(f"turn {turn}: check the ledger importer for invoice {turn} and fix the flaky retry")
        answer = session.assistant(f"Looking at the importer for invoice {turn}.", thinking="read the module first")
        session.tool(answer, "bash", {"command": f"pytest tests/test_ledger.py -k invoice_{turn}"},
                     "collected 12 items\n" + "test_ledger.py ........F...\nFAILED test_invoice_rollover\n" * 4)
        session.assistant(f"Fixed the rollover for invoice {turn}: the retry now waits for the lock.")
        if turn and turn % fork_every == 0:
            session.fork(prompt, f"branch-{turn}")  # regenerate this turn's answer on a branch
            session.assistant(f"Another take on invoice {turn}: retry with backoff instead.")
            session.switch("main")
        if turn and turn % (4 * fork_every) == 0:
            session.compaction(f"Worked on invoices up to {turn}.")
        turn += 1
    return session.context


def time_read(context: Path, runs: int) -> tuple[float, int, int]:
    """(best seconds, lines, entries) of reading ``context`` as a cold index does."""
    from core.archive.ingest import Job, run_job
    from core.sources import MAIN, SourceFile

    file = SourceFile(path=context, agent="ash", kind=MAIN, project_key="telegram", session_id=context.parent.name,
                      order_key=context.name)
    best = float("inf")
    out = None
    for _ in range(runs):
        started = time.perf_counter()
        out = run_job(Job(file, 1))
        best = min(best, time.perf_counter() - started)
    assert out is not None and out.error is None, out.error if out else None
    lines = sum(1 for _ in context.open("rb"))
    return best, lines, out.n_messages


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mb", type=float, default=1.0)
    ap.add_argument("--scale", type=int, default=4)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--fork-every", type=int, default=25)
    args = ap.parse_args(argv)
    result: dict = {}
    with tempfile.TemporaryDirectory(prefix="ash-growth-") as tmp:
        for name, size in (("1x", args.mb), (f"{args.scale}x", args.mb * args.scale)):
            context = write_session(Path(tmp) / name, int(size * 1e6), args.fork_every)
            seconds, lines, entries = time_read(context, args.runs)
            result[name] = {"bytes": context.stat().st_size, "lines": lines, "entries": entries,
                            "read_s": round(seconds, 4)}
    small, big = result["1x"], result[f"{args.scale}x"]
    result["time_ratio"] = round(big["read_s"] / small["read_s"], 2)
    result["line_ratio"] = round(big["lines"] / small["lines"], 2)
    sys.stdout.write(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
