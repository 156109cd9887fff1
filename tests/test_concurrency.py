"""Several processes on one cache: readers during merges, a second indexer, a killed indexer."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from .support import config_for, open_archive, project_dir, transcript

SID = "55555555-5555-4555-8555-555555555555"

READER = textwrap.dedent(
    """
    import sys, time
    from core.api import Archive
    from core.config import Config
    config = Config.from_env({"HOME": sys.argv[1], "USER": "tester"})
    failures, calls = [], 0
    for i in range(int(sys.argv[2])):
        try:
            # a fresh process's open (as each CLI call does), then a query
            archive = Archive.open(config, read_only=True, sync=False)
            try:
                if not archive.search("pelican"):
                    failures.append("no hit")
            finally:
                archive.close()
        except Exception as exc:
            failures.append(f"{type(exc).__name__}: {exc}")
        calls += 1
    print(calls, len(failures))
    for f in failures[:5]:
        print(f)
    """
)


def _line(sid: str, text: str, n: int) -> bytes:
    record = {
        "parentUuid": None, "isSidechain": False, "userType": "external", "cwd": "/home/t/work/proj",
        "sessionId": sid, "version": "2.1.39", "gitBranch": "main", "type": "user",
        "message": {"role": "user", "content": text},
        "uuid": f"bbbbbbbb-0000-4000-8000-{n:012d}", "timestamp": "2026-11-01T10:00:00.000Z",
    }
    return (json.dumps(record) + "\n").encode()


def test_readers_never_fail_while_a_writer_merges(tmp_path):
    t = transcript(SID)
    t.user("the pelican migration plan")
    t.assistant("Done.")
    path = t.write(project_dir(tmp_path))
    with open_archive(tmp_path) as writer:
        assert writer.writer
        readers = [
            subprocess.Popen([sys.executable, "-c", READER, str(tmp_path), "300"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
            for _ in range(2)
        ]
        n = 0
        merges = 0
        while any(r.poll() is None for r in readers):
            for _ in range(2):
                n += 1
                with open(path, "ab") as handle:
                    handle.write(_line(SID, f"pelican step{n}", n))
                writer.sync([path])
            writer.compact()  # every segment retired for a merged one
            merges += 1
        outs = [r.communicate() for r in readers]
    assert merges > 10
    total = 0
    for out, err in outs:
        calls, failed, *lines = out.split("\n")[0].split() + out.split("\n")[1:]
        total += int(calls)
        assert int(failed) == 0, out + err
    assert total >= 500
