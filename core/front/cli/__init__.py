"""``relay-search``: the scripting CLI, and the entry point of every front end.

``relay-search`` alone opens the terminal app; ``search``/``list``/``show``/``index``
print for people or, with ``--json``, exactly the MCP tools' shapes; ``mcp`` and
``serve`` run the servers. One exit rule for every subcommand, text or ``--json``:
0 when the command ran — an empty result is an answer (text mode says so on
stderr) — and 1 with one line on stderr for anything the user can fix (bad input,
an unknown reference) — never a traceback. ``--demo`` goes with every subcommand.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import sys
from collections.abc import Sequence
from pathlib import Path

from core.archive.catalog import is_damage
from core.config import Config
from core.errors import BadInput, OutOfSpace, RelayError
from core.outputs.handoff import about
from core.timeutil import clean_ts
from core.views import Progress, session_list_dict, turn_to_dict
from core.words import plural

from . import after as cli_after

INDEX_LOCK_WAIT = 120.0  # seconds `index` waits for another writer (a cold index of 1.8 GB takes ~25 s on 2 cores)
EXIT_BUSY = 75  # EX_TEMPFAIL: try again later


class _Parser(argparse.ArgumentParser):
    """Wrong arguments: one line on stderr and exit 1, like every other bad input."""

    def error(self, message: str):  # type: ignore[override]
        self.exit(1, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser() -> argparse.ArgumentParser:
    # SUPPRESS: a global option given before the subcommand is not reset by the
    # subcommand's own copy of it.
    common = _Parser(add_help=False)
    common.add_argument("--pattern", metavar="GLOB", default=argparse.SUPPRESS, help="only projects matching GLOB, in Claude's dir-name form (-home-me-work-*), for every agent (default *)")
    common.add_argument("--root", metavar="DIR", default=argparse.SUPPRESS, help="Claude projects dir (default ~/.claude/projects)")
    common.add_argument("--store", metavar="URL", default=argparse.SUPPRESS, help="postgresql://… team store (default: embedded; env RELAY_SEARCH_STORE)")
    common.add_argument("--demo", action="store_true", default=argparse.SUPPRESS, help="use the demo corpus (its own HOME) instead of your history")

    parser = _Parser(
        prog="relay-search",
        description="Find, read and hand over past AI coding-agent conversations.",
        parents=[common],
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    p = sub.add_parser("search", parents=[common], help='search turns ("exact phrase", -exclude, prefix*)')
    p.add_argument("query")
    p.add_argument("--limit", type=int, default=10)
    p.add_argument("--offset", type=int, default=0, help="skip this many hits (the next page)")
    p.add_argument("--sort", choices=("relevance", "recent"), default="relevance", help="recent: newest first")
    p.add_argument("--group", choices=("session",), help="session: one hit per session, its best")
    p.add_argument("--project")
    p.add_argument("--agent")
    p.add_argument("--slug")
    p.add_argument("--session", metavar="REF", help="only this session or chain")
    p.add_argument("--user")
    p.add_argument("--from", dest="date_from", metavar="DATE")
    p.add_argument("--to", dest="date_to", metavar="DATE")
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("list", parents=[common], help="list sessions (newest first; a chain oldest first)")
    p.add_argument("--slug")
    p.add_argument("--project")
    p.add_argument("--agent")
    p.add_argument("--user")
    p.add_argument("--tag", action="append", dest="tags")
    p.add_argument("--from", dest="date_from", metavar="DATE")
    p.add_argument("--to", dest="date_to", metavar="DATE")
    p.add_argument("--limit", type=int, default=50)
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--json", action="store_true")

    p = sub.add_parser("show", parents=[common], help="print a conversation, sessions of a chain, or one turn")
    p.add_argument("ref", help="slug, slug#4-5, slug#4:12, session id (or prefix ≥ 8), id:12")
    p.add_argument("--session", metavar="RANGE", help="sessions of the chain, e.g. 4-5")
    p.add_argument("--roles", help="comma list: user,assistant")
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--limit", type=int)
    p.add_argument("--json", action="store_true")
    p.add_argument("--handoff", action="store_true", help="print only the reference block the app's c key copies")

    p = sub.add_parser("index", parents=[common], help="update the index; --stats to describe it")
    p.add_argument("--stats", action="store_true")
    p.add_argument("--rebuild", action="store_true")
    p.add_argument("--json", action="store_true")
    p.add_argument("--wait", type=float, default=INDEX_LOCK_WAIT, metavar="SECONDS", help=f"while another process writes the cache, wait this long for it (default {INDEX_LOCK_WAIT:g}; then exit {EXIT_BUSY})")

    p = sub.add_parser("tag", parents=[common], help="set a session's tags (none: clear)")
    p.add_argument("ref")
    p.add_argument("tags", nargs="*")

    p = sub.add_parser("mcp", parents=[common], help="serve the MCP tools over stdio (for Claude Code)")
    p.add_argument("scope", nargs="?", metavar="PATTERN", help="same as --pattern (the original design's form)")

    p = sub.add_parser("serve", parents=[common], help="HTTP API and MCP over streamable HTTP")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8765)
    p.add_argument("--token", default=None, help="bearer token (required off loopback)")

    cli_after.add_parsers(sub, common)  # resume, export, usage

    p = sub.add_parser("sync", parents=[common], help="push parsed sessions to a team PostgreSQL store")
    p.add_argument("--to", dest="target", required=False, metavar="URL")
    p.add_argument("--user", default=None)
    p.add_argument("--watch", action="store_true")
    return parser


def config_from_args(args: argparse.Namespace, env=None) -> Config:
    if getattr(args, "demo", False):  # every subcommand reads the demo's own HOME
        from core.fixtures.demo import demo_environment

        env = demo_environment(refresh=args.command is None)
    return Config.from_env(env, root=getattr(args, "root", None), pattern=getattr(args, "pattern", None))


def join_dash_values(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``--pattern -home-me-work*`` → ``--pattern=-home-me-work*`` (and ``mcp -x*`` → ``mcp --pattern=-x*``).

    Every Claude project dir name starts with ``-``, so a pattern usually does too;
    argparse takes any word starting with ``-`` for an option and rejects it as a
    value ("expected one argument"). A word after an option that takes a value is
    that option's value unless it is itself an option this parser knows; after
    ``mcp``, a word starting with ``-`` that is no option is the positional pattern.
    """
    takes_value: set[str] = set()
    known: set[str] = set()

    def collect(p: argparse.ArgumentParser) -> None:
        for action in p._actions:
            known.update(action.option_strings)
            if action.option_strings and action.nargs != 0:
                takes_value.update(action.option_strings)
            if isinstance(action, argparse._SubParsersAction):
                for child in action.choices.values():
                    collect(child)

    collect(parser)

    def is_option(word: str) -> bool:
        return word in known or word.split("=", 1)[0] in known

    out: list[str] = []
    command: str | None = None
    i = 0
    while i < len(argv):
        word = argv[i]
        if word == "--":
            out.extend(argv[i:])
            break
        if word in takes_value and i + 1 < len(argv):
            value = argv[i + 1]
            out.extend([f"{word}={value}"] if value.startswith("-") and not is_option(value) else [word, value])
            i += 2
            continue
        if command is None and not word.startswith("-"):
            command = word
        elif command == "mcp" and word.startswith("-") and len(word) > 1 and not is_option(word):
            word = f"--pattern={word}"
        out.append(word)
        i += 1
    return out


