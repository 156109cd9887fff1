"""The export renderers in-process: exact Markdown, HTML and JSON for documents built
from messages, and the Markdown defusing of transcript text at the trust boundary.

tests/test_export.py and tests/test_export_safety.py check the same through the CLI;
these run in the test process, so a mutation tool sees them (bench/MUTATION.md).
"""

from __future__ import annotations

import json

import pytest

from core.model import Message, SessionInfo
from core.outputs.export import document, html, jsonfmt, markdown
from core.outputs.usage import Totals

SID = "abcdef01-1111-4222-8333-444444444444"
SID2 = "abcdef02-1111-4222-8333-444444444444"


def m(seq: int, role: str, type_: str, text: str, turn: int | None, ts: str | None = None, *, side: bool = False,
      file_index: int = 0, tool: str | None = None, inp: dict | None = None, call: str | None = None,
      uuid: str | None = None, parent: str | None = None, sid: str = SID) -> Message:  # fmt: skip
    return Message(session_id=sid, agent="claude", sequence=seq, role=role, type=type_, text=text, timestamp=ts,
                   uuid=uuid, parent_uuid=parent, is_sidechain=side, file_index=file_index, entry_index=seq,
                   turn=turn, tool_name=tool, tool_input=inp, call_id=call)  # fmt: skip


def info(sid: str = SID, number: int | None = None, **kw) -> SessionInfo:
    base = dict(session_id=sid, agent="claude", project="proj <p>", cwd="/w/`d`", git_branch="main", slug=None,
                summary="sum", title="T <script>x</script>", first_timestamp="2026-11-01T09:00:00Z",
                last_timestamp="2026-11-01T10:30:00+02:00", turn_count=2, message_count=9, files=(),
                session_number=number)  # fmt: skip
    base.update(kw)
    return SessionInfo(**base)


def messages(sid: str = SID) -> list[Message]:
    """A preface note; turn 1 with thinking, two calls answered out of order and a subagent; turn 2 compacted."""
    return [
        m(0, "system", "text", "note <b>\nmore", None, "2026-11-01T08:59:00Z", sid=sid),
        m(1, "user", "text", "hi <b>", 1, "2026-11-01T09:00:00Z", sid=sid),
        m(2, "assistant", "thinking", "hmm <i>", 1, "2026-11-01T09:00:01Z", sid=sid),
        m(3, "assistant", "text", "ok [x](javascript:y)", 1, sid=sid),
        m(4, "assistant", "tool_use", "Bash: ls `a`", 1, tool="Bash", inp={"command": "ls `a`"}, call="c1", sid=sid),
        m(5, "assistant", "tool_use", "Task: look", 1, tool="Task", inp={"subagent_type": "general", "description": "look"},
          call="c2", sid=sid),
        m(6, "user", "tool_result", "done", 1, call="c2", sid=sid),
        m(7, "user", "tool_result", "out1\n<line2>", 1, call="c1", sid=sid),
        m(8, "user", "text", "sub <prompt>", None, "2026-11-01T09:00:05Z", side=True, file_index=1, sid=sid),
        m(9, "assistant", "text", "sub answer", None, "2026-11-01T09:00:06Z", side=True, file_index=1, sid=sid),
        m(10, "system", "compaction", "compacted <c>", 2, "2026-11-01T09:10:00Z", sid=sid),
        m(11, "user", "text", "second", 2, "2026-11-01T09:10:01Z", sid=sid),
    ]  # fmt: skip


def one_doc() -> document.ExportDoc:
    s = document.session_doc(info(), messages())
    s.usage = Totals(input=1000, output=2000, cache_creation=300, cache_read=4000, responses=3, cost_usd=0.5)
    return document.ExportDoc(ref="ref <r>", title="T <script>x</script>", sessions=[s], turn=None,
                              exported_at="2026-11-02T00:00:00+00:00")


