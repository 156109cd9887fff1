"""The terminal app's speed on the bench corpus (issue 5), driven by Textual's Pilot.

    python -m bench.app_bench --root R --cache C --queries Q --session-id SID
    python -m bench.app_bench --root R --cache C --sync-only

One process (run by ``bench.run``, which also writes and later removes the 2,000-turn
session, see :func:`write_long_session`), headless, on the warm relay cache:

- **launch → interactive**: from just before ``make_app`` + ``run_test`` until the
  sessions pane has rows *and* a key typed into the search input shows up in it, both
  painted (see below). Imports are done before the clock starts (reported apart).
- **keystroke → hit list**: realistic queries from ``queries.json`` typed one key at a
  time; per key, from just before the key event is sent to the first screen refresh
  after the search pane put the hits *for the query ending in that key* into its hit
  list. The next key is typed after that.
- **the reader** (:mod:`bench.reader_bench`): open at a hit, ``n``/``N``, Home/End and
  PageDown in the 2,000-turn session, key to the first paint after the reader moved.
- **open → first paint**: ``MainScreen.open_ref`` (what ``enter`` on a session row or
  a hit calls) until the first screen refresh after the reader mounted its blocks,
  for the whole 2,000-turn session (top) and for a hit deep inside it (turn 1,500,
  with the query's hits marked, as opening a search hit does).

"Painted" is ``call_after_refresh``: Textual runs those callbacks once the screen has
no dirty widgets left, i.e. after the compositor refreshed. Timestamps are taken in
instance wrappers around the app's own handlers (``SearchPane._render_hits``,
``Reader.show``), so neither ``pilot.pause`` nor Pilot's idle waiting counts.
"""

from __future__ import annotations

import time

T_PROCESS = time.perf_counter()

import argparse  # noqa: E402
import asyncio  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
from collections.abc import Callable  # noqa: E402
from datetime import UTC, datetime, timedelta  # noqa: E402
from pathlib import Path  # noqa: E402

import orjson  # noqa: E402

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import log, p50, p95, p99, self_peak_rss_bytes  # noqa: E402

SIZE = (160, 48)  # a roomy terminal: more hits and reader lines painted than 80×24
LONG_TURNS = 2000
LONG_CWD = "/home/bench/work/lighthouse-marathon"
LONG_SLUG = "patient-lighthouse-marathon"
LONG_SESSION_ID = "b3e2c0de-2000-4000-8000-000000002000"
HIT_TURN = 1500
KEYSTROKES = 120  # at least; whole queries are typed
TIMEOUT = 30.0


# ---------------------------------------------------------------------------------------
# The 2,000-turn session


def long_session_project(root: Path) -> Path:
    from core.fixtures.claude import project_dir_name

    return root / ".claude" / "projects" / project_dir_name(LONG_CWD)