def _progress_printer() -> callable | None:
    if not sys.stderr.isatty():
        return None

    def show(p: Progress) -> None:
        if not p.total_bytes:
            return
        done = p.done_bytes / p.total_bytes
        bar = "█" * int(done * 30)
        sys.stderr.write(f"\rindexing {bar:<30} {done:4.0%}  {p.done_files}/{p.total_files} files")
        if p.done_files >= p.total_files:
            sys.stderr.write("\n")
        sys.stderr.flush()

    return show


def open_archive(args: argparse.Namespace, *, sync: bool = True):
    """The store the command reads: the team store for ``--store``/RELAY_SEARCH_STORE, else embedded."""
    from core.team import open_store

    config = config_from_args(args)
    archive = open_store(config, getattr(args, "store", None), progress=_progress_printer())
    if archive.rebuilt:
        print(archive.rebuilt, file=sys.stderr)
    if sync:
        # One-shot commands trust directory mtimes (core/sources/discovery.py): a call with
        # nothing changed costs the same at 100 files as at 100,000.
        try:
            result = archive.sync(progress=_progress_printer(), quick=True)
        except OutOfSpace as exc:  # not updated, but the last good cache still answers
            print(f"relay-search: {exc}", file=sys.stderr)
            return archive
        except BaseException:
            archive.close()
            raise
        if result.skipped_lines:
            print(f"relay-search: skipped {plural(result.skipped_lines, 'unreadable line')}; see `relay-search index --stats`", file=sys.stderr)
    return archive


def _print_json(data) -> None:
    sys.stdout.write(json.dumps(data, ensure_ascii=False, indent=2) + "\n")


