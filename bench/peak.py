"""Run a command and write its exact peak RSS to a file: ``python -m bench.peak FILE CMD…``.

Why a launcher: Linux gives a new process the *parent's* high-water mark when it execs
(``ru_maxrss`` is carried across ``exec``, and a vfork/fork child starts from the parent's
memory), so a command spawned by a benchmark that has grown to 120 MB (it generated the
archive) reports at least 120 MB, however little it used. This launcher is small when it
spawns the command, so the command's ``ru_maxrss`` from ``wait4`` (its own peak and that of
its reaped descendants) is its own. stdin/stdout/stderr pass straight through; the exit
status is the command's (a signal: 128 + its number).
"""

from __future__ import annotations

import os
import subprocess
import sys


def main(argv: list[str]) -> int:
    out, cmd = argv[0], argv[1:]
    proc = subprocess.Popen(cmd)
    try:
        _, status, usage = os.wait4(proc.pid, 0)
    except KeyboardInterrupt:
        proc.kill()
        raise
    with open(out, "w", encoding="ascii") as f:
        f.write(str(usage.ru_maxrss * 1024))
    code = os.waitstatus_to_exitcode(status)
    return code if code >= 0 else 128 - code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
