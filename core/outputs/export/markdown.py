"""An export as Markdown: a header, then each turn with its messages in order.

Tool calls stay where they happened, one line each, with their output folded in
a ``<details>`` block (GitHub, GitLab and most viewers render it collapsed);
thinking only when asked for, also folded; a subagent's work is nested in a
quoted ``<details>`` block where the call that started it sits.
"""

from __future__ import annotations

import re

from core.model import COMPACTION_TEXT, Message

from .document import Block, ExportDoc, SessionDoc, Subagent, tool_line, when

_FENCE = re.compile(r"`{3,}")


def render(doc: ExportDoc, *, thinking: bool = False) -> str:
    out: list[str] = [f"# {_one_line(doc.title)}", ""]
    out += _header(doc)
    for session in doc.sessions:
        if len(doc.sessions) > 1:
            out += ["", f"## Session {session.number} · `{session.info.session_id}`", ""]
            out += _session_lines(session)
        _blocks(session.preface, out, thinking)
        for turn in session.turns:
            level = "###" if len(doc.sessions) > 1 else "##"
            out += ["", f'<a id="{doc.anchor(session, turn.number)}"></a>', "", f"{level} Turn {turn.number} · {when(turn.timestamp)}", ""]
            _blocks(turn.blocks, out, thinking)
    return "\n".join(out).rstrip() + "\n"


def _header(doc: ExportDoc) -> list[str]:
    first = doc.sessions[0].info
    lines = [
        f"- Reference: `{doc.ref}`",
        f"- Agent: {first.agent} · Project: {first.project}",
        f"- Dates: {when(doc.first_timestamp)} → {when(doc.last_timestamp)}",
    ]
    if len(doc.sessions) == 1:
        lines += _session_lines(doc.sessions[0])
    if doc.turn is not None:
        lines.append(f"- Turn {doc.turn} only")
    lines.append(f"- Exported by relay-search at {doc.exported_at}")
    return lines


def _session_lines(session: SessionDoc) -> list[str]:
    info = session.info
    lines = [f"- Session: `{info.session_id}`", f"- Directory: `{info.cwd or '?'}`"]
    if session.usage is not None and session.usage.responses:
        lines.append(f"- Tokens: {session.usage.short()}")
    return lines


def _blocks(blocks: list[Block], out: list[str], thinking: bool) -> None:
    for block in blocks:
        if isinstance(block, Subagent):
            inner: list[str] = []
            _blocks(block.blocks, inner, thinking)
            out += [f"> <details><summary>Subagent — {_html_text(block.label)}</summary>", ">"]
            out += [f"> {line}".rstrip() for line in "\n".join(inner).split("\n")]
            out += ["> </details>", ""]
        else:
            _message(block, out, thinking)


def _message(m: Message, out: list[str], thinking: bool) -> None:
    if m.type == "tool_use":
        out.append(f"- 🔧 `{tool_line(m).replace('`', 'ʼ')}`")
    elif m.type == "tool_result":
        body = m.text or ""
        lines = body.count("\n") + 1 if body else 0
        out += [f"  <details><summary>output ({lines} line{'s' if lines != 1 else ''})</summary>", "", _indent(_fenced(body), "  "), "", "  </details>", ""]
    elif m.type == "thinking":
        if thinking:
            out += ["<details><summary>thinking</summary>", "", m.text, "", "</details>", ""]
    elif m.type == "compaction":
        out += ["", "---", f"*{COMPACTION_TEXT}*", "", "---", ""]
    elif m.role == "user":
        out += ["**User**", "", m.text, ""]
    elif m.role == "assistant":
        out += ["**Assistant**", "", m.text, ""]
    else:
        out += [f"*{_one_line(m.text)}*", ""]


def _fenced(text: str) -> str:
    longest = max((len(f) for f in _FENCE.findall(text)), default=2)
    fence = "`" * max(3, longest + 1)
    return f"{fence}\n{text}\n{fence}"


def _indent(text: str, pad: str) -> str:
    return "\n".join(pad + line if line else line for line in text.split("\n"))


def _one_line(text: str) -> str:
    return " ".join((text or "").split())


def _html_text(text: str) -> str:
    return _one_line(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")
