"""What every command group shares: the config from the arguments, the store it opens, JSON out.

A one-shot command opens the store, syncs what changed (trusting directory mtimes) and
answers; the progress bar shows only on a terminal.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import sys
import time
from collections.abc import Callable

from core.config import Config
from core.errors import OutOfSpace
from core.views import Progress
from core.words import plural, visible

INDEX_LOCK_WAIT = 120.0  # seconds `index` waits for another writer (a cold index of 1.8 GB takes ~25 s on 2 cores)
EXIT_BUSY = 75  # EX_TEMPFAIL: try again later


def config_from_args(args: argparse.Namespace, env=None) -> Config:
    if getattr(args, "demo", False):  # every subcommand reads the demo's own HOME
        from core.fixtures.demo import demo_environment

        env = demo_environment(refresh=args.command is None)
        if "RELAY_SEARCH_MODEL" in os.environ:  # the demo's HOME, but the model setting of the caller
            env["RELAY_SEARCH_MODEL"] = os.environ["RELAY_SEARCH_MODEL"]
    return Config.from_env(env, root=getattr(args, "root", None), pattern=getattr(args, "pattern", None))


_bar_drawn = False  # a progress line is on the terminal, not yet ended


def _draw_bar(label: str, fraction: float, tail: str, finished: bool) -> None:
    """One progress line on stderr, drawn over the last; a line of its own once ``finished``."""
    global _bar_drawn
    bar = "█" * int(fraction * 30)
    sys.stderr.write(f"\r{label} {bar:<30} {fraction:4.0%}  {tail}")
    _bar_drawn = not finished
    if finished:
        sys.stderr.write("\n")
    sys.stderr.flush()


def progress_printer() -> Callable[[Progress], None] | None:
    if not sys.stderr.isatty():
        return None

    def show(p: Progress) -> None:
        if not p.total_bytes:
            return
        _draw_bar("indexing", p.done_bytes / p.total_bytes, f"{p.done_files}/{p.total_files} files", p.done_files >= p.total_files)

    return show


def embedding_printer() -> Callable[[int, int], None]:
    """Progress of ``index``'s embedding phase: on a terminal a bar with passages n/N, the rate and
    the time left; otherwise one line when it starts (the caller prints the last)."""
    started = time.monotonic()
    tty = sys.stderr.isatty()

    def show(done: int, total: int) -> None:
        if not total:
            return
        if not tty:
            if done == 0:
                print(f"embedding {plural(total, 'passage')} for meaning-based recall, the newest first (the words are searchable now)…", file=sys.stderr)
            return
        elapsed = time.monotonic() - started
        rate = done / elapsed if elapsed > 0 and done else 0.0
        left = f"{(total - done) / rate:,.0f} s left" if rate else "starting"
        _draw_bar("embedding", done / total, f"{done:,}/{total:,} passages · {rate:,.1f}/s · {left}   ", done >= total)

    return show


def end_progress_line() -> None:
    """End a progress line an error or Ctrl-C cut short, so what follows starts a line."""
    global _bar_drawn
    if _bar_drawn:
        _bar_drawn = False
        sys.stderr.write("\n")
        sys.stderr.flush()


def print_error(line: str) -> None:
    """One line on stderr, below a progress bar it cut short (control characters shown, never sent)."""
    end_progress_line()
    print(visible(line), file=sys.stderr)


def open_archive(args: argparse.Namespace, *, sync: bool = True):
    """The store the command reads: the team store for ``--store``/RELAY_SEARCH_STORE, else embedded."""
    from core.team import open_store

    config = config_from_args(args)
    archive = open_store(config, getattr(args, "store", None), progress=progress_printer())
    if archive.rebuilt:
        print(archive.rebuilt, file=sys.stderr)
    if getattr(archive, "cache_note", None):  # (a full disk, a read-only cache: answers from it)
        print(archive.cache_note, file=sys.stderr)
    if sync:
        # One-shot commands trust directory mtimes (core/sources/discovery.py): a call with
        # nothing changed costs the same at 100 files as at 100,000.
        try:
            result = archive.sync(progress=progress_printer(), quick=True)
        except OutOfSpace as exc:  # not updated, but the last good cache still answers
            print_error(f"relay-search: {exc}")
            return archive
        except BaseException:
            archive.close()
            raise
        if result.skipped_lines:
            print(f"relay-search: skipped {plural(result.skipped_lines, 'unreadable line')}; see `relay-search index --stats`", file=sys.stderr)
    return archive


# JSON escapes C0 itself; DEL and C1 (0x9b: a terminal's CSI) too, so no control byte
# of a transcript reaches a terminal from --json either. Outside its strings JSON text is
# ASCII, so the escapes land only inside strings, where they mean the same characters.
_JSON_C1 = {c: f"\\u{c:04x}" for c in range(0x7F, 0xA0)}
_C1 = re.compile("[\x7f-\x9f]")


def print_json(data) -> None:
    text = json.dumps(data, ensure_ascii=False, indent=2)
    sys.stdout.write((text.translate(_JSON_C1) if _C1.search(text) else text) + "\n")