def two_doc() -> document.ExportDoc:
    """Two sessions of a chain, one turn asked for; the second with no directory and no usage."""
    a = document.session_doc(info(number=1, slug="brave-fox"), [x for x in messages() if x.turn == 2])
    b = document.session_doc(
        info(SID2, number=2, slug="brave-fox", cwd=None, first_timestamp="2026-11-03T09:00:00", last_timestamp=None),
        [m(0, "user", "text", "again", 1, "2026-11-03T09:00:00", sid=SID2), m(1, "user", "tool_result", "", 1, sid=SID2),
         m(2, "tool", "text", "odd", 1, sid=SID2)],
    )  # fmt: skip
    b.usage = Totals()
    return document.ExportDoc(ref="brave-fox", title="", sessions=[a, b], turn=2, exported_at="X")


def html_head(title: str) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f"<title>{title}</title>\n<style>{html.CSS}</style>\n"
    )


MD_ONE = """\
# T &lt;script>x&lt;/script>

- Reference: `ref <r>`
- Agent: claude · Project: proj &lt;p>
- Dates: 2026-11-01 09:00 UTC → 2026-11-01 08:30 UTC
- Session: `abcdef01-1111-4222-8333-444444444444`
- Directory: `` /w/`d` ``
- Tokens: 7.3k tokens (in 1.0k · out 2.0k · cache 4.3k) · ≈$0.50 est.
- Exported by relay-search at 2026-11-02T00:00:00+00:00
*note &lt;b> more*


<a id="turn-1"></a>

## Turn 1 · 2026-11-01 09:00 UTC

**User**

hi &lt;b>

<details><summary>thinking</summary>

hmm &lt;i>

</details>

**Assistant**

ok [x]\\(javascript:y)

- 🔧 `Bash: ls ʼaʼ`
  <details><summary>output (2 lines)</summary>

  ```
  out1
  <line2>
  ```

  </details>

- 🔧 `Task: look`
  <details><summary>output (1 line)</summary>

  ```
  done
  ```

  </details>

> <details><summary>Subagent — general: look</summary>
>
> **User**
>
> sub &lt;prompt>
>
> **Assistant**
>
> sub answer
>
> </details>


<a id="turn-2"></a>

## Turn 2 · 2026-11-01 09:10 UTC


---
*Context compacted*

---

**User**

second
"""

MD_TWO = """\
# 

- Reference: `brave-fox`
- Agent: claude · Project: proj &lt;p>
- Dates: 2026-11-01 09:00 UTC → 2026-11-01 08:30 UTC
- Turn 2 only
- Exported by relay-search at X

## Session 1 · `abcdef01-1111-4222-8333-444444444444`

- Session: `abcdef01-1111-4222-8333-444444444444`
- Directory: `` /w/`d` ``

<a id="s1-turn-2"></a>

### Turn 2 · 2026-11-01 09:10 UTC


---
*Context compacted*

---

**User**

second


## Session 2 · `abcdef02-1111-4222-8333-444444444444`

- Session: `abcdef02-1111-4222-8333-444444444444`
- Directory: `?`

<a id="s2-turn-1"></a>

### Turn 1 · 2026-11-03 09:00 UTC

**User**

again

  <details><summary>output (0 lines)</summary>

  ```

  ```

  </details>

*odd*
"""

HTML_ONE = """\
</head>
<body>
<header>
<h1>T &lt;script&gt;x&lt;/script&gt;</h1>
<dl class="meta">
<dt>Reference</dt><dd><code>ref &lt;r&gt;</code></dd>
<dt>Agent</dt><dd>claude · proj &lt;p&gt;</dd>
<dt>Dates</dt><dd><time>2026-11-01 09:00 UTC</time> → <time>2026-11-01 08:30 UTC</time></dd>
<dt>Session</dt><dd><code>abcdef01-1111-4222-8333-444444444444</code></dd>
<dt>Directory</dt><dd><code>/w/`d`</code></dd>
<dt>Tokens</dt><dd>7.3k tokens (in 1.0k · out 2.0k · cache 4.3k) · ≈$0.50 est.</dd>
</dl>
</header>
<main>
<div class="msg system">note &lt;b&gt;
more</div>
<article class="turn" id="turn-1">
<h3><a href="#turn-1">Turn 1</a> · <time>2026-11-01 09:00 UTC</time></h3>
<div class="msg user"><span class="role">user</span>hi &lt;b&gt;</div>
<details class="thinking"><summary>thinking</summary><div class="msg">hmm &lt;i&gt;</div></details>
<div class="msg assistant"><span class="role">assistant</span>ok [x](javascript:y)</div>
<div class="tool"><code>Bash: ls `a`</code></div>
<details class="output"><summary>output (2 lines)</summary><pre>out1
&lt;line2&gt;</pre></details>
<div class="tool"><code>Task: look</code></div>
<details class="output"><summary>output (1 line)</summary><pre>done</pre></details>
<details class="subagent"><summary>Subagent — general: look</summary>
<div class="msg user"><span class="role">user</span>sub &lt;prompt&gt;</div>
<div class="msg assistant"><span class="role">assistant</span>sub answer</div>
</details>
</article>
<article class="turn" id="turn-2">
<h3><a href="#turn-2">Turn 2</a> · <time>2026-11-01 09:10 UTC</time></h3>
<div class="compaction">compacted &lt;c&gt;</div>
<div class="msg user"><span class="role">user</span>second</div>
</article>
</main>
<footer>Exported by relay-search at 2026-11-02T00:00:00+00:00.</footer>
</body>
</html>
"""

