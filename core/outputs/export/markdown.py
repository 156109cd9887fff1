"""An export as Markdown: a header, then each turn with its messages in order.

Tool calls stay where they happened, one line each, with their output folded in
a ``<details>`` block (GitHub, GitLab and most viewers render it collapsed);
thinking only when asked for, also folded; a subagent's work is nested in a
quoted ``<details>`` block where the call that started it sits.

Transcript text is data, not markup: outside code (fences and spans, which
viewers show as they are) raw HTML is escaped (``<`` → ``&lt;``: no tag, comment or
autolink survives), a link to anything but ``http(s)``, ``mailto`` or a relative
path (``javascript:``, ``data:``, an entity-encoded scheme) is broken (``]\\(``),
and every image is made a plain link (``!\\[``), so opening the file fetches
nothing and runs nothing. Values in code spans (ids, directories) get a fence
longer than any backtick run in them.
"""

from __future__ import annotations

import re

from core.model import COMPACTION_TEXT, Message

from .document import Block, ExportDoc, SessionDoc, Subagent, tool_line, when

_FENCE = re.compile(r"`{3,}")
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SPAN = re.compile(r"(?<!`)(`+)(?!`).*?(?<!`)\1(?!`)")
_LINK = re.compile(r"\]\(([^)]*)")  # an inline link's or image's destination
_REF_DEF = re.compile(r"^( {0,3})\[([^\]]*)\]:\s*(\S*)")  # a reference definition: [label]: dest
_SAFE_DEST = re.compile(r"^\s*<?\s*(https?://|mailto:|#|[^:&%\\]*(?:[/?#]|$))", re.IGNORECASE)


def render(doc: ExportDoc, *, thinking: bool = False) -> str:
    out: list[str] = [f"# {neutral(_one_line(doc.title))}", ""]
    out += _header(doc)
    for session in doc.sessions:
        if len(doc.sessions) > 1:
            out += ["", f"## Session {session.number} · {code(session.info.session_id)}", ""]
            out += _session_lines(session)
        _blocks(session.preface, out, thinking)
        for turn in session.turns:
            level = "###" if len(doc.sessions) > 1 else "##"
            heading = f"{level} Turn {turn.number} · {when(turn.timestamp)}"
            out += ["", f'<a id="{doc.anchor(session, turn.number)}"></a>', "", heading, ""]
            _blocks(turn.blocks, out, thinking)
    return "\n".join(out).rstrip() + "\n"


def _header(doc: ExportDoc) -> list[str]:
    first = doc.sessions[0].info
    lines = [
        f"- Reference: {code(doc.ref)}",
        f"- Agent: {neutral(first.agent)} · Project: {neutral(first.project)}",
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
    lines = [f"- Session: {code(info.session_id)}", f"- Directory: {code(info.cwd or '?')}"]
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
        summary = f"  <details><summary>output ({lines} line{'s' if lines != 1 else ''})</summary>"
        out += [summary, "", _indent(_fenced(body), "  "), "", "  </details>", ""]
    elif m.type == "thinking":
        if thinking:
            out += ["<details><summary>thinking</summary>", "", neutral(m.text), "", "</details>", ""]
    elif m.type == "compaction":
        out += ["", "---", f"*{COMPACTION_TEXT}*", "", "---", ""]
    elif m.role == "user":
        out += ["**User**", "", neutral(m.text), ""]
    elif m.role == "assistant":
        out += ["**Assistant**", "", neutral(m.text), ""]
    else:
        out += [f"*{neutral(_one_line(m.text))}*", ""]


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


def neutral(text: str) -> str:
    """Transcript text as Markdown that renders it and nothing else (see the module doc)."""
    out: list[str] = []
    fence: str | None = None
    for line in (text or "").split("\n"):
        opener = _FENCE_LINE.match(line)
        if fence is not None:
            out.append(line)
            if opener and opener.group(1)[0] == fence[0] and len(opener.group(1)) >= len(fence) \
                    and not line.strip()[len(opener.group(1)):].strip():
                fence = None
        elif opener:
            fence = opener.group(1)
            out.append(line)
        else:
            out.append(_inline(line))
    if fence is not None:
        out.append(fence)  # an unclosed fence would swallow the rest of the export
    return "\n".join(out)


def _inline(line: str) -> str:
    """One line outside fences: code spans kept, the text between them defused."""
    pieces, last = [], 0
    for span in _SPAN.finditer(line):
        pieces += [_defuse(line[last:span.start()]), span.group(0)]
        last = span.end()
    pieces.append(_defuse(line[last:]))
    text = "".join(pieces)
    ref = _REF_DEF.match(text)
    if ref and not _SAFE_DEST.match(ref.group(3)):
        text = f"{ref.group(1)}\\[{text[len(ref.group(1)) + 1:]}"
    return text


def _defuse(text: str) -> str:
    text = text.replace("<", "&lt;").replace("![", "!\\[")
    return _LINK.sub(lambda m: m.group(0) if _SAFE_DEST.match(m.group(1)) else "]\\(" + m.group(1), text)


def code(text: str) -> str:
    """``text`` as one code span, whatever backticks it holds."""
    one = _one_line(text)
    longest = max((len(run) for run in re.findall(r"`+", one)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if one.startswith("`") or one.endswith("`") or longest else ""
    return f"{fence}{pad}{one}{pad}{fence}"
