"""The app, ``mcp`` and ``serve`` keep glibc's malloc to two arenas
(``core.memory.fewer_malloc_arenas``), and hand big blocks back when freed
(``core.memory.fixed_mmap_threshold``).

Each case is a fresh Python process: it builds the app (``make_app``, as the CLI
and ``--demo`` do), or runs ``relay-search mcp`` / ``serve`` through the CLI up to the
point where it would start serving, or neither; then six threads allocate at once, as
the app's search, sync and watcher threads do, and glibc's own ``malloc_info`` counts the
arenas ("heaps"). Without the setting the same threads get arenas of their own, so the
test can tell the two apart. Then a 16 MB block is freed and a 4 MB one taken: glibc
mmaps it (``mallinfo2``'s ``hblkhd``) only when its threshold stayed fixed, else it comes
from the heap, kept there once freed. ``MALLOC_ARENA_MAX`` set by the user wins.
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

    def measure(*_args, **_kwargs):
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
        arenas = len(re.findall('<heap nr=', open(path).read()))
        os.unlink(path)
        go.set()
        for t in threads:
            t.join()

        class Mallinfo2(ctypes.Structure):
            _fields_ = [(name, ctypes.c_size_t) for name in (
                "arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

        libc.mallinfo2.restype = Mallinfo2
        freed = bytearray(16 << 20)  # (mmapped: past any threshold glibc starts with)
        del freed  # (glibc's own threshold rises to 16 MB here)
        before = libc.mallinfo2().hblkhd
        block = bytearray(4 << 20)
        mmapped = libc.mallinfo2().hblkhd - before >= len(block)
        print(arenas, int(mmapped))

    if sys.argv[1] == "app":
        from tui.app import make_app
        make_app(sys.argv[2])
    if sys.argv[1] in ("mcp", "serve"):  # the real command, up to where it would start serving
        import core.front.serve
        from core.front.cli import main
        core.front.serve.run_mcp_stdio = core.front.serve.run_http = measure
        sys.exit(main([sys.argv[1]]))
    measure()
    """
)


def _malloc(tmp_path, what: str, env: dict[str, str] | None = None) -> tuple[int, bool]:
    """(arenas six threads allocating at once use, whether a 4 MB block after a freed 16 MB one is mmapped)."""
    run_env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")} | (env or {})
    run_env |= {"HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache"), "XDG_DATA_HOME": str(tmp_path / "data"),
                "RELAY_SEARCH_MODEL": "off"}  # fmt: skip
    done = subprocess.run(
        [sys.executable, "-c", PROGRAM, what, str(tmp_path)],
        capture_output=True, text=True, timeout=120, env=run_env,
    )
    assert done.returncode == 0, done.stderr
    arenas, mmapped = done.stdout.split()[-2:]
    return int(arenas), mmapped == "1"


def _arenas(tmp_path, what: str, env: dict[str, str] | None = None) -> int:
    return _malloc(tmp_path, what, env)[0]


def test_the_app_keeps_malloc_to_two_arenas_and_hands_big_blocks_back(tmp_path):
    arenas, mmapped = _malloc(tmp_path, "app")
    assert arenas <= 2
    assert mmapped


def test_without_it_threads_allocating_at_once_get_arenas_of_their_own(tmp_path):
    assert _arenas(tmp_path, "plain") > 2


def test_malloc_arena_max_set_by_the_user_wins(tmp_path):
    assert _arenas(tmp_path, "app", {"MALLOC_ARENA_MAX": "4"}) > 2


@pytest.mark.parametrize("command", ["mcp", "serve"])
def test_the_servers_keep_malloc_to_two_arenas_and_hand_big_blocks_back(tmp_path, command):
    arenas, mmapped = _malloc(tmp_path, command)
    assert arenas <= 2
    assert mmapped


def test_without_it_a_block_below_a_freed_ones_size_comes_from_the_heap(tmp_path):
    assert _malloc(tmp_path, "plain")[1] is False


def test_malloc_mmap_threshold_set_by_the_user_wins(tmp_path):
    assert _malloc(tmp_path, "serve", {"MALLOC_MMAP_THRESHOLD_": str(8 << 20)})[1] is False