HTML_TWO = """\
</head>
<body>
<header>
<h1></h1>
<dl class="meta">
<dt>Reference</dt><dd><code>brave-fox</code></dd>
<dt>Agent</dt><dd>claude · proj &lt;p&gt;</dd>
<dt>Dates</dt><dd><time>2026-11-01 09:00 UTC</time> → <time>2026-11-01 08:30 UTC</time></dd>
<dt>Turn</dt><dd>2 only</dd>
</dl>
</header>
<main>
<section class="session" id="session-1">
<h2>Session 1</h2>
<dl class="meta">
<dt>Session</dt><dd><code>abcdef01-1111-4222-8333-444444444444</code></dd>
<dt>Directory</dt><dd><code>/w/`d`</code></dd>
</dl>
<article class="turn" id="s1-turn-2">
<h3><a href="#s1-turn-2">Turn 2</a> · <time>2026-11-01 09:10 UTC</time></h3>
<div class="compaction">compacted &lt;c&gt;</div>
<div class="msg user"><span class="role">user</span>second</div>
</article>
</section>
<section class="session" id="session-2">
<h2>Session 2</h2>
<dl class="meta">
<dt>Session</dt><dd><code>abcdef02-1111-4222-8333-444444444444</code></dd>
<dt>Directory</dt><dd><code>?</code></dd>
</dl>
<article class="turn" id="s2-turn-1">
<h3><a href="#s2-turn-1">Turn 1</a> · <time>2026-11-03 09:00 UTC</time></h3>
<div class="msg user"><span class="role">user</span>again</div>
<details class="output"><summary>output (0 lines)</summary><pre></pre></details>
<div class="msg system">odd</div>
</article>
</section>
</main>
<footer>Exported by relay-search at X.</footer>
</body>
</html>
"""

