"""Measure team mode on a generated archive: sync throughput and team search latency.

    python -m core.team.bench --archive bench/data/archive-1800mb-2400s-seed42 --users 3

Runs a throwaway PostgreSQL cluster (or ``--url``), indexes the archive locally once
(its cache goes to a temp dir, never into the archive), pushes it as each of
``--users`` users (the same transcripts under several names: a team store N times the
archive), re-runs one sync (nothing new), times one appended turn from disk to the
store, then runs the archive's ``queries.json`` against the team store (p50/p99, all
users and one user). Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from core.api import Archive
from core.config import Config

from .cluster import ThrowawayCluster
from .db import connect
from .push import Pusher
from .store import TeamArchive


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def _config(archive: Path, work: Path, user: str) -> Config:
    return Config.from_env({"HOME": str(archive), "USER": user, "XDG_CACHE_HOME": str(work / "cache"), "XDG_DATA_HOME": str(work / "data")})


def run(archive_dir: Path, url: str, users: int, work: Path) -> dict:
    out: dict = {"archive": str(archive_dir)}
    names = [f"user{i + 1}" for i in range(users)]
    t = time.perf_counter()
    with Archive.open(_config(archive_dir, work, names[0])) as local:
        out["local_index_s"] = round(time.perf_counter() - t, 2)
        total_bytes = local.stats().transcript_bytes
        out["transcript_mb"] = round(total_bytes / 1e6, 1)
        pushes = []
        with connect(url) as conn:
            for name in names:
                t = time.perf_counter()
                result = Pusher(local, conn, name).push()
                seconds = time.perf_counter() - t
                pushes.append({"user": name, "seconds": round(seconds, 2), "mb_per_s": round(total_bytes / 1e6 / seconds, 1),
                               "sessions": result.sessions, "messages": result.messages, "passages": result.docs})
            out["sync"] = pushes
            t = time.perf_counter()
            again = Pusher(local, conn, names[0]).push()
            out["resync_nothing_new_s"] = round(time.perf_counter() - t, 3)
            assert not again.changed
            # one appended turn: disk → local index → team store
            info = local.list_sessions(limit=1)[0]
            path = Path(info.files[0])
            original = path.read_bytes()
            stat = path.stat()
            try:
                last = json.loads(original.rstrip(b"\n").rsplit(b"\n", 1)[-1])
                record = {**last, "type": "user", "uuid": "bench-append-0001", "parentUuid": last.get("uuid"),
                          "message": {"role": "user", "content": "zqxbenchappendtoken what about the flux capacitor"}}
                with open(path, "ab") as handle:
                    handle.write(json.dumps(record).encode() + b"\n")
                t = time.perf_counter()
                local.sync([path])
                pushed = Pusher(local, conn, names[0]).push()
                out["append_to_store_s"] = round(time.perf_counter() - t, 3)
                out["append_pushed_messages"] = pushed.messages
            finally:
                path.write_bytes(original)
                import os

                os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))
            sizes = conn.execute(
                "SELECT pg_database_size(current_database()), pg_total_relation_size('postings'), "
                "pg_total_relation_size('messages'), (SELECT count(*) FROM postings), (SELECT count(*) FROM docs)"
            ).fetchone()
            out["db_mb"] = round(sizes[0] / 1e6, 1)
            out["postings_mb"] = round(sizes[1] / 1e6, 1)
            out["messages_mb"] = round(sizes[2] / 1e6, 1)
            out["postings_rows"] = sizes[3]
            out["docs_rows"] = sizes[4]
    data = json.loads((archive_dir / "queries.json").read_text())
    queries = [q["query"] if isinstance(q, dict) else q for q in (data["queries"] if isinstance(data, dict) else data)]
    with TeamArchive(url) as team:
        team.search(queries[0])  # connect the pool, load the users' sessions
        cases: list[tuple[str, dict[str, Any]]] = [("all_users", {}), ("one_user", {"user": names[-1]})]
        for label, kw in cases:
            times, empty = [], 0
            for q in queries:
                t = time.perf_counter()
                hits = team.search(q, limit=10, **kw)
                times.append((time.perf_counter() - t) * 1000)
                empty += not hits
            out[f"search_{label}"] = {"queries": len(queries), "p50_ms": round(statistics.median(times), 1),
                                      "p99_ms": round(_pct(times, 0.99), 1), "max_ms": round(max(times), 1), "no_hits": empty}
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--archive", type=Path, required=True, help="a bench archive dir (used as HOME, read only)")
    ap.add_argument("--users", type=int, default=3)
    ap.add_argument("--url", help="an existing empty database (default: a throwaway cluster)")
    args = ap.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="relay-team-bench-") as tmp:
        if args.url:
            result = run(args.archive, args.url, args.users, Path(tmp))
        else:
            with ThrowawayCluster() as pg:
                result = run(args.archive, pg.create_database("bench"), args.users, Path(tmp))
    json.dump(result, sys.stdout, indent=2)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
