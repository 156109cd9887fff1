"""Export speed on the 2,000-turn session (target: under 2 s per format).

    python -m bench.export_bench [--turns 2000] [--repeat 3]

Writes the app benchmark's 2,000-turn Claude Code session (``bench.app_bench``)
under a temp HOME, indexes it, then times ``core.outputs.export.export`` of the whole
session to Markdown, HTML and JSON: the first export of each format reads the
transcript (the reader's session cache is cleared before it: "cold"), the next
ones reuse it ("warm"). Also times a usage report over the same cache. Prints one
line per measure and a JSON summary; exits 1 when a cold export misses 2 s.
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

from bench.app_bench import LONG_SESSION_ID, LONG_TURNS, write_long_session  # noqa: E402
from core.api import Archive  # noqa: E402
from core.config import Config  # noqa: E402
from core.outputs import export  # noqa: E402

TARGET_SECONDS = 2.0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--turns", type=int, default=LONG_TURNS)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    results: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "home"
        path = write_long_session(home, args.turns)
        out_dir = Path(tmp) / "out"
        out_dir.mkdir()
        config = Config.from_env({"HOME": str(home), "USER": "bench"})
        with Archive.open(config) as archive:
            for fmt in ("md", "html", "json"):
                times = []
                for n in range(args.repeat):
                    if n == 0:
                        archive.reader._cache.clear()  # cold: read and parse the transcript again
                    started = time.perf_counter()
                    done = export.export(archive, LONG_SESSION_ID, fmt=fmt, output=str(out_dir / f"long.{fmt}"),
                                         thinking=True, cwd=out_dir)
                    times.append(time.perf_counter() - started)
                size = done.files[0].stat().st_size
                results[fmt] = {"cold_s": round(times[0], 3), "warm_s": round(min(times[1:] or times), 3), "bytes": size}
                print(f"export {fmt:<4} cold {times[0]:.3f} s  warm {min(times[1:] or times):.3f} s  {size / 1e6:.1f} MB")
            started = time.perf_counter()
            archive.usage_report(by="day")
            results["usage_report"] = {"s": round(time.perf_counter() - started, 4)}
            print(f"usage report {results['usage_report']['s']:.4f} s")
        results["transcript_bytes"] = {"bytes": path.stat().st_size}
    print(json.dumps({"turns": args.turns, "target_s": TARGET_SECONDS, "results": results}))
    return 0 if all(results[f]["cold_s"] < TARGET_SECONDS for f in ("md", "html", "json")) else 1


if __name__ == "__main__":
    sys.exit(main())