JSON_ONE = {'ref': 'ref <r>',
 'title': 'T <script>x</script>',
 'turn': None,
 'first_timestamp': '2026-11-01T09:00:00Z',
 'last_timestamp': '2026-11-01T10:30:00+02:00',
 'exported_at': '2026-11-02T00:00:00+00:00',
 'exported_by': 'relay-search',
 'sessions': [{'session_id': 'abcdef01-1111-4222-8333-444444444444',
               'session_number': None,
               'agent': 'claude',
               'project': 'proj <p>',
               'cwd': '/w/`d`',
               'git_branch': 'main',
               'first_timestamp': '2026-11-01T09:00:00Z',
               'last_timestamp': '2026-11-01T10:30:00+02:00',
               'usage': {'input_tokens': 1000,
                         'output_tokens': 2000,
                         'cache_creation_tokens': 300,
                         'cache_read_tokens': 4000,
                         'total_tokens': 7300,
                         'responses': 3,
                         'estimated_cost_usd': 0.5,
                         'unpriced_models': []},
               'messages': [{'role': 'user', 'content': [{'type': 'text', 'text': 'hi <b>'}]},
                            {'role': 'assistant',
                             'content': [{'type': 'thinking', 'thinking': 'hmm <i>'},
                                         {'type': 'text', 'text': 'ok [x](javascript:y)'},
                                         {'type': 'tool_use',
                                          'id': 'toolu_s1_1',
                                          'name': 'Bash',
                                          'input': {'command': 'ls `a`'}}]},
                            {'role': 'user',
                             'content': [{'type': 'tool_result',
                                          'tool_use_id': 'toolu_s1_1',
                                          'content': 'out1\n<line2>'}]},
                            {'role': 'assistant',
                             'content': [{'type': 'tool_use',
                                          'id': 'toolu_s1_2',
                                          'name': 'Task',
                                          'input': {'subagent_type': 'general', 'description': 'look'}}]},
                            {'role': 'user',
                             'content': [{'type': 'tool_result', 'tool_use_id': 'toolu_s1_2', 'content': 'done'},
                                         {'type': 'text', 'text': 'second'}]}],
               'events': [{'type': 'text',
                           'role': 'system',
                           'text': 'note <b>\nmore',
                           'timestamp': '2026-11-01T08:59:00Z',
                           'turn': None,
                           'before_message': 0},
                          {'type': 'compaction',
                           'role': 'system',
                           'text': 'compacted <c>',
                           'timestamp': '2026-11-01T09:10:00Z',
                           'turn': 2,
                           'before_message': 5}],
               'subagents': [{'label': 'general: look',
                              'turn': 1,
                              'at_message': 5,
                              'messages': [{'role': 'user', 'content': [{'type': 'text', 'text': 'sub <prompt>'}]},
                                           {'role': 'assistant',
                                            'content': [{'type': 'text', 'text': 'sub answer'}]}],
                              'events': [],
                              'subagents': []}]}]}

JSON_TWO = {'ref': 'brave-fox',
 'title': '',
 'turn': 2,
 'first_timestamp': '2026-11-01T09:00:00Z',
 'last_timestamp': '2026-11-01T10:30:00+02:00',
 'exported_at': 'X',
 'exported_by': 'relay-search',
 'sessions': [{'session_id': 'abcdef01-1111-4222-8333-444444444444',
               'session_number': 1,
               'agent': 'claude',
               'project': 'proj <p>',
               'cwd': '/w/`d`',
               'git_branch': 'main',
               'first_timestamp': '2026-11-01T09:00:00Z',
               'last_timestamp': '2026-11-01T10:30:00+02:00',
               'usage': None,
               'messages': [{'role': 'user', 'content': [{'type': 'text', 'text': 'second'}]}],
               'events': [{'type': 'compaction',
                           'role': 'system',
                           'text': 'compacted <c>',
                           'timestamp': '2026-11-01T09:10:00Z',
                           'turn': 2,
                           'before_message': 0}],
               'subagents': []},
              {'session_id': 'abcdef02-1111-4222-8333-444444444444',
               'session_number': 2,
               'agent': 'claude',
               'project': 'proj <p>',
               'cwd': None,
               'git_branch': 'main',
               'first_timestamp': '2026-11-03T09:00:00',
               'last_timestamp': None,
               'usage': {'input_tokens': 0,
                         'output_tokens': 0,
                         'cache_creation_tokens': 0,
                         'cache_read_tokens': 0,
                         'total_tokens': 0,
                         'responses': 0,
                         'estimated_cost_usd': None,
                         'unpriced_models': []},
               'messages': [{'role': 'user',
                             'content': [{'type': 'text', 'text': 'again'},
                                         {'type': 'tool_result',
                                          'tool_use_id': 'toolu_s2_orphan_1',
                                          'content': ''}]}],
               'events': [{'type': 'text',
                           'role': 'tool',
                           'text': 'odd',
                           'timestamp': None,
                           'turn': 1,
                           'before_message': 1}],
               'subagents': []}]}


