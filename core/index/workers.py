"""The cold index's worker pool: how many workers, and workers that die with their parent.

How many: the CPUs this process may run on — its affinity mask (``taskset``,
container cpusets) and a cgroup CPU quota (``docker --cpus``), not the machine's
core count, which starts 8 workers on 2 allowed cores. No fixed cap: the cold
index kept getting faster up to 16 workers on a 16-core machine (issue 12 §13);
the number of chunks (one per ~48 MB) bounds it.

How started: on Linux, forked from the indexing process itself while it runs no
other thread (the CLI): a worker is ready at once. A process with threads (the app, the
servers) must not fork — a lock another thread held stays held forever in the
child — so its workers come from the multiprocessing forkserver, a fresh
interpreter that first imports the parsers (0.12-0.2 s, all of it idle, of a 2 s
cold index of the 446 MB bench).

Dying with the parent: workers from the forkserver are not children of the
indexing process, and ``PR_SET_PDEATHSIG`` would watch the wrong process. Each
worker instead polls whether the process that started the pool is still alive and
exits as soon as it is not (``kill -9`` of ``relay-search index`` left the
forkserver, the workers and the resource tracker running forever: the tracker and
the forkserver exit once the last worker holding their pipes has gone).
"""

from __future__ import annotations

import math
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

from core.errors import SyncStopped, WorkerLost

if TYPE_CHECKING:
    from concurrent.futures import Future, ProcessPoolExecutor

PARENT_POLL = 0.25  # seconds between a worker's checks that its parent still lives
WORKER_CHECK = 0.5  # seconds between the parent's checks that its workers still live

T = TypeVar("T")


def available_cpus() -> int:
    """CPUs this process may use: affinity, then a cgroup quota, else cpu_count."""
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not Linux
        cpus = os.cpu_count() or 1
    quota = _cgroup_quota()
    if quota is not None:
        cpus = min(cpus, max(1, math.ceil(quota)))
    return max(1, cpus)


