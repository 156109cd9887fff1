"""The reader's speed in the 2,000-turn session (issue 22): open at a hit, n/N, Home/End, PageDown.

    python -m bench.reader_bench [--opens 5] [--keys 20] [--size 120x35]

Standalone (a throwaway HOME holding only the 2,000-turn session of
:func:`bench.app_bench.write_long_session`, indexed first), or called by
:mod:`bench.app_bench` on the bench corpus. Each latency runs from just before the
key (or ``open_ref``) to a screen update: opening, to the first refresh after the
reader opened ("painted" as in ``app_bench``); a key, to the first update the terminal
is sent that shows the reader's region changed, and "done" to the first update from
which it shows the view the key ends on (a jump that mounts a new window can paint a
frame in between). Frames are stamped as they are sent, so Pilot's own idle waiting
around a key does not count.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import p50, p95  # noqa: E402

HIT_TURN = 1500
QUERY = "beacon retry budget"
TIMEOUT = 30.0


async def _until(predicate: Callable[[], object], what: str, poll: float = 0.001) -> None:
    deadline = time.perf_counter() + TIMEOUT
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(poll)


async def _painted(widget: Any) -> float:
    done = asyncio.Event()
    stamp: list[float] = []
    widget.call_after_refresh(lambda: (stamp.append(time.perf_counter()), done.set()))
    await asyncio.wait_for(done.wait(), TIMEOUT)
    return stamp[0]


def _state(reader: Any) -> tuple:
    return (reader.current, getattr(reader, "match_index", None), round(reader.scroll_y), reader.lo, reader.hi)


def _summary(values: list[float]) -> dict[str, float]:
    return {"n": len(values), "p50_s": p50(values), "p95_s": p95(values), "max_s": max(values)}


async def measure_reader(app: Any, pilot: Any, session_id: str, opens: int = 5, keys: int = 20) -> dict:
    """Latencies of the reader on ``session_id`` in a running app (``pilot`` drives it)."""
    from tui.testing import is_idle
    from tui.widgets.sessions_pane import session_ref

    main = app.main
    reader = main.reader
    info = app.archive.one_session(session_id)
    ref = session_ref(info)
    out: dict[str, Any] = {"ref": ref, "turns": info.turn_count}
    opened: dict[str, list[float]] = {"top": [], "hit": []}
    for _ in range(opens):
        for kind in ("top", "hit"):
            reader.clear()
            await _until(lambda: not reader.is_open and is_idle(app), "the reader to clear", poll=0.01)
            t0 = time.perf_counter()
            if kind == "top":
                main.open_ref(ref, focus_reader=True)
            else:
                main.open_ref(ref, query=QUERY, focus_turn=(session_id, HIT_TURN), focus_reader=True)
            await _until(lambda: reader.is_open and reader.hi > reader.lo, f"{ref} to open")
            opened[kind].append(await _painted(reader) - t0)
            await _until(lambda: is_idle(app), "idle", poll=0.01)
    out["open_top"] = {**_summary(opened["top"]), "values_s": opened["top"]}
    out["open_hit"] = {**_summary(opened["hit"]), "values_s": opened["hit"]}

    # What the terminal is sent: each screen update (``App._display``) is stamped and the
    # reader's region read from the compositor that made it. "first" is the first update
    # that shows the reader changed; "done", the first from which it shows the final view
    # (a jump that mounts a new window may paint an intermediate frame first). The stamp
    # is taken before the region is read, which delays later frames slightly, not this one.
    display = app._display
    frames: list[tuple[float, str]] = []

    def region_text() -> str:
        strips = app.screen._compositor.render_strips()
        region = reader.content_region
        return "\n".join(strips[y].crop(region.x, region.right - 2).text for y in range(region.y, region.bottom))

    def recording(screen: Any, update: Any) -> None:
        display(screen, update)
        if update is not None and not app._batch_count:
            frames.append((time.perf_counter(), region_text()))

    done: list[float] = []

    async def press(key: str) -> float | None:
        before = _state(reader)
        shown_before = region_text()
        frames.clear()
        app._display = recording
        try:
            t0 = time.perf_counter()
            await pilot.press(key)
            try:
                await _until(lambda: _state(reader) != before, f"{key} to move the reader", poll=0.0005)
            except TimeoutError:
                return None  # nothing to move to (an end reached): not a latency
            await _until(lambda: is_idle(app), "idle", poll=0.005)
            await pilot.pause()
        finally:
            app._display = display
        final = region_text()
        changed = [t for t, text in frames if text != shown_before]
        if not changed:
            return None  # (moved without changing what the view shows)
        settled = len(frames)
        while settled > 0 and frames[settled - 1][1] == final:
            settled -= 1
        done.append((frames[settled][0] if settled < len(frames) else changed[0]) - t0)
        return changed[0] - t0

    reader.focus()
    await pilot.pause()
    for name, sequence in (
        ("n", ["n"] * keys),
        ("N", ["N"] * keys),
        ("home_end", ["end", "home"] * (keys // 2)),
        ("pagedown", ["pagedown"] * keys),
    ):
        if name == "pagedown":
            await pilot.press("home")
            await _until(lambda: is_idle(app), "idle", poll=0.01)
        done.clear()
        values = [t for key in sequence if (t := await press(key)) is not None]
        out[name] = {**_summary(values), "values_s": values} if values else {"n": 0}
        if values:
            out[name].update(done_p50_s=p50(done), done_p95_s=p95(done), done_values_s=list(done))
    return out


def _table(result: dict) -> str:
    rows = [("open at the top", "open_top"), ("open at a hit (turn 1,500)", "open_hit"), ("n", "n"), ("N", "N"),
            ("Home / End", "home_end"), ("PageDown", "pagedown")]
    lines = ["| what | n | p50 ms | p95 ms | max ms | done p50 ms | done p95 ms |", "|---|---:|---:|---:|---:|---:|---:|"]
    for label, key in rows:
        r = result[key]
        if not r.get("n"):
            lines.append(f"| {label} | 0 | — | — | — | — | — |")
            continue
        ms = [f"{r[k] * 1000:.0f}" if k in r else "—" for k in ("p50_s", "p95_s", "max_s", "done_p50_s", "done_p95_s")]
        lines.append(f"| {label} | {r['n']} | {' | '.join(ms)} |")
    return "\n".join(lines)


async def _standalone(size: tuple[int, int], opens: int, keys: int) -> dict:
    from bench.app_bench import LONG_SESSION_ID, write_long_session
    from bench.relay_adapter import relay_env
    from core.api import Archive
    from core.config import Config
    from tui.app import make_app
    from tui.testing import settle

    with tempfile.TemporaryDirectory(prefix="reader-bench-") as tmp:
        root, cache = Path(tmp) / "home", Path(tmp) / "cache"
        root.mkdir()
        write_long_session(root)
        config = Config.from_env(relay_env(root, cache))
        with Archive.open(config, sync=False) as archive:
            archive.sync()
        app = make_app(config=config)
        async with app.run_test(size=size) as pilot:
            await settle(pilot, timeout=60)
            result = await measure_reader(app, pilot, LONG_SESSION_ID, opens, keys)
            result["open_top"]["first_s"] = result["open_top"]["values_s"][0]
        result["size"] = f"{size[0]}×{size[1]}"
        return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--opens", type=int, default=5)
    ap.add_argument("--keys", type=int, default=20)
    ap.add_argument("--size", default="120x35")
    args = ap.parse_args(argv)
    width, height = (int(x) for x in args.size.split("x"))
    result = asyncio.run(_standalone((width, height), args.opens, args.keys))
    sys.stderr.write(_table(result) + "\n")
    sys.stdout.write(orjson.dumps(result).decode() + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

