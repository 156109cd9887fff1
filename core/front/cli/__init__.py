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
import os
import sqlite3
import sys
from collections.abc import Sequence

from core.archive.catalog import is_damage
from core.config import Config
from core.errors import RelayError
from core.outputs.handoff import about
from core.words import plural, visible

from . import after, finding, keeping, serving
from .common import config_from_args, end_progress_line, print_error
from .printing import VisibleOut

# Subcommands in the order --help lists them; each group module maps a name to
# (add its parser, run it).
ORDER = ("search", "list", "show", "index", "tag", "mcp", "serve", "resume", "export", "usage", "sync")
GROUPS = {**finding.COMMANDS, **keeping.COMMANDS, **serving.COMMANDS, **after.COMMANDS}
COMMANDS = {name: GROUPS[name][1] for name in ORDER}


class _Parser(argparse.ArgumentParser):
    """Wrong arguments: one line on stderr and exit 1, like every other bad input."""

    def error(self, message: str):
        self.exit(1, f"{self.prog}: {message} (see {self.prog} --help)\n")


def build_parser(argv: Sequence[str] | None = None) -> argparse.ArgumentParser:
    """The whole command line, or, given the ``argv`` to parse, only its command's options: argparse
    builds eleven subcommands' options in ~3% of a one-shot search. Without a command word (or
    with a word that names none, for argparse's error) every command is built."""
    # SUPPRESS: a global option given before the subcommand is not reset by the
    # subcommand's own copy of it.
    common = _Parser(add_help=False)
    common.add_argument("--pattern", metavar="GLOB", default=argparse.SUPPRESS,
                        help="only projects matching GLOB, in Claude's dir-name form (-home-me-work-*), for every agent (default *)")
    common.add_argument("--root", metavar="DIR", default=argparse.SUPPRESS, help="Claude projects dir (default ~/.claude/projects)")
    common.add_argument("--store", metavar="URL", default=argparse.SUPPRESS, help="postgresql://… team store (default: embedded; env RELAY_SEARCH_STORE)")
    common.add_argument("--demo", action="store_true", default=argparse.SUPPRESS, help="use the demo corpus (its own HOME) instead of your history (default: your history)")

    parser = _Parser(
        prog="relay-search",
        description="Find, read and hand over past AI coding-agent conversations.",
        parents=[common],
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    words = list(argv or ())
    at = finding.command_at(parser, words)
    only = words[at] if at < len(words) and words[at] in GROUPS else None
    for name in ORDER:
        if only is None or name == only:
            GROUPS[name][0](sub, common)
    return parser


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
            print(visible(f"{s.ref:<40} {s.project:<20} {plural(s.turn_count, 'turn'):>10}  {about(s)[:60]}"))
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    parser = build_parser(words)
    args = parser.parse_args(finding.gather_query(parser, join_dash_values(parser, words)))
    handler = COMMANDS.get(args.command, cmd_app)
    stdout = sys.stdout
    if args.command not in (None, "mcp", "serve"):  # (the app and the servers own their stdout)
        sys.stdout = VisibleOut(stdout)  # transcript text is shown, never sent to the terminal
    try:
        return _run(handler, args)
    finally:
        sys.stdout = stdout


def _run(handler, args) -> int:
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
        print_error(f"relay-search: {exc}")
        return 1
    except KeyboardInterrupt:
        end_progress_line()
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # last resort: one line, never a traceback
        from core.archive.store import cache_error_line

        said: str | None = None
        try:
            said = cache_error_line(config_from_args(args).cache_path, exc)  # (unreadable, not a dir: what to do)
        except Exception:
            pass
        print_error(said or f"relay-search: unexpected error: {type(exc).__name__}: {exc}")
        if os.environ.get("RELAY_SEARCH_DEBUG"):
            raise
        return 1


if __name__ == "__main__":
    sys.exit(main())
