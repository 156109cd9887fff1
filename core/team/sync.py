"""``relay-search sync --to URL [--user NAME] [--watch]``: push this machine's sessions.

Opens the local embedded archive and brings it up to date (the same parse every
front end sees), then pushes what changed since the last sync to the team store
(:class:`~core.team.push.Pusher`). ``--watch`` keeps going: the archive's watcher
re-indexes a transcript as an agent writes it and each change is pushed moments
later; a lost connection is retried with backoff instead of ending the watch.
Every failure is one line on stderr without the password.
"""

from __future__ import annotations

import getpass
import re
import sys
import threading
import time
from collections.abc import Callable

from core.config import Config
from core.errors import BadInput, StoreError
from core.views import Progress
from core.words import plural

from . import store_url
from .db import check_url, connect, describe, redact
from .push import Pusher, PushResult
from .schema import ensure_schema_or_explain

WATCH_PASS_SECONDS = 60.0  # a full comparison now and then, in case an event was missed
SETTLE_SECONDS = 0.3  # let a burst of appends land before pushing
RETRY_SECONDS = (2, 5, 15, 30, 60)
_USER_RE = re.compile(r"^[^\s/]{1,64}$")


def check_user(name: str | None) -> str:
    if not name or not _USER_RE.match(name):
        raise BadInput(f"Bad user name {name!r}: 1-64 characters, no spaces or '/'")
    return name


def _bar(label: str) -> Callable[[Progress], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(p: Progress) -> None:
        done = p.done_bytes / p.total_bytes if p.total_bytes else (p.done_files / p.total_files if p.total_files else 1.0)
        sys.stderr.write(f"\r{label} {'█' * int(done * 30):<30} {done:4.0%}  {p.done_files}/{p.total_files} {'sessions' if label == 'syncing' else 'files'}")
        if p.done_files >= p.total_files:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def run_sync(args, config: Config) -> int:
    url = store_url(getattr(args, "target", None) or getattr(args, "store", None), config.env or None)
    if not url:
        raise BadInput("sync needs a team store: relay-search sync --to postgresql://user@host/dbname (or set RELAY_SEARCH_STORE)")
    url = check_url(url)
    user = check_user(getattr(args, "user", None) or config.user or getpass.getuser())
    from core.api import Archive

    with Archive.open(config, sync=False) as archive:
        if archive.rebuilt:
            print(archive.rebuilt, file=sys.stderr)
        archive.sync(progress=_bar("indexing"))
        conn = connect(url)
        try:
            ensure_schema_or_explain(conn, url)
            result = push(archive, conn, user, url, progress=_bar("syncing"))
            report(result, user, url)
            if getattr(args, "watch", False):
                conn = watch(archive, conn, user, url)
        finally:
            if conn is not None:
                conn.close()
    return 0


def push(archive, conn, user: str, url: str, **options) -> PushResult:
    """One pass; a driver error becomes one StoreError line saying how to resume."""
    import psycopg

    pusher = None
    try:
        pusher = Pusher(archive, conn, user, **options)
        return pusher.push()
    except psycopg.Error as exc:
        lost = isinstance(exc, psycopg.OperationalError) or conn.closed
        what = "lost the connection to" if lost else "could not write to"
        raise StoreError(
            f"{what} the team store {redact(url)}: {describe(exc, url)} — what was committed is kept; "
            "run `relay-search sync` again to push the rest"
        ) from None


def report(result: PushResult, user: str, url: str, *, quiet_when_empty: bool = False) -> None:
    if result.changed:
        print(
            f"pushed {plural(result.sessions, 'session')}: {plural(result.files, 'file')}, {plural(result.messages, 'message')}, "
            f"{plural(result.docs, 'passage')} as {user} to {redact(url)}"
        )
    elif not quiet_when_empty:
        print(f"nothing new to push for {user} ({redact(url)} is up to date)")
    if result.stale:
        print(f"relay-search: {plural(result.stale, 'session')} changed by another sync for {user} meanwhile; the next sync pushes them", file=sys.stderr)
    for path, why in result.failed[:5]:
        print(f"relay-search: could not read {path}: {why}", file=sys.stderr)
    if len(result.failed) > 5:
        print(f"relay-search: … and {len(result.failed) - 5} more unreadable file{'' if len(result.failed) - 5 == 1 else 's'}", file=sys.stderr)
    sys.stdout.flush()


def watch(archive, conn, user: str, url: str, *, stop: threading.Event | None = None, ready: threading.Event | None = None):
    """Push every change the local watcher indexes until interrupted (or ``stop`` is set).

    ``ready`` is set once the transcript roots are watched: a turn written after that is pushed.
    """
    changed = threading.Event()
    stop = stop or threading.Event()
    archive.start_watching(lambda _result: changed.set())
    print(f"watching for new turns; pushing to {redact(url)} as {user} (Ctrl-C to stop)", file=sys.stderr)
    if ready is not None:
        ready.set()
    failures = 0
    last_pass = time.monotonic()
    try:
        while not stop.is_set():
            if not changed.wait(0.5) and time.monotonic() - last_pass < WATCH_PASS_SECONDS:
                continue
            if stop.is_set():
                break
            time.sleep(SETTLE_SECONDS)
            changed.clear()
            last_pass = time.monotonic()
            try:
                if conn is None or conn.closed:
                    conn = connect(url)
                    ensure_schema_or_explain(conn, url)
                report(push(archive, conn, user, url), user, url, quiet_when_empty=True)
                failures = 0
            except StoreError as exc:
                delay = RETRY_SECONDS[min(failures, len(RETRY_SECONDS) - 1)]
                failures += 1
                print(f"relay-search: {exc} (retrying in {delay} s)", file=sys.stderr)
                if conn is not None:
                    conn.close()
                conn = None
                changed.set()  # retry even if nothing else changes
                stop.wait(delay)
    except KeyboardInterrupt:
        pass
    finally:
        archive.stop_watching()
    return conn
