"""How one hit is drawn in the hit list: compact (2 lines, the default) or roomy.

Compact is for scanning, as in fzf or atuin: ``ref · project · agent`` and the age
on one line, one line of snippet around the match under it, so a screen holds a
dozen hits. Roomy (``v``) is the earlier layout: reference, project and agent on
lines of their own and two lines of snippet.
"""

from __future__ import annotations

from dataclasses import replace
from datetime import datetime
from functools import cached_property, lru_cache
from typing import Any

from textual.content import Content
from textual.css.styles import RulesMap
from textual.style import Style
from textual.visual import RenderOptions

from ..formatting import around_match, highlight, one_line, query_terms, relative_time, spread

SEPARATOR = " · "
MEANING_LABEL = "by meaning · "  # a hit hybrid recall found though none of the query's words did
MIN_PROJECT = 10  # cells a cut project name needs to still say something
HEADS_KEPT = 512  # compact rows' first lines remembered across keystrokes (a page is 25 rows)


NO_WRAP: RulesMap = {"text_wrap": "nowrap", "text_overflow": "ellipsis"}


class Rows(Content):
    """Lines already laid out to the hit list's width, drawn as they are: never wrapped.

    The option list asks every row's height and renders every row shown, at each
    keystroke; wrapping text that already fits was a third of that paint. A line that
    would not fit (a terminal narrower than the 24 cells a row is laid out for at least)
    ends in an ellipsis instead of spilling onto a line of its own."""

    @classmethod
    def of_lines(cls, lines: list[Content]) -> Rows:
        """The row of these lines (each laid out to the width already), its lines known."""
        row = Content("\n").join(lines)
        rows = cls(row.plain, list(row.spans), row.cell_length, strip_control_codes=False)
        rows.__dict__["lines"] = lines  # (what ``lines`` would find again by splitting)
        return rows

    @cached_property
    def lines(self) -> list[Content]:
        """The row's lines (what the hit list draws and remembers one at a time)."""
        return self.split("\n", allow_blank=True)

    def get_height(self, rules: Any, width: int) -> int:
        return self.plain.count("\n") + 1

    def render_strips(self, width: int, height: int | None, style: Style, options: RenderOptions) -> list[Any]:
        return super().render_strips(width, height, style, replace(options, rules=NO_WRAP))


def hit_label(hit: Any) -> str:
    """The hit's session as the core names it (``slug#n``; ``67a8478e#2`` in a chain
    without a slug), so the app and the CLI call a turn by one name."""
    if hit.ref:
        label = hit.ref.rpartition(":")[0] if hit.turn_number is not None and ":" in hit.ref else hit.ref
        # a lone session without a slug is its full id in the core; its 8-character prefix names it too
        return label[:8] if label == hit.session_id else label
    if hit.slug and hit.session_number:
        return f"{hit.slug}#{hit.session_number}"
    return hit.slug or hit.session_id[:8]


def _reference(label: str, turn: int | None) -> Content:
    """``slug#n:turn``, as both layouts start a row."""
    return Content.assemble((label, "bold $text-accent"), (f":{turn}" if turn is not None else "", "$text-accent"))


def _snippet(hit: Any, query: str, width: int) -> Content:
    terms = query_terms(query, hit.match_terms)
    return highlight(around_match(hit.snippet or "", terms, width), terms)


def compact_hit(hit: Any, query: str, now: datetime, width: int = 48) -> Content:
    """``ref · project · agent`` … ``age`` (``+N more`` in the session), then one snippet line.

    The first line never wraps: what does not fit goes, least useful first (the
    agent, the project, the word "more", then the count).
    """
    width = max(width, 24)
    head = _head(
        hit_label(hit), hit.turn_number, relative_time(hit.timestamp, now), hit.more_in_session,
        hit.project, hit.agent, hit.is_sidechain, width,
    )  # fmt: skip
    snippet = Content("  ") + _snippet(hit, query, width - 2)
    if getattr(hit, "by_meaning", False):  # hybrid recall found it, none of the words did
        label = Content.styled(MEANING_LABEL, "$text-muted italic")
        snippet = Content("  ") + label + _snippet(hit, query, width - 2 - label.cell_length)
    return Rows.of_lines([head, snippet])


@lru_cache(maxsize=HEADS_KEPT)
def _head(label: str, turn: int | None, relative: str, more: int | None, project: str | None, agent: str, sidechain: bool, width: int) -> Content:
    """A compact row's first line. It does not depend on the query, so the next keystroke's rows,
    about half of them the same sessions, find theirs drawn (half of a row's making)."""
    reference = _reference(label, turn)
    if reference.cell_length > width - 8:
        reference = Content.styled(one_line(reference.plain, width - 8), "bold $text-accent")
    room = width - reference.cell_length - 2
    ages = [relative]
    if more:  # grouped: the rest of the session is one enter (then n/N) away
        ages = [f"+{more} more · {relative}", f"+{more} · {relative}", relative]
    age = next((a for a in ages if len(a) <= room), "")
    room -= len(age)  # what is left for project and agent
    project = project or "—"
    agent = agent + (" sub" if sidechain else "")
    project_room = room - len(agent) - 2 * len(SEPARATOR)
    head = reference
    if project_room >= min(len(project), MIN_PROJECT):  # project and agent
        head += Content.assemble(
            (SEPARATOR, "$text-muted"),
            (one_line(project, project_room), "bold"),
            (SEPARATOR, "$text-muted"),
            (agent, "$text-secondary"),
        )
    elif room - len(SEPARATOR) >= min(len(project), MIN_PROJECT):  # the project alone (a stub like "in…" says nothing)
        head += Content.assemble((SEPARATOR, "$text-muted"), (one_line(project, room - len(SEPARATOR)), "bold"))
    return spread(head, Content.styled(age, "$text-muted"), width)


def roomy_hit(hit: Any, query: str, now: datetime, width: int = 48) -> Content:
    """Reference and age, project and agent, then two lines of snippet, matches marked."""
    width = max(width, 24)
    head = spread(_reference(hit_label(hit), hit.turn_number), Content.styled(relative_time(hit.timestamp, now), "$text-muted"), width)
    meaning = 12 if getattr(hit, "by_meaning", False) else 0
    room = width - len(hit.agent) - (12 if hit.is_sidechain else 2) - meaning  # one line, even at 80 columns
    project = one_line(hit.project or "—", max(room, 8))
    where = Content.assemble((project, "bold"), ("  ", ""), (hit.agent, "$text-secondary"))
    if hit.is_sidechain:
        where += Content.styled("  subagent", "$text-muted italic")
    if getattr(hit, "by_meaning", False):
        where += Content.styled("  by meaning", "$text-muted italic")
    lines = [head, where, _snippet(hit, query, 2 * width - 4)]
    if hit.more_in_session:
        more = f"+{hit.more_in_session} more in this session (n/N)"
        lines.append(Content.styled(one_line(more, width), "$text-muted italic"))
    return Content("\n").join(lines)


def hit_prompt(hit: Any, query: str, now: datetime, width: int = 48, *, compact: bool = True) -> Content:
    """The option for one hit in the chosen layout."""
    return (compact_hit if compact else roomy_hit)(hit, query, now, width)


def open_prompt(ref: str) -> Content:
    """The row a typed reference gets: ``▶ open velvet-puzzling-eclipse#4-5``."""
    return Content.assemble(("▶ open ", "bold $text-success"), (ref, "bold $text-accent"))