def cmd_search(args) -> int:
    with open_archive(args) as archive:
        hits = archive.search(
            args.query, limit=args.limit, project=args.project, slug=args.slug, session_id=args.session,
            agent=args.agent, user=args.user, date_from=args.date_from, date_to=args.date_to,
            sort=args.sort, offset=args.offset, group=args.group,
        )
        if args.json:
            _print_json({"results": [h.to_dict() for h in hits]})
            return 0
        if not hits:
            print(f"No matches for {args.query!r}.", file=sys.stderr)
            return 0
        for h in hits:
            when = _when(h.timestamp)
            more = f"  (+{h.more_in_session} more in this session)" if h.more_in_session else ""
            print(f"{h.ref}  [{h.project} · {h.agent} · {when}]  score {h.score:.2f}{more}")
            print(f"    {h.snippet}")
        return 0


def cmd_list(args) -> int:
    with open_archive(args) as archive:
        sessions = archive.list_sessions(
            project=args.project, slug=args.slug, agent=args.agent, user=args.user, date_from=args.date_from,
            date_to=args.date_to, tags=args.tags, limit=args.limit, offset=args.offset,
        )
        if args.json:
            _print_json(session_list_dict(sessions, slug=args.slug, usage=cli_after.usage_by_session(archive, sessions)))
            return 0
        if not sessions:
            print("No sessions found.", file=sys.stderr)
            return 0
        for s in sessions:
            live = " ●live" if s.is_live else ""
            when = _when(s.last_timestamp)
            print(f"{s.ref:<40} {s.agent:<7} {s.project[:24]:<24} {plural(s.turn_count, 'turn'):>10}  {when}{live}")
            print(f"    {about(s)[:100]}")  # a summary, not the slug again
        return 0


def cmd_show(args) -> int:
    from core.refs import parse_reference

    with open_archive(args) as archive:
        parsed = parse_reference(args.ref)
        if args.handoff:
            print(archive.reference_block(args.ref))
            return 0
        if parsed.turn is not None:
            turn = archive.read_turn(args.ref)
            if args.json:
                _print_json(turn_to_dict(turn))
            else:
                print(_turn_text(turn))
            return 0
        roles = [r.strip() for r in args.roles.split(",")] if args.roles else None
        # A terminal reads the whole conversation unless --limit asks for a page: no
        # default page and no size budget (those bound what an agent is sent).
        conv = archive.get_conversation(
            args.ref, session=args.session, roles=roles, offset=args.offset, limit=args.limit, budget=None
        )
        if args.json:
            _print_json(conv.to_dict())
            return 0
        print(archive.reference_block(conv.ref))
        current = None
        for turn in conv.turns:
            if turn.session_id != current:
                current = turn.session_id
                info = next(s for s in conv.sessions if s.session_id == current)
                print(f"\n══ session {info.session_number or 1}: {info.session_id} ({plural(info.turn_count, 'turn')}) ══")
            print(_turn_text(turn))
        return 0


def _when(timestamp: str | None, *, full: bool = False) -> str:
    """A time as the CLI prints it; "—" when unknown (core.timeutil's one rule)."""
    if clean_ts(timestamp) is None:
        return "—"
    return timestamp if full else timestamp[:16].replace("T", " ")


def _turn_text(turn) -> str:
    lines = [f"\n── turn {turn.number} · {_when(turn.timestamp, full=True)}", f"USER: {turn.user_text}"]
    if turn.tools_used:
        lines.append("TOOLS: " + "; ".join(" ".join(str(v) for v in t.values() if v not in (None, "")) for t in turn.tools_used))
    lines.append(f"ASSISTANT: {turn.assistant_text}")
    return "\n".join(lines)


