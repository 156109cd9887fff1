"""The app keeps glibc's malloc to two arenas (``core.memory.fewer_malloc_arenas``).

Each case is a fresh Python process: it builds the app (``make_app``, as the CLI
and ``--demo`` do) or not, then six threads allocate at once, as the app's search,
sync and watcher threads do, and glibc's own ``malloc_info`` counts the arenas
("heaps"). Without the app's setting the same threads get arenas of their own, so
the test can tell the two apart. ``MALLOC_ARENA_MAX`` set by the user wins.
"""

from __future__ import annotations

import os
import platform
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.skipif(
    platform.system() != "Linux" or platform.libc_ver()[0] != "glibc", reason="glibc's malloc only"
)

PROGRAM = textwrap.dedent(
    """
    import ctypes, os, re, sys, tempfile, threading

    if sys.argv[1] == "app":
        from tui.app import make_app
        make_app(sys.argv[2])

    held, go = [], threading.Event()

    def allocate():
        held.append([bytearray(5000) for _ in range(20000)])  # (past pymalloc: malloc's own)
        go.wait()

    threads = [threading.Thread(target=allocate) for _ in range(6)]
    for t in threads:
        t.start()
    while len(held) < len(threads):
        pass  # (all six allocating before the count)
    libc = ctypes.CDLL(None)
    libc.fdopen.restype = ctypes.c_void_p
    libc.fdopen.argtypes = [ctypes.c_int, ctypes.c_char_p]
    libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
    libc.fclose.argtypes = [ctypes.c_void_p]
    fd, path = tempfile.mkstemp()
    stream = libc.fdopen(fd, b"w")
    libc.malloc_info(0, stream)
    libc.fclose(stream)
    print(len(re.findall('<heap nr=', open(path).read())))
    os.unlink(path)
    go.set()
    for t in threads:
        t.join()
    """
)


def _arenas(tmp_path, what: str, env: dict[str, str] | None = None) -> int:
    run_env = {k: v for k, v in os.environ.items() if k != "MALLOC_ARENA_MAX"} | (env or {})
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, what, str(tmp_path)],
        capture_output=True, text=True, timeout=120, env=run_env,
    )
    assert done.returncode == 0, done.stderr
    return int(done.stdout.split()[-1])


def test_the_app_keeps_malloc_to_two_arenas(tmp_path):
    assert _arenas(tmp_path, "app") <= 2


def test_without_it_threads_allocating_at_once_get_arenas_of_their_own(tmp_path):
    assert _arenas(tmp_path, "plain") > 2


def test_malloc_arena_max_set_by_the_user_wins(tmp_path):
    assert _arenas(tmp_path, "app", {"MALLOC_ARENA_MAX": "4"}) > 2
