"""Widgets for reader blocks: session headers, compaction rules, turns and folds.

A :class:`Fold` is a one-line header that builds its body only when first opened,
so a turn with fifty tool calls costs fifty lines until someone looks inside. A
turn of a real long session holds hundreds of steps (tool calls, answers between
them): a :class:`TurnView` given a ``limit`` mounts only that many and a
:class:`MoreSteps` line for the rest, which the reader fills in as it scrolls into
view, so first paint costs a screenful whatever the turn's size.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from datetime import datetime
from typing import Any

from rich.console import Console
from rich.markdown import Markdown as RichMarkdown
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.content import Content
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from core.words import plural

from ..blocks import Block, Item
from ..formatting import bounded, clock, one_line, pretty_input, relative_path, relative_time
from ..marks import PROMPT, Marks, item_text
from .marked import MarkedStatic
from .session_header import SessionHeader

ITEM_PAGE = 8  # steps of a turn mounted at a time once it is being read
PROMPT_CHARS = 4_000
ANSWER_CHARS = 20_000
RESULT_CHARS = 4_000
NOTE_LINE = 200  # a system note this long or shorter is one line; a longer one folds


class FoldHead(MarkedStatic):
    """The clickable one-liner of a :class:`Fold`."""

    def on_click(self) -> None:
        parent = self.parent
        if isinstance(parent, Fold):
            parent.toggle()


class Fold(Vertical):
    """A folded section (tool call, thinking, subagent work) with a lazy body."""

    expanded: reactive[bool] = reactive(False)

    def __init__(self, title: Content, body: Callable[[], list[Widget]], **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.title = title
        self._body = body
        self._built = False
        self._early_body: list[Widget] | None = None

    def compose(self) -> ComposeResult:
        yield FoldHead(self._head(), classes="fold-head")
        if self._early_body is not None:  # opened before it was composed (a match inside it)
            yield Vertical(*self._early_body, classes="fold-body")
            self._early_body = None

    def _head(self) -> Content:
        arrow = "▾ " if self.expanded else "▸ "
        return Content.assemble((arrow, "$text-muted"), self.title)

    shown_from = 0  # where the shown part of a long output starts (a match deep inside it)

    @property
    def is_built(self) -> bool:
        return self._built

    def unbuild(self) -> None:
        self._built = False

    async def open(self, body: Callable[[], list[Widget]] | None = None) -> None:
        """Expand, with the body (``body``'s, if given) mounted when this returns (to scroll to a line in it)."""
        if not self._built:
            self._built = True
            widgets = (body or self._body)()
            if self.query(FoldHead):  # composed: the body goes below the head
                await self.mount(Vertical(*widgets, classes="fold-body"))
            else:  # just mounted with its turn, not composed yet: compose yields it
                self._early_body = widgets
        self.expanded = True

    def toggle(self) -> None:
        self.expanded = not self.expanded

    def watch_expanded(self, expanded: bool) -> None:
        heads = self.query(FoldHead)
        if not self.is_mounted or not heads:
            return  # (compose paints the head as it is by then)
        heads.first().update(self._head())
        if expanded and not self._built:
            self._built = True
            self.mount(Vertical(*self._body(), classes="fold-body"))
        for body in self.query(".fold-body"):
            body.display = expanded


def _plain(text: str, classes: str = "") -> Static:
    """Static that shows text as-is (transcripts are not Textual markup)."""
    return MarkedStatic(Content(text), classes=classes)


def tool_title(item: Item) -> Content:
    status: tuple[str, str]
    if item.result is None:
        status = ("· ", "$text-muted")
    elif item.is_error:
        status = ("✗ ", "bold $text-error")
    else:
        status = ("✓ ", "$text-success")
    size = ""
    if item.result and item.result.strip():
        lines = item.result.count("\n") + 1
        size = f"  ({lines} line{'s' if lines != 1 else ''})"
    return Content.assemble(
        status,
        (item.tool_name or "tool", "bold $text-secondary"),
        "  ",
        (one_line(item.summary, 90), ""),
        (size, "$text-muted"),
    )


def input_content(item: Item, cwd: str | None) -> Content | None:
    """A tool's input for people: ``$ command``, a -/+ diff for edits, else key: value."""
    data = item.tool_input or {}
    if not data:
        return None
    name = (item.tool_name or "").lower()
    command = data.get("command") or data.get("cmd")
    if command and name in ("bash", "shell", "exec_command", "run_shell_command", "local_shell"):
        if isinstance(command, list):
            command = " ".join(str(c) for c in command)
        command = str(command)
        if "\n" not in command and len(command) <= 88:
            return None  # the one-liner already shows all of it
        return Content.styled("$ " + bounded(command, RESULT_CHARS), "bold")
    old, new = data.get("old_string"), data.get("new_string")
    if isinstance(old, str) and isinstance(new, str):
        path = relative_path(data.get("file_path"), cwd) or ""
        lines = [Content.styled(str(path), "bold")]
        lines += [Content.styled("- " + line, "$text-error") for line in bounded(old, 1500).splitlines()]
        lines += [Content.styled("+ " + line, "$text-success") for line in bounded(new, 1500).splitlines()]
        return Content("\n").join(lines)
    rows = []
    for key, value in data.items():
        shown = relative_path(value, cwd) if key in ("file_path", "path", "notebook_path") else value
        text = shown if isinstance(shown, str) else pretty_input({key: shown}, 1000).strip("{}\n ").split(": ", 1)[-1]
        text = bounded(str(text), 1500)
        if "\n" in text:  # multi-line values (file contents, prompts) go below their key
            text = "\n" + "\n".join("  " + line for line in text.splitlines())
        rows.append(Content.assemble((f"{key}:", "$text-muted"), " " if not text.startswith("\n") else "", text))
    return Content("\n").join(rows)


def bounded_around(text: str, limit: int, at: int) -> tuple[str, int]:
    """:func:`bounded`, but showing character ``at`` (a match deep in a long output):
    the shown text and where it starts in ``text``."""
    if len(text) <= limit or at < limit * 3 // 4:
        return bounded(text, limit), 0
    start = text.rfind("\n", 0, max(0, at - limit // 4)) + 1
    end = start + limit
    rest = f"\n… ({len(text) - end:,} more chars)" if end < len(text) else ""
    return f"… ({start:,} chars above)\n{text[start:end]}{rest}", start


def tool_body(item: Item, cwd: str | None = None, at: int = 0) -> list[Widget]:
    """A tool call's input and output (the output's part around character ``at``)."""
    widgets: list[Widget] = []
    shown = input_content(item, cwd)
    if shown is not None:
        widgets.append(MarkedStatic(shown, classes="tool-input"))
    if item.result is not None:
        text = bounded_around(item.result, RESULT_CHARS, at)[0] or "(no output)"
        widgets.append(_plain(text, "tool-result" + (" -error" if item.is_error else "")))
    return widgets or [_plain("(no details)", "note")]


def subagent_body(item: Item) -> list[Widget]:
    widgets: list[Widget] = []
    for child in item.children:
        if child.kind == "tool":
            widgets.append(MarkedStatic(Content.assemble(("· ", "$text-muted"), tool_title(child)), classes="sub-line"))
        elif child.kind == "thinking":
            continue
        elif child.text.strip():
            who = "task" if child.role == "user" else "agent"
            widgets.append(
                MarkedStatic(Content.assemble((f"{who}: ", "bold $text-muted"), bounded(child.text, 1500)), classes="sub-line")
            )
    return widgets or [_plain("(no messages)", "note")]


CODE_THEME = "ansi_dark"
# Fences in the languages agents write most: the first of each that Rich renders
# builds its Pygments lexer (regex tables, ~45 ms for Python), which landed on the
# first conversation a person opened.
WARM_UP_MARKDOWN = "\n\n".join(
    ["# Warm-up", "Some **bold**, `code` and a [link](https://example.com).", "- one\n- two", "> quote"]
    + [f"```{lang}\n{code}\n```" for lang, code in (
        ("python", "def f(x):\n    return x"), ("bash", "ls -la | grep x"), ("json", '{"a": [1, 2]}'),
        ("diff", "-a\n+b"), ("typescript", "const x: number = 1;"), ("javascript", "let y = 2;"),
        ("rust", "fn main() {}"), ("go", "func main() {}"), ("yaml", "a: 1"), ("sql", "SELECT 1;"),
    )]
)


def warm_up_rendering() -> None:
    """Render a sample answer off-screen once (a thread worker at start-up)."""
    console = Console(file=io.StringIO(), width=100, color_system="truecolor", force_terminal=True)
    console.print(RichMarkdown(WARM_UP_MARKDOWN, hyperlinks=False, code_theme=CODE_THEME))


def answer_widget(text: str) -> Widget:
    """Assistant text as markdown, rendered synchronously.

    Rich's renderer rather than Textual's ``Markdown`` widget: that one parses in a
    thread pool and mounts a widget per block, so heights change after mount (the
    matched turn would drift out of view) and a page of turns costs hundreds of
    widgets. One Static per answer paints at once and at its final height.
    """
    return MarkedStatic(
        RichMarkdown(bounded(text, ANSWER_CHARS), hyperlinks=False, code_theme=CODE_THEME), classes="answer"
    )


def item_widget(item: Item, cwd: str | None = None) -> Widget | None:
    if item.kind == "text":
        if not item.text.strip():
            return None
        if item.role == "user":  # a second prompt inside one turn (e.g. an interruption)
            return MarkedStatic(Content(bounded(item.text, PROMPT_CHARS)), classes="prompt")
        return answer_widget(item.text)
    if item.kind == "tool":
        return Fold(tool_title(item), lambda: tool_body(item, cwd), classes="fold tool" + (" -error" if item.is_error else ""))
    if item.kind == "thinking":
        title = Content.assemble(("thinking", "italic $text-muted"), (f"  {len(item.text):,} chars", "$text-muted"))
        return Fold(title, lambda: [_plain(bounded(item.text, ANSWER_CHARS), "thinking")], classes="fold thinking")
    if item.kind == "subagent":
        tools = sum(1 for c in item.children if c.kind == "tool")
        title = Content.assemble(
            ("subagent", "bold $text-secondary"),
            "  ",
            (one_line(item.text or "", 70), ""),
            (f"  {len(item.children)} messages · {tools} tool calls", "$text-muted"),
        )
        return Fold(title, lambda: subagent_body(item), classes="fold subagent")
    if item.kind == "note" and item.text.strip():
        text = item.text.strip()
        if len(text) <= NOTE_LINE and "\n" not in text:
            return MarkedStatic(Content.styled(text, "$text-muted italic"), classes="note")
        # a longer note (a compaction summary, a hook's output): its first line, the rest folded,
        # so what the index holds is all there to read
        title = Content.assemble((one_line(text, 100), "$text-muted italic"), (f"  {len(text):,} chars", "$text-muted"))
        return Fold(title, lambda: [_plain(bounded(text, ANSWER_CHARS), "note")], classes="fold note")
    return None


class CompactionRule(Static):
    """``── context compacted ──`` where the agent summarized and dropped context."""

    def __init__(self, block: Block, now: datetime) -> None:
        when = clock(block.timestamp)
        super().__init__(
            Content.assemble(
                ("⟳ ", "$text-warning"), ("Context compacted", "bold $text-warning"), (f"  {when}" if when else "", "$text-muted")
            ),
            classes="compaction",
        )
        self.block = block


class MoreSteps(Static):
    """``▼ 107 more steps in this turn``: its turn mounts them on click or in view."""

    async def on_click(self, event: Any) -> None:
        event.stop()
        turn = self.parent
        if isinstance(turn, TurnView):
            await turn.show_more()


class TurnView(Vertical):
    """One turn: who asked what, when; then the answer, tools and folds in order.

    ``limit`` mounts only the first that many steps (None: all of them).
    """

    def __init__(self, block: Block, now: datetime, limit: int | None = None) -> None:
        super().__init__(classes="turn" if block.kind == "turn" else "turn preamble")
        self.block = block
        self._now = now
        self.shown = len(block.items) if limit is None else min(limit, len(block.items))

    @property
    def has_more(self) -> bool:
        return self.shown < len(self.block.items)

    def _more_text(self) -> Content:
        left = len(self.block.items) - self.shown
        return Content.styled(f"▼ {plural(left, 'more step')} in this turn (scroll on or click)", "$text-muted")

    async def show_more(self, count: int = ITEM_PAGE) -> None:
        """Mount the next ``count`` steps above the :class:`MoreSteps` line."""
        if not self.has_more:
            return
        start, end = self.shown, min(len(self.block.items), self.shown + count)
        self.shown = end
        widgets = self._item_widgets(start, end)
        more = self.query(MoreSteps)
        if widgets:
            await self.mount_all(widgets, before=more.first() if more else None)
        if more:
            if self.has_more:
                more.first().update(self._more_text())
            else:
                await more.first().remove()

    def compose(self) -> ComposeResult:
        block = self.block
        if block.kind == "preamble":
            yield Static(Content.styled("before the first prompt", "$text-muted italic"), classes="turn-head")
        else:
            session = block.session
            number = f"#{session.session_number}:" if session.session_number and block.session_count > 1 else ""
            yield Static(
                Content.assemble(
                    ("you", "bold $text-primary"),
                    (f"  turn {number}{block.turn}", "$text-muted"),
                    (" (continued)" if block.continued else "", "$text-muted italic"),
                    (f"  {clock(block.timestamp)} · {relative_time(block.timestamp, self._now)}", "$text-muted"),
                ),
                classes="turn-head",
            )
            if block.prompt.strip():
                prompt = MarkedStatic(Content(bounded(block.prompt, PROMPT_CHARS)), classes="prompt")
                prompt.item_index = PROMPT
                yield prompt
        yield from self._item_widgets(0, self.shown)
        if self.has_more:
            yield MoreSteps(self._more_text(), classes="more-steps")

    def _item_widgets(self, start: int, end: int) -> list[Widget]:
        widgets = []
        for position in range(start, end):
            widget = item_widget(self.block.items[position], self.block.session.cwd)
            if widget is not None:
                widget.item_index = position  # type: ignore[attr-defined]  # where n/N finds a step
                widgets.append(widget)
        return widgets

    async def reveal(self, position: int, marks: Marks, occurrence: int) -> tuple[Widget | None, int, bool]:
        """The widget of step ``position`` (the prompt for marks.PROMPT), mounted and unfolded,
        which of the occurrences painted in it is ``occurrence`` of the step's text, and
        whether it was so already (nothing mounted or unfolded: the layout stands).

        A match past the shown head of a long tool output opens the output around it
        (the occurrences above that part are then not painted, hence the count).
        """
        settled = True
        while position >= self.shown and self.has_more:
            await self.show_more(max(ITEM_PAGE, position + 1 - self.shown))
            settled = False
        widget = next((w for w in self.children if getattr(w, "item_index", None) == position), None)
        if not isinstance(widget, Fold):
            return widget, occurrence, settled
        item = self.block.items[position]
        body, start = None, 0
        if item.kind == "tool" and item.result:
            spans = marks.spans(item_text(item))
            at = max(0, spans[min(occurrence, len(spans) - 1)][0] - len(item.summary) - 1) if spans else 0
            start = bounded_around(item.result, RESULT_CHARS, at)[1]
            occurrence -= sum(1 for _ in marks.spans(item.result[:start])) if start else 0
            cwd = self.block.session.cwd
            body = lambda: tool_body(item, cwd, at)  # noqa: E731
        if start != widget.shown_from:  # another part of the output holds this match
            widget.shown_from = start
            await widget.query(".fold-body").remove()
            widget.unbuild()
        if not widget.expanded or not widget.is_built:
            await widget.open(body)
            settled = False
        return widget, occurrence, settled

    def set_folds(self, expanded: bool) -> None:
        for fold in self.query(Fold):
            fold.expanded = expanded

    @property
    def folds_expanded(self) -> bool:
        return any(f.expanded for f in self.query(Fold))


def block_widget(block: Block, now: datetime, limit: int | None = None) -> Widget:
    if block.kind == "session":
        return SessionHeader(block, now)
    if block.kind == "compaction":
        return CompactionRule(block, now)
    return TurnView(block, now, limit)