def cmd_index(args) -> int:
    from core.api import Archive
    from core.archive.store import WriterLock

    config = config_from_args(args)
    holder = WriterLock(config.cache_path).held_by_other()
    if holder:
        print(f"relay-search: another relay-search process ({holder}) holds the writer lock and is updating the cache; waiting for it (at most {args.wait:g} s)", file=sys.stderr)
    # (verify: `index` checks every byte of the cache, so damage a quick open misses is repaired here)
    with Archive.open(config, sync=False, lock_wait=max(0.0, args.wait), verify=True) as archive:
        if not archive.writer:
            holder = WriterLock(config.cache_path).held_by_other() or holder or "another process"
            print(f"relay-search: gave up waiting: {holder} still holds the writer lock; nothing was indexed", file=sys.stderr)
            return EXIT_BUSY
        if archive.rebuilt:
            print(archive.rebuilt, file=sys.stderr)
        if args.rebuild:
            result = archive.rebuild(progress=_progress_printer())
        else:
            result = archive.sync(progress=_progress_printer())
        archive.compact()
        if args.stats or args.json:
            stats = archive.stats()
            if args.json:
                _print_json(stats.to_dict())
                return 0
            print(f"{plural(stats.sessions, 'session')}, {plural(stats.turns, 'turn')} in {plural(stats.files, 'file')} ({stats.transcript_bytes / 1e6:.1f} MB of transcripts)")
            print(f"index: {plural(stats.documents, 'document')} in {plural(stats.segments, 'segment')}, {stats.index_bytes / 1e6:.1f} MB at {config.cache_path}")
            print("agents: " + (", ".join(f"{k} {v}" for k, v in sorted(stats.agents.items())) or "none"))
            print(f"skipped lines: {stats.skipped_lines}")
            for path, n in stats.files_with_skips[:20]:
                print(f"    {n:>5}  {path}  ({stats.reasons_text(path)})")
            for path, err in stats.errors[:20]:
                print(f"    error  {path}: {err}")
        else:
            print(f"indexed {plural(result.files_read, 'file')}, {result.bytes_read / 1e6:.1f} MB; {plural(len(result.changed_sessions), 'session')} changed")
        return 0


def cmd_tag(args) -> int:
    with open_archive(args) as archive:
        archive.set_tags(args.ref, args.tags)
        print(f"{args.ref}: {', '.join(args.tags) or 'no tags'}")
        return 0


def cmd_mcp(args) -> int:
    from core.front.serve import run_mcp_stdio

    if args.scope is not None:
        if getattr(args, "pattern", args.scope) != args.scope:
            raise BadInput(f"two patterns given ({args.scope!r} and --pattern {args.pattern!r}): give one")
        args.pattern = args.scope

    # Serve at once: Claude Code times out a slow MCP start; the server syncs in
    # the background and queries answer from the cache meanwhile.
    with open_archive(args, sync=False) as archive:
        run_mcp_stdio(archive)
    return 0


def cmd_serve(args) -> int:
    from core.front.http_api import check_bind
    from core.front.serve import run_http

    check_bind(args.host, args.token)
    with open_archive(args, sync=False) as archive:
        run_http(archive, args.host, args.port, args.token)
    return 0


def cmd_sync(args) -> int:
    try:
        from core.team.sync import run_sync
    except ImportError:
        raise BadInput("team sync is not available in this build") from None
    return run_sync(args, config_from_args(args))


def cmd_app(args) -> int:
    config = config_from_args(args)
    try:
        from tui.app import make_app
    except ImportError:
        return _print_overview(config)
    make_app(config=config).run()
    if getattr(args, "demo", False):
        from core.fixtures.demo import CHAIN_SLUG

        print(f"The demo stays in {config.home}: try `relay-search --demo show {CHAIN_SLUG}#4-5` or `relay-search --demo search bm25`.")
    return 0


def _print_overview(config: Config) -> int:
    from core.api import Archive

    with Archive.open(config) as archive:
        for s in archive.list_sessions(limit=20):
            print(f"{s.ref:<40} {s.project:<20} {plural(s.turn_count, 'turn'):>10}  {about(s)[:60]}")
    return 0


COMMANDS = {
    "search": cmd_search, "list": cmd_list, "show": cmd_show, "index": cmd_index, "tag": cmd_tag,
    "mcp": cmd_mcp, "serve": cmd_serve, "sync": cmd_sync, **cli_after.COMMANDS,
}


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(join_dash_values(parser, list(sys.argv[1:] if argv is None else argv)))
    handler = COMMANDS.get(args.command, cmd_app)
    try:
        try:
            return handler(args)
        except sqlite3.DatabaseError as exc:  # a catalog damaged where only this command looked
            if not is_damage(exc) or getattr(args, "store", None):
                raise
            from core.archive.store import discard_damaged_cache

            line = discard_damaged_cache(config_from_args(args).cache_path, exc)
            print(line, file=sys.stderr)
            if not line.startswith("relay-search: rebuilding"):
                return 1
            return handler(args)  # once, on a fresh cache
    except RelayError as exc:
        print(f"relay-search: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # last resort: one line, never a traceback
        print(f"relay-search: unexpected error: {type(exc).__name__}: {exc}", file=sys.stderr)
        if os.environ.get("RELAY_SEARCH_DEBUG"):
            raise
        return 1


if __name__ == "__main__":
    sys.exit(main())