def write_long_session(root: Path, turns: int = LONG_TURNS) -> Path:
    """A 2,000-turn Claude Code session (prompts, tool calls with output, thinking,
    markdown answers) in a project dir of its own under ``root``; returns its path.

    Ends an hour ago, so it sorts near the top of the session list like a session one
    would actually open. The caller deletes the project dir afterwards.
    """
    from core.fixtures.claude import ClaudeTranscript

    step = timedelta(seconds=6)
    records_per_turn = 5  # roughly: snapshot, prompt, tool use + result, answer
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(hours=1) - step * records_per_turn * turns
    t = ClaudeTranscript(LONG_SESSION_ID, cwd=LONG_CWD, slug=LONG_SLUG, start=start, step=step)
    modules = ["beacon", "lens", "rotator", "foghorn", "keeper_log", "power_relay", "tide_sensor"]
    for n in range(turns):
        mod = modules[n % len(modules)]
        if n % 9 == 0:
            t.user(f"step {n}: the {mod} module is flaky again under load; can you look at why "
                   f"`test_{mod}_{n % 13}` times out on CI but passes locally? Keep the fix small.")
        else:
            t.user(f"step {n}: tune the lighthouse {mod} module, part {n}")
        if n % 5 == 0:
            t.thinking(f"The {mod} timing depends on the scheduler tick; part {n} probably needs the "
                       "retry budget raised rather than a longer sleep. Check the fixture first.")
        if n % 2 == 0:
            out = "\n".join(f"tests/test_{mod}.py::test_case_{i} PASSED" for i in range(n % 6 + 1))
            t.tool("Bash", {"command": f"pytest tests/test_{mod}.py -q", "description": f"Run the {mod} tests"},
                   f"{out}\n{n % 6 + 1} passed in 0.{n % 90 + 10}s")
        if n % 3 == 0:
            body = "\n".join(f"def {mod}_step_{i}(x):\n    return x * {i + n % 7}" for i in range(8))
            t.tool("Read", {"file_path": f"/home/bench/work/lighthouse-marathon/src/{mod}.py"}, body)
        answer = (f"Done with part {n}: the **{mod}** now blinks {n % 7 + 1} times per cycle.\n\n"
                  f"- raised the retry budget to {n % 5 + 2}\n- checked `test_{mod}_{n % 13}`\n- committed")
        if n % 4 == 0:
            answer += f"\n\n```python\n{mod}.configure(blinks={n % 7 + 1}, retries={n % 5 + 2})\n```"
        t.assistant(answer)
    return t.write(long_session_project(root))


# ---------------------------------------------------------------------------------------
# Measuring


def typing_queries(queries_file: Path, keystrokes: int = KEYSTROKES) -> list[str]:
    """Bench queries as typed in order (short enough to type, no repeats) until
    ``keystrokes`` keys; every kind (phrase, common, rare, identifier, mixed) shows up."""
    data = orjson.loads(queries_file.read_bytes())
    items = data["queries"] if isinstance(data, dict) else data
    chosen: list[str] = []
    total = 0
    for item in items:
        q = item["query"] if isinstance(item, dict) else item
        if not (4 <= len(q) <= 28) or q in chosen or not q.isascii():
            continue
        chosen.append(q)
        total += len(q)
        if total >= keystrokes:
            break
    return chosen


ANY = object()


class Painted:
    """Wait for "the app did X, then the screen refreshed" (X reported by a wrapper).

    ``expect(key)`` arms it; the wrapper calls ``report(widget, key)`` right after the
    app changed the widget's state; the first report for the armed key (or any, for
    ``ANY``) stamps the time and asks for a callback after the next screen refresh.
    """

    def __init__(self) -> None:
        self.key: object = None
        self.event = asyncio.Event()
        self.state_t = 0.0
        self.paint_t = 0.0

    def expect(self, key: object) -> None:
        self.key = key
        self.event = asyncio.Event()
        self.state_t = self.paint_t = 0.0

    def report(self, widget, key: object) -> None:
        """Called right after the app changed ``widget``'s state for ``key``."""
        if (self.key is not ANY and key != self.key) or self.event.is_set():
            return
        state_t = time.perf_counter()

        def painted() -> None:
            if not self.event.is_set():
                self.state_t = state_t
                self.paint_t = time.perf_counter()
                self.event.set()

        widget.call_after_refresh(painted)

    async def wait(self, what: str) -> None:
        try:
            await asyncio.wait_for(self.event.wait(), TIMEOUT)
        except TimeoutError:
            raise TimeoutError(f"timed out waiting for {what}") from None


async def _until(predicate: Callable[[], object], what: str, poll: float = 0.001) -> float:
    """Poll the app's state (no Pilot idling); returns when it first held."""
    deadline = time.perf_counter() + TIMEOUT
    while not predicate():
        if time.perf_counter() > deadline:
            raise TimeoutError(f"timed out waiting for {what}")
        await asyncio.sleep(poll)
    return time.perf_counter()