# --- Markdown: transcript text carries no live markup --------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("a <b> & ![x](http://e/p.png)", "a &lt;b> & !\\[x](http://e/p.png)"),
        ("[c](javascript:alert(1)) [d](https://ok) [e](rel/path) [f](mailto:x) [g](#frag) [h](&#106;avascript:x)",
         "[c]\\(javascript:alert(1)) [d](https://ok) [e](rel/path) [f](mailto:x) [g](#frag) [h]\\(&#106;avascript:x)"),
        ("[a](%6aavascript:x) [b](ja\\vascript:x) [c](HTTPS://x) [d]( http://x) [e](MAILTO:x) [f](a/b:c) [g](q?x:y)",
         "[a]\\(%6aavascript:x) [b]\\(ja\\vascript:x) [c](HTTPS://x) [d]( http://x) [e](MAILTO:x) [f](a/b:c) "
         "[g](q?x:y)"),
        ("[i](<https://a>) [j](data:x) [k](x#y:z) [l]()", "[i]\\(&lt;https://a>) [j]\\(data:x) [k](x#y:z) [l]()"),
        ("x `<k>` y ``a`b`` <z> `[c](data:x)`", "x `<k>` y ``a`b`` &lt;z> `[c](data:x)`"),
        ("<a> ``x` <b>", "&lt;a> ``x` &lt;b>"),  # an unmatched run of backticks opens no span
        ("[lbl]: javascript:x", "\\[lbl]: javascript:x"),
        ("  [lbl]:data:x", "  \\[lbl]:data:x"),
        ("   [lbl]: https://ok", "   [lbl]: https://ok"),
        ("[lbl]: /rel <b>", "[lbl]: /rel &lt;b>"),
        ("    [lbl]: data:x", "    [lbl]: data:x"),  # four spaces: a code block, not a definition
        ("```py\n<a>\n```\n<b>", "```py\n<a>\n```\n&lt;b>"),
        ("~~~\n<a>\n```\n<b>", "~~~\n<a>\n```\n<b>\n~~~"),  # a fence closes only with its own character
        ("````\n```\n<c>\n```` x\n<d>\n````\n<e>", "````\n```\n<c>\n```` x\n<d>\n````\n&lt;e>"),
        ("   ~~~~\n<a>\n~~~~~  \n<b>", "   ~~~~\n<a>\n~~~~~  \n&lt;b>"),
        ("    ```\n<a>", "    ```\n&lt;a>"),
        ("```\nopen <x>", "```\nopen <x>\n```"),  # an unclosed fence is closed
        ("", ""),
        (None, ""),
    ],
)
def test_neutral_escapes_html_and_breaks_unsafe_links_outside_code(text, expected):
    assert markdown.neutral(text) == expected


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("abc", "`abc`"),
        ("a`b", "`` a`b ``"),
        ("`x", "`` `x ``"),
        ("x`", "`` x` ``"),
        ("a ``` b", "```` a ``` b ````"),
        ("  a\n b  ", "`a b`"),
        ("", "``"),
    ],
)
def test_code_spans_get_a_fence_longer_than_any_backtick_run(text, expected):
    assert markdown.code(text) == expected


def test_fences_indents_and_html_text():
    assert markdown._fenced("a````b") == "`````\na````b\n`````"
    assert markdown._fenced("x``") == "```\nx``\n```"
    assert markdown._fenced("") == "```\n\n```"
    assert markdown._indent("a\n\nb", "  ") == "  a\n\n  b"
    assert markdown._html_text(" <a> &\n b ") == "&lt;a&gt; &amp; b"
    assert markdown._one_line(None) == ""  # type: ignore[arg-type]


def test_a_tool_line_keeps_no_backtick_and_a_subagent_label_no_markup():
    out: list[str] = []
    markdown._blocks([m(1, "assistant", "tool_use", "  run\n`x`  ", 1),
                      document.Subagent("a <b> & c", [m(2, "assistant", "text", "y\n\nz", None)])], out, False)
    assert out == ["- 🔧 `run ʼxʼ`", "> <details><summary>Subagent — a &lt;b&gt; &amp; c</summary>", ">",
                   "> **Assistant**", ">", "> y", ">", "> z", ">", "> </details>", ""]  # fmt: skip


# --- the document ----------------------------------------------------------------------------


def test_tool_lines_and_times():
    assert document.tool_line(m(1, "assistant", "tool_use", "", 1, tool="Grep")) == "Grep"
    assert document.tool_line(m(1, "assistant", "tool_use", "", 1)) == "tool"
    assert document.tool_line(m(1, "assistant", "tool_use", "a\n b " + "x" * 400, 1)) == "a b " + "x" * 296
    assert document.when(None) == "?" and document.when("") == "?"
    assert document.when("yesterday") == "yesterday"
    assert document.when("2026-11-01T09:05:59Z") == "2026-11-01 09:05 UTC"
    assert document.when("2026-11-01T01:05:00-03:00") == "2026-11-01 04:05 UTC"
    assert document.when("2026-11-01T09:05:00") == "2026-11-01 09:05 UTC"


