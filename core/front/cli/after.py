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
from typing import TYPE_CHECKING

from core.errors import BadInput

from .common import config_from_args, open_archive, print_json

if TYPE_CHECKING:
    from core.outputs.usage import Totals, UsageReport


def add_resume(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("resume", parents=[common], help="print (or --exec) the command that resumes a session in its agent")
    p.add_argument("ref", help="session id, slug (its latest session), slug#N, …")
    p.add_argument("--exec", action="store_true", help="run it now, in the session's directory")
    p.add_argument("--json", action="store_true")


def add_export(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("export", parents=[common], help="export a session, chain, range or turn to Markdown, HTML or JSON")
    p.add_argument("ref")
    p.add_argument("--format", choices=("md", "html", "json"), default="md")
    p.add_argument("-o", "--output", metavar="FILE|DIR", help="default: a file in the current directory")
    p.add_argument("--thinking", action="store_true", help="include the model's thinking")


def add_usage(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("usage", parents=[common], help="token usage and estimated cost")
    # no argparse choices: core.outputs.usage checks --by (its one-line error lists them), and
    # building the parser for every command must not import the usage module
    p.add_argument("--by", default="day", metavar="GROUP", help="day, week, month, project, model, session or agent")
    p.add_argument("--from", dest="date_from", metavar="DATE")
    p.add_argument("--to", dest="date_to", metavar="DATE")
    p.add_argument("--project")
    p.add_argument("--agent")
    p.add_argument("--json", action="store_true")


def cmd_resume(args) -> int:
    with open_archive(args) as archive:
        plan = archive.resume_plan(args.ref)
    if args.json:
        print_json(plan.to_dict())
        return 0
    if plan.command is None:
        print(f"relay-search: {plan.reason}", file=sys.stderr)
        return 1
    if plan.reason:
        print(f"relay-search: {plan.reason}", file=sys.stderr)
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
            cwd=Path(os.getcwd()), transcript_roots=roots,
        )
    print(done.describe())
    return 0


def cmd_usage(args) -> int:
    with open_archive(args) as archive:
        report = archive.usage_report(by=args.by, date_from=args.date_from, date_to=args.date_to, project=args.project, agent=args.agent)
    if args.json:
        print_json(report.to_dict())
        return 0
    print(format_report(report))
    return 0


def usage_by_session(archive, sessions) -> dict[str, dict]:
    """``list --json``'s ``usage`` of each session: tokens and estimated cost."""
    totals = archive.sessions_usage([s.session_id for s in sessions])
    return {sid: t.to_dict() for sid, t in totals.items()}


def format_report(report: UsageReport) -> str:
    """A plain table: one row per group, then the total and what the cost means."""
    from core.outputs.usage import ESTIMATE_NOTE

    head = (report.by, "input", "output", "cache write", "cache read", "total", "est. cost")
    rows = [_row(label, t) for label, t in report.rows]
    total = _row("TOTAL", report.total)
    width0 = max([len(head[0]), len(total[0])] + [len(r[0]) for r in rows])
    widths = [width0] + [max(len(head[i]), *(len(r[i]) for r in rows + [total])) for i in range(1, len(head))]

    def line(cells) -> str:
        return "  ".join([cells[0].ljust(widths[0])] + [c.rjust(w) for c, w in zip(cells[1:], widths[1:])])

    out = [line(head), line(["─" * w for w in widths])]
    out += [line(r) for r in rows]
    out += [line(["─" * w for w in widths]), line(total), "", f"Cost: {ESTIMATE_NOTE}."]
    if report.total.unpriced_models:
        out.append("No price known for: " + ", ".join(sorted(report.total.unpriced_models)) + " (tokens counted, no cost).")
    if not report.rows:
        out.insert(0, "No token usage recorded in the selected sessions.")
    return "\n".join(out)


def _row(label: str, t: Totals) -> list[str]:
    from core.outputs.usage import human

    cost = "—" if t.cost_usd is None else f"${t.cost_usd:,.2f}"
    if t.cost_usd is not None and t.unpriced_models:
        cost += "+"
    return [label, human(t.input), human(t.output), human(t.cache_creation), human(t.cache_read), human(t.total), cost]


COMMANDS = {
    "resume": (add_resume, cmd_resume),
    "export": (add_export, cmd_export),
    "usage": (add_usage, cmd_usage),
}
