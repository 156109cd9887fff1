"""Opening real-shaped long sessions in the app (issue 15), first paint, worst of N.

    python -m bench.real_long [--opens 5] [--transcripts DIR]

The 2,000-turn fixture of ``bench/app_bench.py`` has small turns; real Claude Code
sessions are few turns of hundreds of steps each (the spotter sessions in
``../shared/transcripts``: 450–650 messages, 2.7–3.5 MB, heavy tool output). Each
is cloned under a fresh session id (and its subagent files with it) into an
archive, indexed, and opened in the real app (headless, 160×48) the way ``enter``
does: at the top, and at a hit in its last turn. The clock runs from ``open_ref``
to the first screen refresh after the reader mounted the conversation.
``bench/app_bench.py`` runs the same measurement inside ``bench.run``.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
import uuid
from pathlib import Path

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SIZE = (160, 48)
REAL_CWD = "/home/bench/work/spotter-real"
TIMEOUT = 60.0


def transcripts_dir() -> Path:
    env = os.environ.get("RELAY_SEARCH_TRANSCRIPTS")
    return Path(env) if env else Path(__file__).resolve().parents[2] / "shared" / "transcripts"


def real_sessions(source: Path | None = None) -> list[Path]:
    """The large real Claude Code sessions to clone (main files, biggest first)."""
    spotter = (source or transcripts_dir()) / "spotter"
    files = [p for p in spotter.glob("*.jsonl") if p.stat().st_size > 1_000_000]
    return sorted(files, key=lambda p: p.stat().st_size, reverse=True)


def write_real_long_sessions(project_dir: Path, source: Path | None = None) -> list[str]:
    """Clone each real long session into ``project_dir`` under a new id; return the ids.

    The text is kept byte for byte except the session id (file name, records,
    subagent dir), so the shape — steps per turn, tool output sizes — is the real one.
    Files get fresh mtimes, newest first, so they sort near the top like sessions
    one would open.
    """
    project_dir.mkdir(parents=True, exist_ok=True)
    ids: list[str] = []
    now = time.time()
    for n, path in enumerate(real_sessions(source)):
        old = path.stem
        new = str(uuid.uuid5(uuid.NAMESPACE_URL, f"relay-search-bench/{old}"))
        target = project_dir / f"{new}.jsonl"
        target.write_text(path.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
        os.utime(target, (now - 60 * n, now - 60 * n))
        subagents = path.parent / old
        if subagents.is_dir():
            for sub in subagents.rglob("*.jsonl"):
                dest = project_dir / new / sub.relative_to(subagents)
                dest.parent.mkdir(parents=True, exist_ok=True)
                dest.write_text(sub.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
                os.utime(dest, (now - 60 * n, now - 60 * n))
        ids.append(new)
    return ids


async def measure_opens(app, session_ids: list[str], opens: int) -> dict:
    """Open each session ``opens`` times at the top and at its last turn; seconds."""
    from tui.testing import is_idle

    reader = app.main.reader
    show = reader.show
    stamps: dict[str, float] = {}
    painted = asyncio.Event()

    async def timed(loaded) -> None:
        stamps["loaded"] = time.perf_counter()
        await show(loaded)
        stamps["mounted"] = time.perf_counter()
        reader.call_after_refresh(lambda: (stamps.__setitem__("painted", time.perf_counter()), painted.set()))

    async def until(predicate, what: str) -> None:
        deadline = time.perf_counter() + TIMEOUT
        while not predicate():
            if time.perf_counter() > deadline:
                raise TimeoutError(f"timed out waiting for {what}")
            await asyncio.sleep(0.005)

    reader.show = timed  # type: ignore[method-assign]
    rows = []
    try:
        for sid in session_ids:
            info = app.archive.one_session(sid)
            last = max(info.turn_count - 1, 0)
            for kind in ("top", "hit"):
                times: list[float] = []
                for _ in range(opens):
                    reader.clear()
                    await until(lambda: not reader.is_open and is_idle(app), "the reader to clear")
                    stamps.clear()
                    painted.clear()
                    t0 = time.perf_counter()
                    if kind == "top":
                        app.main.open_ref(sid, focus_reader=True)
                    else:
                        app.main.open_ref(sid, query="test", focus_turn=(sid, last), focus_reader=True)
                    await asyncio.wait_for(painted.wait(), TIMEOUT)
                    times.append(stamps["painted"] - t0)
                rows.append({
                    "session": sid, "messages": info.message_count if hasattr(info, "message_count") else None,
                    "turns": info.turn_count, "kind": kind, "times_s": times, "worst_s": max(times),
                })
    finally:
        reader.show = show  # type: ignore[method-assign]
    return {"opens": opens, "rows": rows, "worst_s": max(r["worst_s"] for r in rows) if rows else None}


def table(result: dict, sizes: dict[str, int]) -> str:
    lines = ["| session (clone of) | size | turns | open | first paint, worst of %d | all |" % result["opens"], "|---|---|---|---|---|---|"]
    for r in result["rows"]:
        shown = " ".join(f"{t * 1000:.0f}" for t in r["times_s"])
        lines.append(
            f"| {r['session'][:8]} | {sizes.get(r['session'], 0) / 1e6:.1f} MB | {r['turns']} | {r['kind']} "
            f"| {r['worst_s'] * 1000:.0f} ms | {shown} |"
        )
    return "\n".join(lines)


async def _run(home: Path, ids: list[str], opens: int) -> dict:
    from tui.app import make_app
    from tui.testing import settle

    app = make_app(home)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot, timeout=300)
        return await measure_opens(app, ids, opens)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--opens", type=int, default=5)
    ap.add_argument("--transcripts", type=Path, default=None)
    args = ap.parse_args(argv)
    home = Path(tempfile.mkdtemp(prefix="relay-search-real-long-"))
    try:
        from core.fixtures.claude import project_dir_name

        project = home / ".claude" / "projects" / project_dir_name(REAL_CWD)
        ids = write_real_long_sessions(project, args.transcripts)
        if not ids:
            print("no real long sessions found (set RELAY_SEARCH_TRANSCRIPTS)", file=sys.stderr)
            return 1
        from core.api import Archive
        from core.config import Config

        with Archive.open(Config.from_env({"HOME": str(home)})):
            pass  # index once, outside the measurement
        import tui.app  # noqa: F401  (imports before the clock, as in app_bench)

        result = asyncio.run(_run(home, ids, args.opens))
        sizes = {sid: (project / f"{sid}.jsonl").stat().st_size for sid in ids}
        print(table(result, sizes))
        print(f"worst: {result['worst_s'] * 1000:.0f} ms")
    finally:
        shutil.rmtree(home, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