def test_a_document_spans_its_sessions_and_names_its_anchors():
    doc = two_doc()
    assert (doc.first_timestamp, doc.last_timestamp) == ("2026-11-01T09:00:00Z", "2026-11-01T10:30:00+02:00")
    assert doc.anchor(doc.sessions[1], 7) == "s2-turn-7"
    doc.sessions[0].info = info(first_timestamp=None, last_timestamp="2026-11-04T00:00:00Z")
    assert (doc.first_timestamp, doc.last_timestamp) == ("2026-11-03T09:00:00", "2026-11-04T00:00:00Z")
    doc.sessions[0].info = info(first_timestamp=None, last_timestamp=None)
    doc.sessions[1].info = info(first_timestamp=None, last_timestamp=None)
    assert (doc.first_timestamp, doc.last_timestamp) == (None, None)
    assert one_doc().anchor(one_doc().sessions[0], 3) == "turn-3"
    assert document.SessionDoc(info(), [], []).number == 1


def seqs(blocks) -> list:
    return [b.sequence if isinstance(b, Message) else (b.label, seqs(b.blocks)) for b in blocks]


def test_results_pair_by_id_then_by_parent_then_the_oldest_waiting_call():
    by_id = [m(1, "assistant", "tool_use", "a", 1, call="A"), m(2, "assistant", "tool_use", "b", 1, call="B"),
             m(3, "user", "tool_result", "rb", 1, call="B"), m(4, "user", "tool_result", "ra", 1, call="A")]
    assert document.pair_results(by_id) == {3: 2, 4: 1}
    assert seqs(document.arrange(by_id)) == [1, 4, 2, 3]
    by_parent = [m(1, "assistant", "tool_use", "a", 1, uuid="u1"), m(2, "assistant", "tool_use", "b", 1, uuid="u2"),
                 m(3, "user", "tool_result", "rb", 1, parent="u2"), m(4, "user", "tool_result", "ra", 1, parent="u1")]
    assert document.pair_results(by_parent) == {3: 2, 4: 1}
    oldest = [m(1, "assistant", "tool_use", "a", 1), m(2, "assistant", "tool_use", "b", 1),
              m(3, "user", "tool_result", "r1", 1, parent="nobody"), m(4, "user", "tool_result", "r2", 1),
              m(5, "user", "tool_result", "r3", 1)]
    assert document.pair_results(oldest) == {3: 1, 4: 2}
    assert seqs(document.arrange(oldest)) == [1, 3, 2, 4, 5]  # a result no call waits for stays where it is
    # an id no call has, when calls have ids: unpaired, not given to the oldest call
    mixed = [m(1, "assistant", "tool_use", "a", 1, call="A"), m(2, "user", "tool_result", "r", 1, call="Z"),
             m(3, "user", "tool_result", "r", 1, call="A"), m(4, "user", "tool_result", "again", 1, call="A")]
    assert document.pair_results(mixed) == {3: 1}
    # a result without an id beside calls with ids: the oldest call still waiting
    twice = [m(1, "assistant", "tool_use", "a", 1, call="A"), m(2, "assistant", "tool_use", "b", 1),
             m(3, "user", "tool_result", "r", 1, call="A"), m(4, "user", "tool_result", "r", 1, parent="x")]
    assert document.pair_results(twice) == {3: 1, 4: 2}
    plain = [m(1, "user", "text", "t", 1), document.Subagent("s", []), m(2, "assistant", "text", "u", 1)]
    assert document.pair_results(plain) == {} and document.arrange(plain) is plain


