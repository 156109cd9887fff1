"""Team mode on the bench corpus (issue 7), in its own process.

    python -m bench.team_bench --root R [--users 3] [--url postgresql://…]

A thin wrapper around :func:`core.team.bench.run` (the measurement itself lives
there): a throwaway PostgreSQL cluster (:class:`core.team.cluster.ThrowawayCluster`)
unless ``--url``, the archive indexed locally into a temp dir (never into the archive
or the bench caches), pushed as ``--users`` users, one re-sync that finds nothing new,
one appended turn disk → store (the file is restored), then the archive's
``queries.json`` against the team store for all users and with ``user=``. Prints one
JSON line; ``{"status": "skipped", "note": …}`` when no PostgreSQL is installed.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import orjson

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import log, self_peak_rss_bytes


def measure(root: Path, users: int, url: str | None = None) -> dict:
    try:
        from core.team.bench import run
        from core.team.cluster import ThrowawayCluster, find_bin_dir
    except ImportError as exc:  # psycopg missing
        return {"status": "skipped", "note": f"team mode not importable ({exc}); `pip install -e .` first"}
    if url is None and find_bin_dir() is None:
        return {"status": "skipped",
                "note": "no PostgreSQL binaries (initdb) found; install the postgresql package "
                        "(`apt-get install postgresql`) to measure team mode"}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="relay-team-bench-") as tmp:
        if url is not None:
            result = run(root, url, users, Path(tmp))
            server = "given URL"
        else:
            with ThrowawayCluster() as pg:
                log(f"  [team] throwaway PostgreSQL ({pg.bin.parent.name}) on 127.0.0.1:{pg.port}")
                result = run(root, pg.create_database("bench"), users, Path(tmp))
                server = f"throwaway PostgreSQL {pg.bin.parent.name} cluster on loopback (fsync off)"
    return {"status": "ok", "users": users, "server": server, "total_s": time.perf_counter() - t0, **result}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--root", type=Path, required=True, help="a bench archive dir (read only)")
    ap.add_argument("--users", type=int, default=3)
    ap.add_argument("--url", help="an existing empty database (default: a throwaway cluster)")
    args = ap.parse_args(argv)
    result = measure(args.root, args.users, args.url)
    result["peak_rss_bytes"] = self_peak_rss_bytes()
    sys.stdout.write(orjson.dumps(result).decode() + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
