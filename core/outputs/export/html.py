"""An export as one self-contained HTML page.

Inline CSS, no script, no external asset (fonts, images, styles): it reads the
same offline, from a mail attachment or a file share. Tool outputs, thinking and
subagent work fold with ``<details>``, which browsers open without JavaScript.
Every turn is an anchor (``#turn-12``; ``#s2-turn-12`` when several sessions
share the page) so a link can point into the conversation.
"""

from __future__ import annotations

from html import escape

from core.model import Message

from .document import Block, ExportDoc, SessionDoc, Subagent, tool_line, when

CSS = """
:root { color-scheme: light dark; --fg: #1f2328; --bg: #ffffff; --muted: #59636e; --line: #d1d9e0;
  --user: #ddf4ff; --assistant: #f6f8fa; --tool: #fff8c5; --accent: #0969da; }
@media (prefers-color-scheme: dark) { :root { --fg: #e6edf3; --bg: #0d1117; --muted: #9198a1; --line: #3d444d;
  --user: #0c2d48; --assistant: #151b23; --tool: #2e2a12; --accent: #4493f8; } }
* { box-sizing: border-box; }
body { margin: 0 auto; max-width: 960px; padding: 24px; font: 15px/1.5 system-ui, -apple-system, "Segoe UI", sans-serif;
  color: var(--fg); background: var(--bg); }
header { border-bottom: 1px solid var(--line); margin-bottom: 16px; }
h1 { font-size: 22px; margin: 0 0 8px; }
dl.meta { display: grid; grid-template-columns: max-content 1fr; gap: 2px 12px; margin: 0 0 16px; color: var(--muted); }
dl.meta dt { font-weight: 600; } dl.meta dd { margin: 0; }
code, pre { font: 13px/1.45 ui-monospace, "SF Mono", Menlo, Consolas, monospace; }
h2 { font-size: 18px; margin: 28px 0 8px; padding-top: 8px; border-top: 2px solid var(--line); }
article.turn { margin: 18px 0; }
article.turn > h3 { font-size: 15px; margin: 0 0 6px; color: var(--muted); }
article.turn > h3 a { color: inherit; text-decoration: none; }
article.turn > h3 a:hover { color: var(--accent); text-decoration: underline; }
.msg { border-radius: 6px; padding: 8px 12px; margin: 6px 0; white-space: pre-wrap; overflow-wrap: anywhere; }
.msg .role { display: block; font-size: 12px; font-weight: 700; text-transform: uppercase; color: var(--muted); }
.user { background: var(--user); } .assistant { background: var(--assistant); }
.system { color: var(--muted); font-style: italic; }
.tool { margin: 4px 0 0; padding: 3px 10px; background: var(--tool); border-radius: 4px; overflow-wrap: anywhere; }
details { margin: 2px 0 6px 12px; }
details > summary { cursor: pointer; color: var(--muted); font-size: 13px; }
details pre { margin: 4px 0; padding: 8px; border: 1px solid var(--line); border-radius: 4px; max-height: 480px;
  overflow: auto; white-space: pre-wrap; overflow-wrap: anywhere; }
details.subagent { margin: 8px 0 8px 4px; padding: 4px 0 4px 12px; border-left: 3px solid var(--accent); }
details.subagent > summary { color: var(--accent); font-weight: 600; }
.thinking .msg { background: none; color: var(--muted); font-style: italic; }
.compaction { margin: 14px 0; text-align: center; color: var(--muted); border-top: 1px dashed var(--line);
  border-bottom: 1px dashed var(--line); padding: 4px; }
footer { margin-top: 32px; color: var(--muted); font-size: 12px; }
"""


def render(doc: ExportDoc, *, thinking: bool = False) -> str:
    e = escape
    out: list[str] = [
        "<!DOCTYPE html>",
        '<html lang="en">',
        "<head>",
        '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{e(_short(doc.title, 120))}</title>",
        f"<style>{CSS}</style>",
        "</head>",
        "<body>",
        "<header>",
        f"<h1>{e(_short(doc.title, 300))}</h1>",
        '<dl class="meta">',
        f"<dt>Reference</dt><dd><code>{e(doc.ref)}</code></dd>",
        f"<dt>Agent</dt><dd>{e(doc.sessions[0].info.agent)} · {e(doc.sessions[0].info.project)}</dd>",
        f"<dt>Dates</dt><dd><time>{e(when(doc.first_timestamp))}</time> → "
        f"<time>{e(when(doc.last_timestamp))}</time></dd>",
    ]
    if len(doc.sessions) == 1:
        out += _session_meta(doc.sessions[0])
    if doc.turn is not None:
        out.append(f"<dt>Turn</dt><dd>{doc.turn} only</dd>")
    out += ["</dl>", "</header>", "<main>"]
    for session in doc.sessions:
        if len(doc.sessions) > 1:
            out.append(f'<section class="session" id="session-{session.number}">')
            out.append(f"<h2>Session {session.number}</h2>")
            out += ['<dl class="meta">', *_session_meta(session), "</dl>"]
        _blocks(session.preface, out, thinking)
        for turn in session.turns:
            anchor = doc.anchor(session, turn.number)
            out.append(f'<article class="turn" id="{anchor}">')
            out.append(f'<h3><a href="#{anchor}">Turn {turn.number}</a> · <time>{e(when(turn.timestamp))}</time></h3>')
            _blocks(turn.blocks, out, thinking)
            out.append("</article>")
        if len(doc.sessions) > 1:
            out.append("</section>")
    out += ["</main>", f"<footer>Exported by relay-search at {e(doc.exported_at)}.</footer>", "</body>", "</html>"]
    return "\n".join(out) + "\n"


def _session_meta(session: SessionDoc) -> list[str]:
    info = session.info
    rows = [
        f"<dt>Session</dt><dd><code>{escape(info.session_id)}</code></dd>",
        f"<dt>Directory</dt><dd><code>{escape(info.cwd or '?')}</code></dd>",
    ]
    if session.usage is not None and session.usage.responses:
        rows.append(f"<dt>Tokens</dt><dd>{escape(session.usage.short())}</dd>")
    return rows


def _blocks(blocks: list[Block], out: list[str], thinking: bool) -> None:
    for block in blocks:
        if isinstance(block, Subagent):
            out.append(f'<details class="subagent"><summary>Subagent — {escape(block.label)}</summary>')
            _blocks(block.blocks, out, thinking)
            out.append("</details>")
        else:
            _message(block, out, thinking)


def _message(m: Message, out: list[str], thinking: bool) -> None:
    e = escape
    if m.type == "tool_use":
        out.append(f'<div class="tool"><code>{e(tool_line(m))}</code></div>')
    elif m.type == "tool_result":
        lines = m.text.count("\n") + 1 if m.text else 0
        count = f'output ({lines} line{"s" if lines != 1 else ""})'
        out.append(f'<details class="output"><summary>{count}</summary><pre>{e(m.text)}</pre></details>')
    elif m.type == "thinking":
        if thinking:
            out.append(f'<details class="thinking"><summary>thinking</summary>'
                       f'<div class="msg">{e(m.text)}</div></details>')
    elif m.type == "compaction":
        out.append(f'<div class="compaction">{e(m.text)}</div>')
    elif m.role in ("user", "assistant"):
        out.append(f'<div class="msg {m.role}"><span class="role">{m.role}</span>{e(m.text)}</div>')
    else:
        out.append(f'<div class="msg system">{e(m.text)}</div>')


def _short(text: str, n: int) -> str:
    one = " ".join((text or "").split())
    return one if len(one) <= n else one[: n - 1] + "…"
