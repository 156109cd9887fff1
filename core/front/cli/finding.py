"""``relay-search search | list | show``: finding conversations and reading them in a terminal.

Text for people; with ``--json`` exactly the MCP tools' shapes.
"""

from __future__ import annotations

import argparse
import sys

from core.arguments import search_query
from core.outputs.handoff import about
from core.query.syntax import phrase_note, search_results
from core.timeutil import clean_ts
from core.views import session_list_dict, turn_to_dict
from core.words import plural

from .after import usage_by_session
from .common import open_archive, print_json


def add_search(sub, common: argparse.ArgumentParser) -> None:
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
    p.add_argument("--mode", choices=("auto", "hybrid", "lexical"), default="auto",
                   help="auto: prose queries by words and meaning, code-like ones by words (BM25); hybrid or lexical: force one")
    p.add_argument("--json", action="store_true")


def add_list(sub, common: argparse.ArgumentParser) -> None:
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


def add_show(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("show", parents=[common], help="print a conversation, sessions of a chain, or one turn")
    p.add_argument("ref", help="slug, slug#4-5, slug#4:12, session id (or prefix ≥ 8), id:12")
    p.add_argument("--session", metavar="RANGE", help="sessions of the chain, e.g. 4-5")
    p.add_argument("--roles", help="comma list: user,assistant")
    p.add_argument("--offset", type=int, default=0)
    p.add_argument("--limit", type=int)
    p.add_argument("--json", action="store_true")
    p.add_argument("--handoff", action="store_true", help="print only the reference block the app's c key copies")


def cmd_search(args) -> int:
    with open_archive(args) as archive:
        hits = archive.search(
            search_query(args.query), limit=args.limit, project=args.project, slug=args.slug, session_id=args.session,
            agent=args.agent, user=args.user, date_from=args.date_from, date_to=args.date_to,
            sort=args.sort, offset=args.offset, group=args.group, mode=args.mode,
        )
        if args.json:
            print_json(search_results(args.query, hits))
            return 0
        if not hits:
            print(f"No matches for {args.query!r}.", file=sys.stderr)
            return 0
        note = phrase_note(args.query, hits)
        if note:
            print(note)
        for h in hits:
            when = _when(h.timestamp)
            more = f"  (+{h.more_in_session} more in this session)" if h.more_in_session else ""
            meaning = "  (by meaning)" if h.by_meaning else ""
            print(f"{h.ref}  [{h.project} · {h.agent} · {when}]  score {h.score:.2f}{more}{meaning}")
            print(f"    {h.snippet}")
        return 0


def cmd_list(args) -> int:
    with open_archive(args) as archive:
        sessions = archive.list_sessions(
            project=args.project, slug=args.slug, agent=args.agent, user=args.user, date_from=args.date_from,
            date_to=args.date_to, tags=args.tags, limit=args.limit, offset=args.offset,
        )
        if args.json:
            print_json(session_list_dict(sessions, slug=args.slug, usage=usage_by_session(archive, sessions)))
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
                print_json(turn_to_dict(turn))
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
            print_json(conv.to_dict())
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
    if timestamp is None or clean_ts(timestamp) is None:
        return "—"
    return timestamp if full else timestamp[:16].replace("T", " ")


def _turn_text(turn) -> str:
    lines = [f"\n── turn {turn.number} · {_when(turn.timestamp, full=True)}", f"USER: {turn.user_text}"]
    if turn.tools_used:
        lines.append("TOOLS: " + "; ".join(" ".join(str(v) for v in t.values() if v not in (None, "")) for t in turn.tools_used))
    lines.append(f"ASSISTANT: {turn.assistant_text}")
    lines.extend(f"NOTE: {note}" for note in turn.notes)  # what the agent showed besides (hooks, summaries, …)
    return "\n".join(lines)


COMMANDS = {
    "search": (add_search, cmd_search),
    "list": (add_list, cmd_list),
    "show": (add_show, cmd_show),
}
