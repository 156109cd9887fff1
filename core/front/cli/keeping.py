"""``relay-search index | tag | sync``: the cache and what it holds.

``index`` waits for another writer (at most ``--wait`` seconds, then exit 75) and checks
every byte of the cache; ``tag`` writes a session's tags; ``sync`` pushes parsed sessions
to a team store.
"""

from __future__ import annotations

import argparse
import sys

from core.errors import BadInput, OutOfSpace
from core.words import plural

from .common import (
    EXIT_BUSY,
    INDEX_LOCK_WAIT,
    config_from_args,
    embedding_printer,
    end_progress_line,
    open_archive,
    print_error,
    print_json,
    progress_printer,
)


def add_index(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("index", parents=[common], help="update the index; --stats to describe it")
    p.add_argument("--stats", action="store_true",
                   help="after updating, describe what is indexed and what was skipped and why (default: one summary line)")
    p.add_argument("--rebuild", action="store_true", help="throw the cache away and index everything again (default: only what changed)")
    p.add_argument("--json", action="store_true", help="print the --stats description as JSON (default: text)")
    p.add_argument("--wait", type=float, default=INDEX_LOCK_WAIT, metavar="SECONDS",
                   help=f"while another process writes the cache, wait this long for it (default {INDEX_LOCK_WAIT:g}; then exit {EXIT_BUSY})")


def add_tag(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("tag", parents=[common], help="set a session's tags (none: clear)")
    p.add_argument("ref", help="the session: slug, slug#4, session id (or prefix ≥ 8)")
    p.add_argument("tags", nargs="*", help="its tags, replacing the ones it has (none: clear them)")


def add_sync(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("sync", parents=[common], help="push parsed sessions to a team PostgreSQL store")
    p.add_argument("--to", dest="target", required=False, metavar="URL",
                   help="the team store, postgresql://… (default: --store, else RELAY_SEARCH_STORE)")
    p.add_argument("--user", default=None, help="push the sessions as this person (default: your login name, $USER)")
    p.add_argument("--watch", action="store_true", help="keep running and push new turns as they are written (default: push once and exit)")


def _writer_named(holder: str) -> str:
    """"another relay-search process (pid 12: relay-search serve)", or without the
    parentheses when the lock file does not say who (not yet written, or garbage)."""
    return f"another relay-search process ({holder})" if holder.startswith("pid ") else "another relay-search process"


def cmd_index(args) -> int:
    from core.api import Archive
    from core.archive.store import WriterLock, move_aside

    config = config_from_args(args)
    if args.rebuild and (moved := move_aside(config.cache_path)):
        print(moved, file=sys.stderr)
    holder = WriterLock(config.cache_path).held_by_other()
    if holder:
        print(f"relay-search: {_writer_named(holder)} holds the writer lock and is updating the cache; waiting for it (at most {args.wait:g} s)", file=sys.stderr)
    # (verify: `index` checks every byte of the cache, so damage a quick open misses is repaired here)
    with Archive.open(config, sync=False, lock_wait=max(0.0, args.wait), verify=True) as archive:
        if archive.cache_note:  # a full disk, a read-only cache: nothing can be indexed
            print(archive.cache_note, file=sys.stderr)
            if not (args.stats or args.json):
                return 1
        elif not archive.writer:
            holder = WriterLock(config.cache_path).held_by_other() or holder or "another process"
            print(f"relay-search: gave up waiting: {holder} still holds the writer lock; nothing was indexed", file=sys.stderr)
            return EXIT_BUSY
        if archive.rebuilt:
            print(archive.rebuilt, file=sys.stderr)
        try:
            if args.rebuild:
                result = archive.rebuild(progress=progress_printer())
            else:
                result = archive.sync(progress=progress_printer())
            archive.compact()
            if not (args.stats or args.json):  # the words are searchable now: say so before the second phase
                print(f"indexed {plural(result.files_read, 'file')}, {result.bytes_read / 1e6:.1f} MB; {plural(len(result.changed_sessions), 'session')} changed")
            if not args.stats and archive.semantic.state().on:  # words first; then meaning
                embed_passages(archive, quiet=args.json)
        except OutOfSpace as exc:  # --stats still describes what the cache holds
            if not (args.stats or args.json):
                raise
            print_error(f"relay-search: {exc}")
        if args.stats or args.json:
            stats = archive.stats()
            if args.json:
                print_json(stats.to_dict())
                return 0
            print(f"{plural(stats.sessions, 'session')}, {plural(stats.turns, 'turn')} in {plural(stats.files, 'file')} ({stats.transcript_bytes / 1e6:.1f} MB of transcripts)")
            print(f"index: {plural(stats.documents, 'document')} in {plural(stats.segments, 'segment')}, {stats.index_bytes / 1e6:.1f} MB at {config.cache_path}")
            print("agents: " + (", ".join(f"{k} {v}" for k, v in sorted(stats.agents.items())) or "none"))
            sem = stats.semantic
            if sem.get("on"):
                rest = "" if sem["embedded"] >= sem["passages"] else "; `relay-search index` embeds the rest"
                print(f"semantic recall: on ({sem['model']}; {sem['embedded']:,} of {sem['passages']:,} passages embedded, {sem['vector_bytes'] / 1e6:.1f} MB{rest})")
            else:
                print(f"semantic recall: off ({sem.get('reason')}); search is BM25 only")
            print(f"skipped lines: {stats.skipped_lines}")
            for path, n in stats.files_with_skips[:20]:
                print(f"    {n:>5}  {path}  ({stats.reasons_text(path)})")
            for path, err in stats.errors[:20]:
                print(f"    error  {path}: {err}")
        return 0


def embed_passages(archive, *, quiet: bool) -> None:
    """The second phase of ``index``: vectors for every passage without them, newest first, on every
    core; a bar on a terminal, else a line when it starts and one when it ends. Ctrl-C keeps what
    is made (the words are already published), and the next ``index`` goes on from there."""
    show = None if quiet else embedding_printer()
    try:
        made, missing = archive.semantic.run_foreground(show)
    except KeyboardInterrupt:
        end_progress_line()
        embedded, passages = archive.semantic.counts()
        print(f"relay-search: interrupted; {embedded:,} of {plural(passages, 'passage')} have vectors, the words of all are indexed; "
              "`relay-search index` goes on from there", file=sys.stderr)
        raise
    if missing and not quiet and not sys.stderr.isatty():
        print(f"embedded {plural(made, 'passage')} for meaning-based recall", file=sys.stderr)


def cmd_tag(args) -> int:
    with open_archive(args) as archive:
        archive.set_tags(args.ref, args.tags)
        print(f"{args.ref}: {', '.join(args.tags) or 'no tags'}")
        return 0


def cmd_sync(args) -> int:
    try:
        from core.team.sync import run_sync
    except ImportError:
        raise BadInput("team sync is not available in this build") from None
    return run_sync(args, config_from_args(args))


COMMANDS = {
    "index": (add_index, cmd_index),
    "tag": (add_tag, cmd_tag),
    "sync": (add_sync, cmd_sync),
}