async def _painted(widget) -> float:
    done = asyncio.Event()
    stamp: list[float] = []
    widget.call_after_refresh(lambda: (stamp.append(time.perf_counter()), done.set()))
    await asyncio.wait_for(done.wait(), TIMEOUT)
    return stamp[0]


def _memory(out: dict, phase: str) -> str:
    """The resident set after ``phase``: now, its peak so far, and now's split into the
    process's own memory and the index files it maps (page cache, given back under
    pressure); kept in ``out["memory"]``."""
    status = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines() if ":" in line)
    now, peak, anon, mapped = (int(status.get(key, "0 kB").split()[0]) * 1024 for key in ("VmRSS", "VmHWM", "RssAnon", "RssFile"))
    out.setdefault("memory", {})[phase] = {"rss_bytes": now, "peak_rss_bytes": peak, "anon_bytes": anon, "file_bytes": mapped}
    return f"; RSS {now / 2**20:.0f} MB (own {anon / 2**20:.0f}, mapped files {mapped / 2**20:.0f}), peak {peak / 2**20:.0f} MB"


async def measure(config, queries: list[str], session_id: str, opens: int, real_ids: list[str] | None = None) -> dict:
    from tui import tasks  # (first: the app sets Textual's frame rate before Textual loads)

    from textual import events  # isort: skip
    from textual.widgets import Input  # isort: skip
    from tui.app import make_app
    from tui.testing import is_idle
    from tui.widgets.sessions_pane import session_ref

    out: dict = {"size": f"{SIZE[0]}×{SIZE[1]}"}
    # --- launch → interactive ---------------------------------------------------
    t0 = time.perf_counter()
    app = make_app(config=config)
    async with app.run_test(size=SIZE) as pilot:
        t_ready = time.perf_counter()  # run_test yields once the app processed start-up
        sessions = app.main.sessions_pane
        query_input = app.main.query_one("#query", Input)
        t_rows = await _until(lambda: sessions.session_list.option_count > 0, "the sessions pane")
        t_rows_painted = await _painted(sessions.session_list)
        await _until(lambda: app.focused is query_input, "the search input to have focus")
        t_key = time.perf_counter()
        # (the key posted, not pilot.press: Pilot waits for the process to be idle around
        # a key, up to seconds while the embedding thread works, which is not the app's time)
        app.post_message(events.Key("x", "x"))
        await _until(lambda: query_input.value == "x", "the typed key in the input")
        t_echo = await _painted(query_input)
        out["launch"] = {
            "interactive_s": t_echo - t0,
            "ready_s": t_ready - t0,
            "sessions_rows_s": t_rows - t0,
            "sessions_painted_s": t_rows_painted - t0,
            "key_echo_s": t_echo - t_key,
            "imports_s": t0 - T_PROCESS,
            "session_rows": sessions.session_list.option_count,
        }
        log(f"  [app] launch → interactive {out['launch']['interactive_s'] * 1000:.0f} ms "
            f"(sessions painted {out['launch']['sessions_painted_s'] * 1000:.0f} ms){_memory(out, 'launch')}")
        # the start-up sync (catch-up with the disk) and the watcher: wait them out
        t_sync = await _until(lambda: is_idle(app), "the start-up sync and watcher", poll=0.01)
        out["launch"]["synced_and_watching_s"] = t_sync - t0
        query_input.value = ""  # clear the "x"
        await _until(lambda: query_input.value == "" and is_idle(app), "the input to clear", poll=0.01)

        # --- keystroke → hit list ---------------------------------------------------
        pane = app.main.search_pane
        hits_shown = Painted()
        render_hits = pane._render_hits

        def _render_hits_timed() -> None:
            render_hits()
            hits_shown.report(pane.query_one("#hits"), pane.shown_query)

        pane._render_hits = _render_hits_timed  # type: ignore[method-assign]
        search_ms: dict[str, float] = {}
        search_task = tasks.search

        def _search_timed(archive, query, *args, **kwargs):
            message = search_task(archive, query, *args, **kwargs)
            search_ms[query] = message.elapsed_ms
            return message

        tasks.search = _search_timed  # the pane looks it up at each keystroke
        per_key: list[dict] = []
        try:
            for q in queries:
                query_input.value = ""
                await _until(lambda: pane.shown_query == "" and is_idle(app), "the input to clear", poll=0.01)
                for i, ch in enumerate(q):
                    typed = q[: i + 1]
                    hits_shown.expect(typed)
                    t_key = time.perf_counter()
                    await pilot.press(ch)
                    await hits_shown.wait(f"hits for {typed!r}")
                    per_key.append({
                        "query": typed,
                        "paint_s": hits_shown.paint_t - t_key,
                        "state_s": hits_shown.state_t - t_key,
                        "search_s": search_ms.get(typed, float("nan")) / 1000,
                        "hits": len(pane.hits),
                    })
        finally:
            tasks.search = search_task
            pane._render_hits = render_hits  # type: ignore[method-assign]
        lat = [k["paint_s"] for k in per_key]
        searched = [k["search_s"] for k in per_key if k["search_s"] == k["search_s"]]
        out["keystrokes"] = {
            "queries": queries,
            "count": len(per_key),
            "p50_s": p50(lat), "p95_s": p95(lat), "p99_s": p99(lat), "max_s": max(lat),
            "state_p95_s": p95([k["state_s"] for k in per_key]),
            "search_p50_s": p50(searched), "search_p95_s": p95(searched),
            "with_hits": sum(1 for k in per_key if k["hits"]),
            "per_key": per_key,
        }
        log(f"  [app] keystroke → hit list: {len(lat)} keys, p50 {p50(lat) * 1000:.1f} ms, "
            f"p95 {p95(lat) * 1000:.1f} ms (search alone p95 {p95(searched) * 1000:.1f} ms){_memory(out, 'keys')}")

        # --- open a 2,000-turn session → first paint --------------------------------
        query_input.value = ""
        await _until(lambda: is_idle(app), "idle", poll=0.01)
        reader = app.main.reader
        info = app.archive.one_session(session_id)
        ref = session_ref(info)
        turns = info.turn_count
        shown = Painted()
        show = reader.show

        phases: dict[str, float] = {}

        async def _show_timed(loaded) -> None:
            phases["show_start"] = time.perf_counter()
            await show(loaded)
            phases["show_end"] = time.perf_counter()
            shown.report(reader, loaded.ref)

        reader.show = _show_timed  # type: ignore[method-assign]
        results: dict[str, list[float]] = {"top": [], "hit": []}
        split: dict[str, list[dict[str, float]]] = {"top": [], "hit": []}  # where each open's time went
        details: dict[str, dict] = {}
        try:
            for _ in range(opens):
                for kind in ("top", "hit"):
                    reader.clear()
                    await _until(lambda: not reader.is_open and is_idle(app), "the reader to clear", poll=0.01)
                    shown.expect(ANY)  # the reader was cleared: the next show() is this one
                    if app.heap is not None:
                        app.heap.touch()  # what the enter key that calls open_ref does
                    t_open = time.perf_counter()
                    if kind == "top":  # enter on the session's row
                        app.main.open_ref(ref, focus_reader=True)
                    else:  # enter on a hit deep inside: its turn, the query's hits marked
                        app.main.open_ref(ref, query="beacon retry budget", focus_turn=(session_id, HIT_TURN),
                                          focus_reader=True)
                    await shown.wait(f"{ref} to paint")
                    results[kind].append(shown.paint_t - t_open)
                    split[kind].append({
                        "load_s": phases["show_start"] - t_open,  # worker: resolve, read, blocks (+ hits)
                        "mount_s": phases["show_end"] - phases["show_start"],
                        "paint_s": shown.paint_t - phases["show_end"],
                    })
                    details[kind] = {
                        "blocks": len(reader.blocks),
                        "mounted": reader.hi - reader.lo,
                        "current_turn": reader.current_block.turn if reader.current_block is not None else None,
                        "hits_marked": len(reader.hits),
                    }
        finally:
            reader.show = show  # type: ignore[method-assign]
        out["open"] = {
            "ref": ref, "turns": turns, "repeats": opens,
            **{f"{kind}_s": values for kind, values in results.items()},
            **{f"{kind}_first_s": values[0] for kind, values in results.items()},
            **{f"{kind}_p50_s": statistics.median(values) for kind, values in results.items()},
            **{f"{kind}_max_s": max(values) for kind, values in results.items()},
            "details": details,
            "split": split,
        }
        log(f"  [app] open {ref} ({turns} turns) → first paint: "
            f"top p50 {out['open']['top_p50_s'] * 1000:.0f} ms (max {out['open']['top_max_s'] * 1000:.0f}), "
            f"at turn {HIT_TURN} p50 {out['open']['hit_p50_s'] * 1000:.0f} ms (max {out['open']['hit_max_s'] * 1000:.0f})"
            f"{_memory(out, 'open')}")
        # --- the reader in it: open at a hit, n/N, Home/End, PageDown (issue 22) --------
        from bench.reader_bench import measure_reader

        out["reader"] = await measure_reader(app, pilot, session_id, opens)
        r = out["reader"]
        log(f"  [app] reader: open at a hit max {r['open_hit']['max_s'] * 1000:.0f} ms, n p95 {r['n']['p95_s'] * 1000:.0f}, "
            f"N p95 {r['N']['p95_s'] * 1000:.0f}, Home/End p95 {r['home_end']['p95_s'] * 1000:.0f}, "
            f"PageDown p95 {r['pagedown']['p95_s'] * 1000:.0f} ms{_memory(out, 'reader')}")
        if real_ids:  # real-shaped long sessions (bench/real_long.py): few turns of hundreds of steps
            from bench.real_long import measure_opens

            out["open_real"] = await measure_opens(app, real_ids, opens)
            log(f"  [app] open real-shaped long sessions → first paint: worst {out['open_real']['worst_s'] * 1000:.0f} ms"
                f"{_memory(out, 'open_real')}")
    return out