def _cgroup_quota() -> float | None:
    """CPUs allowed by this process's cgroup (v2 ``cpu.max``, v1 cfs quota), if limited."""
    candidates = [Path("/sys/fs/cgroup/cpu.max")]
    try:
        for line in Path("/proc/self/cgroup").read_text().splitlines():
            if line.startswith("0::"):
                candidates.insert(0, Path("/sys/fs/cgroup") / line[3:].lstrip("/") / "cpu.max")
    except OSError:
        pass
    for path in candidates:
        try:
            quota_text, period_text = path.read_text().split()[:2]
        except (OSError, ValueError):
            continue
        return None if quota_text == "max" else int(quota_text) / int(period_text)
    try:
        quota = int(Path("/sys/fs/cgroup/cpu/cpu.cfs_quota_us").read_text())
        period = int(Path("/sys/fs/cgroup/cpu/cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return quota / period if quota > 0 and period > 0 else None


def worker_count(chunks: int) -> int:
    return max(1, min(available_cpus(), chunks))


def start_method() -> str:
    """``fork`` on Linux while this process runs no thread but this one, else ``forkserver``.

    (Threads of C libraries, such as OpenBLAS's, are not counted: they are fork-safe
    by their own ``pthread_atfork`` handlers. macOS's system libraries are not
    fork-safe, which is why Python stopped forking there by default.)
    """
    return "fork" if sys.platform == "linux" and threading.active_count() == 1 else "forkserver"


def make_pool(workers: int) -> ProcessPoolExecutor:
    # imported here: a one-shot search with nothing to parse never needs a pool
    import multiprocessing
    from concurrent.futures import ProcessPoolExecutor
    from multiprocessing.context import BaseContext

    ctx: BaseContext
    if start_method() == "fork":
        # (no SIGINT to ignore first, as for the forkserver: a worker is forked within
        # ``submit``, where the handler of _ctrl_c_deferred holds a Ctrl-C, and it
        # inherits that handler until its initializer ignores SIGINT)
        ctx = multiprocessing.get_context("fork")
    else:
        ctx = multiprocessing.get_context("forkserver")
        ctx.set_forkserver_preload(["core.archive.indexer", "core.archive.ingest", "core.index.workers"])  # (the tasks it runs)
        _start_forkserver_deaf_to_ctrl_c()

    class Pool(ProcessPoolExecutor):
        def submit(self, *args, **kwargs):
            # (the first submit starts every worker: a Ctrl-C amid that left a worker
            # starting after its queues were gone, and it printed why)
            from concurrent.futures.process import BrokenProcessPool

            workers = _workers(self)
            with _ctrl_c_deferred():
                try:
                    return super().submit(*args, **kwargs)
                except BrokenProcessPool:  # (a worker died while the last chunks were sent)
                    raise WorkerLost(_lost_line(self, workers)) from None

        def __exit__(self, exc_type, exc, tb):
            if exc_type is None:
                return super().__exit__(exc_type, exc, tb)
            # Ctrl-C (or a failure): stop now rather than finish every chunk; the next
            # sync reads what was not committed. (SIGTERM ends a worker without a word.)
            processes = list((self._processes or {}).values())
            manager, results = self._executor_manager_thread, self._result_queue  # (shutdown drops them)
            self.shutdown(wait=False, cancel_futures=True)  # (first: no worker is started after)
            for process in processes:
                process.terminate()
            for process in processes:  # (gone before the queues they would read are)
                process.join(5)
            _end_a_half_sent_result(results)
            if manager is not None:
                manager.join(5)
            return False

    return Pool(max_workers=workers, mp_context=ctx, initializer=_watch_parent, initargs=(os.getpid(),))


def next_result(pool: ProcessPoolExecutor, pending: set[Future[T]], stop: threading.Event | None = None) -> T:
    """The result of whichever of ``pending`` finishes first (taken out of the set),
    or :class:`WorkerLost` as soon as a worker of ``pool`` has died, or
    :class:`SyncStopped` soon after ``stop`` is set.

    (First finished, not first submitted: waiting on the oldest chunk while later
    ones finished left the pool with nothing queued, and a worker idled until the
    oldest was done. The pool notices a dead worker by itself, except one killed
    while it sent its result: the pool's manager thread then waits for the rest of
    the message, and the future never finishes — an index hung for good.)
    """
    from concurrent.futures import FIRST_COMPLETED
    from concurrent.futures import wait as wait_for_futures
    from concurrent.futures.process import BrokenProcessPool
    from multiprocessing.connection import wait

    workers = _workers(pool)
    while True:
        done, _ = wait_for_futures(pending, timeout=WORKER_CHECK, return_when=FIRST_COMPLETED)
        if done:
            future = done.pop()
            pending.discard(future)
            try:
                return future.result()
            except BrokenProcessPool:
                break
        if stop is not None and stop.is_set():
            raise SyncStopped
        workers = _workers(pool) or workers
        # (a dead worker's sentinel is readable; waiting on it reads nothing)
        if workers and wait([p.sentinel for p in workers], timeout=0):
            break
    raise WorkerLost(_lost_line(pool, workers))


def _workers(pool: ProcessPoolExecutor) -> list:
    return list((getattr(pool, "_processes", None) or {}).values())


def _lost_line(pool: ProcessPoolExecutor, workers: list) -> str:
    """Why the first worker that ended did (one not ended by the pool's own SIGTERM).

    The pool's manager thread is given a moment to finish first: it reaps the
    workers, and an exit status read by two threads at once is read as 255 by one.
    (It never finishes while it waits for a half-sent result; it reads no status then.)
    """
    import signal

    manager = getattr(pool, "_executor_manager_thread", None)
    if manager is not None:
        manager.join(2)
    codes = [p.exitcode for p in workers if p.exitcode is not None]
    first = next((c for c in codes if c != -signal.SIGTERM), codes[0] if codes else None)
    if first is None:
        how = "died"
    elif first < 0:
        try:
            how = f"was killed by {signal.Signals(-first).name}"
        except ValueError:
            how = f"was killed by signal {-first}"
        how += " (out of memory?)" if first == -signal.SIGKILL else ""
    else:
        how = f"exited with status {first}"
    return f"a worker of the index {how}: what was indexed is kept, and the next run reads the rest"


def _end_a_half_sent_result(result_queue) -> None:
    """Close this process's write end of the pool's result pipe, once no worker lives.

    A worker terminated while it sent its result leaves half a message in the pipe;
    the pool's manager thread reads on for the rest, and this process holds a write
    end too, so no end of file ever came: the thread waited forever, and so did the
    interpreter's exit, which joins it (a Ctrl-C amid the cold index hung the CLI,
    seen once in CI). With the last write end closed the read meets end of file, the thread
    takes the pool as broken and leaves.
    """
    writer = getattr(result_queue, "_writer", None)
    if writer is not None:
        writer.close()


@contextmanager
def _ctrl_c_deferred() -> Iterator[None]:
    """Hold a Ctrl-C that comes while the block runs, and raise it right after.

    (A handler that notes it, not a blocked signal: SIGINT goes to any thread that
    does not block it, and the main thread then raised it mid-launch, leaving a
    forked worker without its queues. Only the main thread may set a handler.)
    """
    import signal

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    caught: list[int] = []
    previous = signal.signal(signal.SIGINT, lambda signum, frame: caught.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
    if caught:
        raise KeyboardInterrupt


def _start_forkserver_deaf_to_ctrl_c() -> None:
    """Start the forkserver with SIGINT ignored, which it and the workers it forks
    inherit (exec keeps an ignored signal ignored; a blocked one it does not keep
    here): Ctrl-C in a terminal signals the whole process group, and each of them
    printed its own KeyboardInterrupt traceback (the forkserver's mid-import, every
    worker's from its queue). The indexing process alone handles Ctrl-C (exit 130);
    one pressed in the few milliseconds the forkserver takes to start is lost. Only
    the main thread may set a handler (a background sync starts its pool as it is)."""
    import signal
    from multiprocessing import forkserver

    if threading.current_thread() is not threading.main_thread():
        forkserver.ensure_running()
        return
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        forkserver.ensure_running()
    finally:
        signal.signal(signal.SIGINT, previous)


# A worker allocates millions of short-lived objects (records, entries, tokens) and
# keeps few: the collector's default of a young-generation pass every 700 allocations
# cost ~5% of a parse worker's CPU (446 MB cold index, inline: 3.7-3.9 s -> 3.4-3.7 s).
WORKER_GC_THRESHOLD = (50_000, 50, 100)


def _watch_parent(parent: int) -> None:
    """(In a worker) exit at once when ``parent`` has died; leave Ctrl-C to it;
    collect garbage less often, and never what the worker started with."""
    import gc
    import signal

    signal.signal(signal.SIGINT, signal.SIG_IGN)
    # (a forked worker shares its parent's pages until it writes them, and a
    # collection writes to every object it looks at: the parent's plan of 100,000
    # files, ~90 MB, would be copied into each worker)
    gc.freeze()
    gc.set_threshold(*WORKER_GC_THRESHOLD)

    def watch() -> None:
        while _alive(parent):
            time.sleep(PARENT_POLL)
        os._exit(1)

    threading.Thread(target=watch, name="relay-search-parent-watch", daemon=True).start()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # exists, someone else's (pid reused: cannot tell)
    try:  # Linux: a killed parent its own parent has not reaped yet is a zombie
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return True
    return state not in ("Z", "X")
