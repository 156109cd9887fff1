"""``relay-search resume | export | usage``: what people do after finding a conversation.

Each command is a thin layer over one core module:
:mod:`core.outputs.resume`, :mod:`core.outputs.export`, :mod:`core.outputs.usage`.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
from pathlib import Path

from core.errors import BadInput

from .common import config_from_args, open_archive, print_error, print_json


def add_resume(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("resume", parents=[common],
                       help="print (or --exec) the command that resumes a session in its agent")
    p.add_argument("ref", help="session id, slug (its latest session), slug#N, …")
    p.add_argument("--exec", action="store_true", help="run it now, in the session's directory (default: print it only)")
    p.add_argument("--json", action="store_true", help="print the plan (command, directory, why not) as JSON (default: the command)")


def add_export(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("export", parents=[common],
                       help="export a session, chain, range or turn to Markdown, HTML or JSON")
    p.add_argument("ref", help="slug, slug#4-5, slug#4:12, session id (or prefix ≥ 8), id:12")
    p.add_argument("--format", choices=("md", "html", "json"), default="md", help="md (the default), html or json")
    p.add_argument("-o", "--output", metavar="FILE|DIR", help="write here (default: a file named after the reference in the current directory)")
    p.add_argument("--thinking", action="store_true", help="include the model's thinking (default: left out)")
    p.add_argument("--force", action="store_true", help="replace a file that exists, never through a symlink (default: refuse)")


USAGE_EPILOG = """\
Costs are an estimate, not a bill: list API prices as of {as_of} (US dollars per million
tokens, standard tier, 5-minute cache writes) from Anthropic's, OpenAI's and Google's
pricing pages, in one dated table, core/outputs/pricing.py. To update them, edit that
table and its PRICES_AS_OF (a model the table does not know shows tokens, no cost).
--by block: Claude's 5-hour billing windows, the active one with its burn rate and
projected end-of-block total. Days and blocks are UTC."""


def add_usage(sub, common: argparse.ArgumentParser) -> None:
    from core.outputs.pricing import PRICES_AS_OF  # (a table of constants: cheap to import)

    p = sub.add_parser("usage", parents=[common], help="token usage and estimated cost",
                       epilog=USAGE_EPILOG.format(as_of=PRICES_AS_OF),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    # no argparse choices: core.outputs.usage checks --by (its one-line error lists them), and
    # building the parser for every command must not import the usage module
    p.add_argument("--by", default="day", metavar="GROUP",
                   help="one row per day (the default), week, month, project, model, session, agent or block")
    p.add_argument("--breakdown", action="store_true", help="each row's models too, as ccusage --breakdown (default: rows only)")
    p.add_argument("--compact", action="store_true", help="the narrow table (the default under 100 columns; wide above)")
    p.add_argument("--from", dest="date_from", metavar="DATE",
                   help="only usage on or after DATE: 7d, 2w, today, last week, ISO (default: no limit)")
    p.add_argument("--to", dest="date_to", metavar="DATE", help="only usage on or before DATE (default: no limit)")
    p.add_argument("--project", help="only projects whose name or directory contains this, any case (default: all)")
    p.add_argument("--agent", help="only this agent: claude, codex, gemini or ash (default: all)")
    p.add_argument("--json", action="store_true", help="print the report as JSON (default: a table)")


def cmd_resume(args) -> int:
    with open_archive(args) as archive:
        plan = archive.resume_plan(args.ref)
    if args.json:
        print_json(plan.to_dict())
        return 0
    if plan.command is None:
        print_error(f"relay-search: {plan.reason}")  # (a directory from a transcript: shown, never sent)
        return 1
    if plan.reason:
        print_error(f"relay-search: {plan.reason}")  # (a directory from a transcript: shown, never sent)
    print(plan.command)
    if not args.exec:
        return 0
    if plan.cwd and not plan.cwd_exists:
        print("relay-search: not running it (no directory to run it in)", file=sys.stderr)
        return 1
    if shutil.which(plan.argv[0]) is None:
        raise BadInput(f"{plan.argv[0]} is not on PATH")
    sys.stdout.flush()
    import subprocess  # only for --exec

    return subprocess.call(list(plan.argv), cwd=plan.cwd or None)


def cmd_export(args) -> int:
    from core.outputs import export

    config = config_from_args(args)
    roots = [config.claude_projects, config.codex_home, config.gemini_home, config.ash_home]
    with open_archive(args) as archive:
        done = export.export(
            archive, args.ref, fmt=args.format, output=args.output, thinking=args.thinking,
            cwd=Path(os.getcwd()), transcript_roots=roots, force=args.force,
        )
    print(done.describe())
    return 0


def cmd_usage(args) -> int:
    import time

    from core.outputs import archive_usage

    from .usage_text import format_blocks, format_report, is_compact

    filters = dict(date_from=args.date_from, date_to=args.date_to, project=args.project, agent=args.agent)
    with open_archive(args) as archive:
        if args.by == "block":
            blocks = archive_usage.block_report(archive, now=time.time(), **filters)
        else:
            report = archive_usage.usage_report(archive, by=args.by, breakdown=args.breakdown, **filters)
    if args.json:
        print_json((blocks if args.by == "block" else report).to_dict())
        return 0
    compact = is_compact(args.compact)
    print(format_blocks(blocks, compact=compact) if args.by == "block" else format_report(report, compact=compact))
    return 0


def usage_by_session(archive, sessions) -> dict[str, dict]:
    """``list --json``'s ``usage`` of each session: tokens and estimated cost."""
    totals = archive.sessions_usage([s.session_id for s in sessions])
    return {sid: t.to_dict() for sid, t in totals.items()}


COMMANDS = {
    "resume": (add_resume, cmd_resume),
    "export": (add_export, cmd_export),
    "usage": (add_usage, cmd_usage),
}