def test_a_subagent_goes_after_the_call_that_started_it():
    """Two spawning calls in one message, each result right after its call: the second
    subagent goes under the second call (it went under the first, ahead of the first's
    work: the check for work already placed looked before the result, not after it)."""
    call = {"subagent_type": "Explore", "description": "find it"}
    turn1 = [m(1, "user", "text", "go", 1, "2026-11-01T09:00:00Z"),
             m(2, "assistant", "tool_use", "Agent", 1, tool="Agent", inp=call, call="A"),
             m(3, "assistant", "tool_use", "spawn", 1, tool="spawn_agent", inp={"description": 7}, call="B"),
             m(4, "user", "tool_result", "ra", 1, call="A"), m(5, "user", "text", "then", 1)]
    turn2 = [m(10, "user", "text", "next", 2, "2026-11-01T10:00:00Z")]
    side = [m(20, "user", "text", "  sub\n prompt ", None, "2026-11-01T09:00:01Z", side=True, file_index=1),
            m(21, "assistant", "text", "x", None, "2026-11-01T09:00:02Z", side=True, file_index=1),
            m(22, "user", "text", "second sub", None, "2026-11-01T09:00:03Z", side=True, file_index=2),
            m(23, "user", "text", "third", None, "2026-11-01T09:00:04Z", side=True, file_index=2),
            m(24, "assistant", "text", "fourth", None, "2026-11-01T09:30:00Z", side=True, file_index=3),
            m(25, "user", "text", "", None, None, side=True, file_index=4)]
    s = document.session_doc(info(), [*turn1, *side[:2], *turn2, *side[2:]])
    assert s.preface == []
    assert [t.number for t in s.turns] == [1, 2]
    assert seqs(s.turns[0].blocks) == [1, 2, 4, ("Explore: find it", [20, 21]), 3,
                                       ("second sub", [22, 23]), 5, ("subagent", [24])]
    assert seqs(s.turns[1].blocks) == [10, ("subagent", [25])]  # no time: the last turn's end


def test_a_subagent_before_any_turn_or_without_turns():
    side = [m(1, "user", "text", "early", None, "2026-11-01T08:00:00Z", side=True, file_index=1)]
    s = document.session_doc(info(), [*side, m(2, "user", "text", "go", 1, "2026-11-01T09:00:00Z")])
    assert seqs(s.turns[0].blocks) == [2, ("early", [1])]  # before every turn: the last turn
    s = document.session_doc(info(), [m(0, "system", "text", "n", None), *side])
    assert seqs(s.preface) == [0, ("early", [1])]
    assert document._label(None, "") == "subagent"
    assert document._label(m(1, "assistant", "tool_use", "", 1, inp={"subagent_type": 3}), "p " * 50) == ("p " * 40)[:80]
    assert document._label(m(1, "assistant", "tool_use", "", 1, inp=None), "q") == "q"


# --- whole documents ---------------------------------------------------------------------


def test_markdown_of_one_session_is_exact():
    assert markdown.render(one_doc(), thinking=True) == MD_ONE
    without = markdown.render(one_doc())
    assert without == MD_ONE.replace("<details><summary>thinking</summary>\n\nhmm &lt;i>\n\n</details>\n\n", "")


def test_markdown_of_a_chain_with_one_turn_is_exact():
    assert markdown.render(two_doc()) == MD_TWO


def test_html_of_one_session_is_exact():
    assert html.render(one_doc(), thinking=True) == html_head("T &lt;script&gt;x&lt;/script&gt;") + HTML_ONE
    thinking = '<details class="thinking"><summary>thinking</summary><div class="msg">hmm &lt;i&gt;</div></details>\n'
    assert html.render(one_doc()) == html_head("T &lt;script&gt;x&lt;/script&gt;") + HTML_ONE.replace(thinking, "")


def test_html_of_a_chain_with_one_turn_is_exact():
    assert html.render(two_doc()) == html_head("") + HTML_TWO


def test_html_titles_are_one_line_cut_with_an_ellipsis():
    doc = one_doc()
    doc.title = "a\n b " + "x" * 400
    page = html.render(doc)
    assert f"<title>a b {'x' * 115}…</title>" in page
    assert f"<h1>a b {'x' * 295}…</h1>" in page
    assert html._short("x" * 120, 120) == "x" * 120 and html._short(None, 5) == ""  # type: ignore[arg-type]


def test_the_css_fetches_nothing():
    css = html.CSS
    assert css.startswith("\n:root { color-scheme: light dark;") and css.endswith("font-size: 12px; }\n")
    assert "url(" not in css and "@import" not in css