# ---------------------------------------------------------------------------------------


def _config(root: Path, cache: Path):
    from bench.relay_adapter import relay_env
    from core.config import Config

    return Config.from_env(relay_env(root, cache))


def sync_only(root: Path, cache: Path) -> dict:
    """Bring the relay cache up to date with ``root`` (builds it when missing)."""
    from core.api import Archive

    t0 = time.perf_counter()
    with Archive.open(_config(root, cache), sync=False) as archive:
        result = archive.sync()
    return {"status": "ok", "sync_s": time.perf_counter() - t0, "changed": bool(result.changed)}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, required=True, help="archive dir (HOME)")
    ap.add_argument("--cache", type=Path, required=True, help="the relay bench cache (XDG_CACHE_HOME)")
    ap.add_argument("--queries", type=Path)
    ap.add_argument("--session-id", default=LONG_SESSION_ID)
    ap.add_argument("--keystrokes", type=int, default=KEYSTROKES)
    ap.add_argument("--opens", type=int, default=5, help="times each open is repeated")
    ap.add_argument("--real-ids", default="", help="comma list: real-shaped long sessions to open too")
    ap.add_argument("--sync-only", action="store_true", help="just catch the cache up with the archive")
    args = ap.parse_args(argv)
    if args.sync_only:
        result = sync_only(args.root, args.cache)
    else:
        # Textual and the app, imported before the launch clock starts
        import tui.app  # noqa: F401

        queries = typing_queries(args.queries or args.root / "queries.json", args.keystrokes)
        result = {"status": "ok", **asyncio.run(measure(
            _config(args.root, args.cache), queries, args.session_id, args.opens, [i for i in args.real_ids.split(",") if i]
        ))}
    result["peak_rss_bytes"] = self_peak_rss_bytes()
    sys.stdout.write(orjson.dumps(result).decode() + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
