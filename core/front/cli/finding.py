"""``relay-search search | list | show``: finding conversations and reading them in a terminal.

Text for people; with ``--json`` exactly the MCP tools' shapes.
"""

from __future__ import annotations

import argparse
import re
import sys

from core.arguments import search_query
from core.outputs.handoff import about
from core.query.syntax import parse, phrase_note, search_results
from core.timeutil import clean_ts
from core.views import session_list_dict, turn_to_dict
from core.words import plural

from .after import usage_by_session
from .common import open_archive, print_json
from .printing import print_marked


def add_search(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("search", parents=[common], help='search turns ("exact phrase", -exclude, prefix*)',
                       description="Every word after `search` that is not an option is the query, quoted or not; "
                                   "options go before or after it (`--` ends the options).")
    p.add_argument("query", nargs="+", help='the words to find: "exact phrase", -exclude, prefix* (quotes optional)')
    p.add_argument("--limit", type=int, default=10, help="at most this many hits (default 10, at most 500)")
    p.add_argument("--offset", type=int, default=0, help="skip this many hits: the next page (default 0)")
    p.add_argument("--sort", choices=("relevance", "recent"), default="relevance",
                   help="relevance (the default) or recent: newest first among the best")
    p.add_argument("--group", choices=("session",), help="session: one hit per session, its best (default: every turn)")
    _filters(p, slug=True, dated="turns")
    p.add_argument("--session", metavar="REF", help="only this session or chain (default: all)")
    p.add_argument("--mode", choices=("auto", "hybrid", "lexical"), default="auto",
                   help="auto (the default): prose queries by words and meaning, code-like ones by words (BM25); hybrid or lexical: force one")
    p.add_argument("--json", action="store_true", help="print the MCP tool's JSON shape instead of text (default: text)")


def gather_query(parser: argparse.ArgumentParser, argv: list[str]) -> list[str]:
    """``search flaky invoice --project x`` → ``search --project x -- 'flaky invoice'``.

    Every word after ``search`` that is not one of its options (or an option's value)
    is a query word, quoted or not, as grep-like tools take them: ``-staging`` (an
    exclusion) and words between options too. A word starting with ``--`` is an option
    (an unknown one is argparse's error); after ``--`` everything is the query. The
    words are joined with spaces into one query after a ``--``, so argparse sees one
    positional whatever it looks like. Other commands' argv comes back as it was.
    """
    i = command_at(parser, argv)
    if i >= len(argv) or argv[i] != "search":
        return argv
    search = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices["search"]
    known = {o: a for a in search._actions for o in a.option_strings}
    options: list[str] = []
    words: list[str] = []
    j = i + 1
    while j < len(argv):
        word = argv[j]
        if word == "--":
            words += argv[j + 1 :]
            break
        if (word.startswith("--") or word in known) and " " not in word:
            takes = _takes_value(known, word) and j + 1 < len(argv)
            options += argv[j : j + 2] if takes else [word]
            j += 2 if takes else 1
            continue
        words.append(word)
        j += 1
    return argv[: i + 1] + options + (["--", " ".join(words)] if words else [])


def command_at(parser: argparse.ArgumentParser, argv: list[str]) -> int:
    """Where the command word is in ``argv``: past the global options before it and their values
    (``len(argv)`` when there is none)."""
    top = {o: a for a in parser._actions for o in a.option_strings}
    i = 0
    while i < len(argv) and argv[i].startswith("-") and argv[i] != "--":
        i += 2 if _takes_value(top, argv[i]) else 1
    return i


def _takes_value(known: dict[str, argparse.Action], word: str) -> bool:
    """``word`` is an option of ``known`` (exactly, or as argparse's unique abbreviation) followed by its value."""
    if "=" in word:
        return False
    action = known.get(word)
    if action is None:
        found = {a for o, a in known.items() if o.startswith("--") and o.startswith(word)}
        action = found.pop() if len(found) == 1 else None
    return action is not None and action.nargs != 0


def _filters(p: argparse.ArgumentParser, *, slug: bool, dated: str) -> None:
    """The session filters ``search`` and ``list`` share (each off by default)."""
    p.add_argument("--project", help="only projects whose name or directory contains this, any case (default: all)")
    p.add_argument("--agent", help="only this agent's sessions: claude, codex, gemini or ash (default: all)")
    if slug:
        p.add_argument("--slug", help="only this slug's chain of sessions (default: all)")
    p.add_argument("--user", help="only this person's sessions, in a team store (default: everyone)")
    p.add_argument("--from", dest="date_from", metavar="DATE",
                   help=f"only {dated} on or after DATE: 7d, 2w, 12h, today, yesterday, last week, ISO (default: no limit)")
    p.add_argument("--to", dest="date_to", metavar="DATE", help=f"only {dated} on or before DATE (default: no limit)")


def add_list(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("list", parents=[common], help="list sessions (newest first; a chain oldest first)")
    p.add_argument("--slug", help="one chain, oldest first and numbered (default: every session, newest first)")
    _filters(p, slug=False, dated="sessions active")
    p.add_argument("--tag", action="append", dest="tags", metavar="TAG",
                   help="only sessions with this tag; repeat for any of several (default: all)")
    p.add_argument("--limit", type=int, default=50, help="at most this many sessions (default 50, at most 500)")
    p.add_argument("--offset", type=int, default=0, help="skip this many sessions: the next page (default 0)")
    p.add_argument("--json", action="store_true", help="print the MCP tool's JSON shape instead of text (default: text)")


def add_show(sub, common: argparse.ArgumentParser) -> None:
    p = sub.add_parser("show", parents=[common], help="print a conversation, sessions of a chain, or one turn")
    p.add_argument("ref", help="slug, slug#4-5, slug#4:12, session id (or prefix ≥ 8), id:12")
    p.add_argument("--session", metavar="RANGE", help="sessions of the chain, e.g. 4-5 (default: the reference's)")
    p.add_argument("--roles", help="comma list of the roles to print: user,assistant (default: both)")
    p.add_argument("--offset", type=int, default=0, help="skip this many turns (default 0)")
    p.add_argument("--limit", type=int, help="print at most this many turns (default: all of them)")
    p.add_argument("--json", action="store_true", help="print the MCP tool's JSON shape instead of text (default: text)")
    p.add_argument("--handoff", action="store_true", help="print only the reference block the app's c key copies (default: the conversation)")


def cmd_search(args) -> int:
    query = " ".join(args.query)  # (the words after `search`, quoted or not: one query)
    with open_archive(args) as archive:
        hits = archive.search(
            search_query(query), limit=args.limit, project=args.project, slug=args.slug, session_id=args.session,
            agent=args.agent, user=args.user, date_from=args.date_from, date_to=args.date_to,
            sort=args.sort, offset=args.offset, group=args.group, mode=args.mode,
        )
        gap = archive.meaning_gap(query, args.mode, args.sort)
        if gap and not args.json:
            print(f"relay-search: {gap['note']}", file=sys.stderr)  # (one line; the hits are on stdout)
        if args.json:
            print_json(search_results(query, hits, gap))
            return 0
        if not hits:
            print(f"No matches for {query!r}.", file=sys.stderr)
            return 0
        note = phrase_note(query, hits)
        if note:
            print(note)
        typed = _marked_terms(query)
        for h in hits:
            when = _when(h.timestamp)
            more = f"  (+{h.more_in_session} more in this session)" if h.more_in_session else ""
            meaning = "  (by meaning)" if h.by_meaning else ""
            print(f"{h.ref}  [{h.project} · {h.agent} · {when}]  score {h.score:.2f}{more}{meaning}")
            print_marked("    ", h.snippet, list(dict.fromkeys([*h.match_terms, *typed])))  # every query word the snippet shows
        return 0


def _marked_terms(query: str) -> list[str]:
    """What a snippet highlights besides a hit's matched terms: the query's positive index
    terms and its words as typed (a stem need not start its word: ``flaki`` is not
    found in "flaky" by itself, the word ``flaky`` is, and its token's terms meet it)."""
    words = [w.lower() for part in query.split() if not part.startswith("-") for w in re.findall(r"\w+", part)]
    return list(dict.fromkeys([*parse(query).terms, *words]))


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