def test_json_is_exact():
    assert jsonfmt.render(one_doc(), thinking=True).endswith("\n")
    assert json.loads(jsonfmt.render(one_doc(), thinking=True)) == JSON_ONE
    assert json.loads(jsonfmt.render(two_doc())) == JSON_TWO
    text = jsonfmt.render(two_doc())
    assert text.startswith('{\n "ref": "brave-fox",\n') and "<" in jsonfmt.render(one_doc())  # indent 1, not ASCII-escaped
    plain = json.loads(jsonfmt.render(one_doc()))["sessions"][0]["messages"][1]["content"]
    assert [b["type"] for b in plain] == ["text", "tool_use"]  # thinking only when asked for


def test_json_numbers_calls_per_conversation_and_nests_subagents():
    sub = [m(20, "user", "text", "p", None), m(21, "assistant", "tool_use", "t", None, tool=None),
           m(22, "user", "tool_result", "r", None), m(23, "user", "tool_result", "stray", None)]  # fmt: skip
    blocks = [m(1, "assistant", "tool_use", "a", 3, tool="Read", inp=None),
              document.Subagent("one", list(sub)), document.Subagent("two", [m(30, "assistant", "text", "x", None)])]
    conv = jsonfmt._Conversation("s4", thinking=False)
    conv.feed(blocks, 3)
    assert conv.result() == {
        "messages": [{"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_s4_1", "name": "Read",
                                                         "input": {}}]}],
        "events": [],
        "subagents": [
            {"label": "one", "turn": 3, "at_message": 1, "events": [], "subagents": [], "messages": [
                {"role": "user", "content": [{"type": "text", "text": "p"}]},
                {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_s4_a1_1", "name": "tool",
                                                   "input": {}}]},
                {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_s4_a1_1", "content": "r"},
                                             {"type": "tool_result", "tool_use_id": "toolu_s4_a1_orphan_23",
                                              "content": "stray"}]}]},
            {"label": "two", "turn": 3, "at_message": 1, "events": [], "subagents": [],
             "messages": [{"role": "assistant", "content": [{"type": "text", "text": "x"}]}]},
        ],
    }  # fmt: skip


def test_thinking_in_the_preface_and_in_subagents_only_when_asked_for():
    think = m(1, "assistant", "thinking", "deep", None)
    s = document.SessionDoc(info(), [think, document.Subagent("sub", [m(2, "assistant", "thinking", "deeper", None)])], [])
    doc = document.ExportDoc(ref="r", title="t", sessions=[s], turn=None, exported_at="X")
    for render in (markdown.render, html.render, jsonfmt.render):
        assert "deep" not in render(doc), render
        shown = render(doc, thinking=True)
        assert "deep" in shown and "deeper" in shown, render


def test_json_keeps_text_that_is_not_ascii():
    doc = one_doc()
    doc.title = "Titel ü →"
    assert '\n "title": "Titel ü →",\n' in jsonfmt.render(doc)


def test_a_subagent_after_a_spawning_call_that_ends_its_turn_and_one_started_at_a_turns_start():
    turn1 = [m(1, "user", "text", "go", 1, "2026-11-01T09:00:00Z"), m(2, "assistant", "tool_use", "Task", 1, tool="Task")]
    turn2 = [m(3, "user", "text", "next", 2, "2026-11-01T10:00:00Z"), m(4, "assistant", "tool_use", "Task", 2, tool="Task")]
    side = [m(10, "user", "text", "a", None, "2026-11-01T09:00:01Z", side=True, file_index=1),
            m(11, "user", "text", "b", None, "2026-11-01T10:00:00Z", side=True, file_index=2)]  # fmt: skip
    s = document.session_doc(info(), [*turn1, *turn2, *side])
    assert seqs(s.turns[0].blocks) == [1, 2, ("a", [10])]
    assert seqs(s.turns[1].blocks) == [3, 4, ("b", [11])]  # started at turn 2's own time: turn 2


def test_pairing_and_arranging_step_over_subagents():
    blocks = [m(1, "assistant", "tool_use", "a", 1), document.Subagent("s", []), m(2, "user", "tool_result", "r", 1)]
    assert document.pair_results(blocks) == {2: 1}
    assert seqs(document.arrange(blocks)) == [1, 2, ("s", [])]

