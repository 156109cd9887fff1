"""The header before each session in the reader: which session, when, where, what.

Its facts keep their places at any width: each line is one line (cut with an
ellipsis, never wrapped), parts are joined only between facts that exist (no
dangling "·"), the branch joins the times line when it fits (else the directory
line, whose path is then shortened from the left, where it says least). The line
count never depends on the width, so a resize re-describes it without moving
what is below. The session's first prompt is not repeated here: its first turn
shows it right below.
"""

from __future__ import annotations

from datetime import datetime

from rich.cells import cell_len
from textual.content import Content
from textual.events import Resize
from textual.widget import Widget
from textual.widgets import Static

from core.words import plural, visible

from ..blocks import Block
from ..formatting import clock, one_line
from .sessions_pane import about

INDENT = "  "


def shorten_left(text: str, width: int) -> str:
    """``…/work/lighthouse-marathon``: the end of ``text`` in ``width`` cells (0: all of it)."""
    if width <= 0 or cell_len(text) <= width:
        return text
    if width <= 1:
        return "…"
    return "…" + text[len(text) - (width - 1) :]


def joined(parts: list[str]) -> str:
    return " · ".join(p for p in parts if p)


def where(cwd: str | None, branch: str, room: int) -> str:
    """``…/harbor/src · ⎇ branch``: the directory cut from the left so the branch fits whole."""
    path = cwd or "directory not recorded"
    if not branch:
        return shorten_left(path, room)
    tail = f" · {branch}"
    if room and cell_len(branch) + 3 + 12 > room:  # not even a short path beside it: the branch first
        return shorten_left(path, room) if not branch else branch[:room]
    return shorten_left(path, room - cell_len(tail) if room else 0) + tail


class SessionHeader(Static):
    """The boundary before each session of a chain: which session, when, what."""

    DEFAULT_CSS = "SessionHeader { text-wrap: nowrap; text-overflow: ellipsis; }"

    def __init__(self, block: Block, now: datetime) -> None:
        first = " -first" if block.session_index == 0 else ""
        super().__init__(self.describe(block), classes="session-header" + first)
        self.block = block

    @staticmethod
    def describe(block: Block, width: int = 0) -> Content:
        """The header's lines for ``width`` cells of text (0: unknown, nothing shortened)."""
        session = block.session
        number = session.session_number
        of = f" of {session.chain_length}" if session.chain_length else ""
        name = f"{session.slug}#{number}{of}" if session.slug and number else (session.slug or session.session_id[:8])
        room = width - len(INDENT) if width else 0
        times = f"{clock(session.first_timestamp)} → {clock(session.last_timestamp)}"
        facts = joined([times, plural(session.turn_count, "turn"), session.session_id[:8]])
        branch = f"⎇ {visible(session.git_branch)}" if session.git_branch else ""  # (shown, and measured, as shown)
        branch_fits = not room or cell_len(joined([facts, branch])) <= room
        lines = [
            Content.assemble(
                ("◆ ", "$text-accent"),
                (name, "bold $text-accent"),
                "  ",
                (visible(session.project or "—"), "bold"),
                "  ",
                (session.agent, "$text-secondary"),
                ("  ● live" if session.is_live else "", "bold $text-success"),
            ),
            Content.styled(INDENT + (joined([facts, branch]) if branch_fits else facts), "$text-muted"),
            Content.styled(INDENT + session.session_id, "$text-muted"),
            Content.styled(INDENT + where(visible(session.cwd or "") or None, "" if branch_fits else branch, room), "$text-muted"),
        ]
        if block.usage:
            lines.append(Content.styled(INDENT + block.usage, "$text-muted"))
        text = about(session)
        prompt = one_line(session.first_prompt or "", 200)
        if text and not prompt.startswith(one_line(text, 200).rstrip("…")):  # the first turn shows the prompt
            lines.append(Content.styled(INDENT + one_line(text, 200), "italic"))
        return Content("\n").join(lines)

    def on_mount(self) -> None:
        # Described at the width it is about to get, from its parent's (not yet laid out
        # itself): else the first frame shows the unshortened lines, and the next moves the
        # branch to another line.
        parent = self.parent
        if isinstance(parent, Widget) and parent.size.width:
            width = parent.scrollable_content_region.width - self.styles.margin.width - self.styles.gutter.width
            self.update(self.describe(self.block, width))

    def on_resize(self, event: Resize) -> None:
        self.update(self.describe(self.block, self.size.width))  # (the event carries the outer size)

    def set_block(self, block: Block) -> None:
        """Live update: the session grew (turns, last activity, live marker)."""
        self.block = block
        self.update(self.describe(block, self.size.width))
