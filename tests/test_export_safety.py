"""``relay-search export`` at the trust boundary, through the CLI subprocess (issue 23
items 5-8, issue 26): each output under its own call when several run at once, no
file clobbered or written through a symlink, Markdown that carries no live markup,
HTML that escapes what the transcript holds, Grep/Glob lines that show the pattern."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

SID = "abcdef01-1111-4222-8333-444444444444"
SID2 = "abcdef02-1111-4222-8333-444444444444"
SLUG = "brave-quiet-export"
CWD = "/home/t/work/exp"
CALLS = {"toolu_A": ("bd ready", "READY-OUT"), "toolu_B": ("git log -20", "LOG20-OUT"),
         "toolu_C": ("git log --oneline master..HEAD", "RANGE-OUT")}
TITLE = "<script>alert('title')</script> plan"
HOSTILE_TEXT = ('See <img src="https://evil.example/track.png"> and [click](javascript:alert(1)) and '
                "![pixel](https://evil.example/pixel.png) and `<kept>` in code")


def rec(kind: str, n: int, parent: str | None, content, *, sid: str = SID, minute: int = 0, **extra) -> dict:
    role = "assistant" if kind == "assistant" else "user"
    message = {"role": role, "content": content}
    if kind == "assistant":
        message.update(id=f"msg_{sid[:8]}_{n}", model="claude-sonnet-4-5-20250929")
    return {"type": kind, "uuid": f"{sid[:8]}-u{n}", "parentUuid": parent, "sessionId": sid, "cwd": CWD,
            "slug": SLUG, "timestamp": f"2026-10-0{1 if sid == SID else 2}T10:{minute:02d}:{n:02d}.000Z",
            "message": message, **extra}


def session_lines(sid: str) -> list[str]:
    p = sid[:8]
    lines = [rec("user", 0, None, "run the three checks", sid=sid)]
    parent = f"{p}-u0"
    for n, (tid, (command, _)) in enumerate(CALLS.items(), start=1):  # one message, three calls
        lines.append(rec("assistant", n, parent, [{"type": "tool_use", "id": tid, "name": "Bash",
                                                   "input": {"command": command}}], sid=sid))
        parent = f"{p}-u{n}"
    for n, tid in enumerate(("toolu_B", "toolu_C", "toolu_A"), start=4):  # results in another order
        out = "\n".join(f"{CALLS[tid][1]} line {i}" for i in range(3))
        lines.append(rec("user", n, parent, [{"type": "tool_result", "tool_use_id": tid, "content": out}], sid=sid))
        parent = f"{p}-u{n}"
    lines.append(rec("assistant", 7, parent, [{"type": "tool_use", "id": "toolu_G", "name": "Grep",
                                               "input": {"pattern": "def parse_.*", "path": "."}}], sid=sid))
    lines.append(rec("user", 8, f"{p}-u7", [{"type": "tool_result", "tool_use_id": "toolu_G",
                                              "content": "<script>alert('output')</script>"}], sid=sid))
    lines.append(rec("assistant", 9, f"{p}-u8", [{"type": "text", "text": HOSTILE_TEXT}], sid=sid))
    lines.append({"type": "custom-title", "customTitle": TITLE, "sessionId": sid})
    return [json.dumps(r) for r in lines]


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return write_home(tmp_path_factory.mktemp("export-safety"))


def write_home(home: Path) -> Path:
    """Two sessions of one chain, each with three calls made at once and hostile text."""
    project = home / ".claude" / "projects" / "-home-t-work-exp"
    project.mkdir(parents=True)
    for sid in (SID, SID2):
        (project / f"{sid}.jsonl").write_text("\n".join(session_lines(sid)) + "\n")
    return home


def run(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    env = {"HOME": str(home), "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    cwd.mkdir(parents=True, exist_ok=True)
    proc = subprocess.run([sys.executable, "-m", "core", "export", *args], env=env, cwd=cwd, capture_output=True,
                          text=True, timeout=300)
    assert "Traceback" not in proc.stderr, proc.stderr
    return proc


def exported(home: Path, out: Path, fmt: str) -> str:
    proc = run(home, out, SID, "--format", fmt)
    assert proc.returncode == 0, proc.stderr
    return (out / f"{SID}.{fmt}").read_text()


# --- each output under its own call ---------------------------------------------------------


def test_parallel_calls_each_get_their_own_output_in_markdown(home: Path, tmp_path: Path) -> None:
    md = exported(home, tmp_path, "md")
    for command, marker in CALLS.values():
        call = md.index(f"🔧 `Bash: {command}`")
        nxt = md.find("🔧", call + 1)
        section = md[call:nxt if nxt > 0 else None]
        assert f"{marker} line 0" in section, command
        assert all(other not in section for _, other in CALLS.values() if other != marker), command


def test_parallel_calls_each_get_their_own_output_in_html(home: Path, tmp_path: Path) -> None:
    page = exported(home, tmp_path, "html")
    calls = [m.start() for m in re.finditer(r'<div class="tool">', page)]
    for command, marker in CALLS.values():
        at = page.index(f"Bash: {command}")
        nxt = min([c for c in calls if c > at] or [len(page)])
        assert f"{marker} line 0" in page[at:nxt], command


def test_parallel_calls_each_get_their_own_output_in_json(home: Path, tmp_path: Path) -> None:
    data = json.loads(exported(home, tmp_path, "json"))
    blocks = [b for m in data["sessions"][0]["messages"] for b in m["content"]]
    commands = {b["id"]: b["input"].get("command") for b in blocks if b["type"] == "tool_use"}
    for result in (b for b in blocks if b["type"] == "tool_result" and "line 0" in b["content"]):
        command = commands[result["tool_use_id"]]
        assert result["content"].startswith(dict(CALLS.values())[command]), command


def test_grep_lines_show_the_pattern_not_the_path(home: Path, tmp_path: Path) -> None:
    md = exported(home, tmp_path, "md")
    assert "🔧 `Grep: def parse_.*`" in md and "Grep: ." not in md


# --- never clobber ----------------------------------------------------------------------------


def test_export_refuses_to_replace_a_file_without_force(home: Path, tmp_path: Path) -> None:
    target = tmp_path / f"{SID}.md"
    target.write_text("my notes")
    proc = run(home, tmp_path, SID)
    assert proc.returncode == 1 and proc.stdout == ""
    assert proc.stderr.count("\n") == 1 and "--force" in proc.stderr and str(target) in proc.stderr
    assert target.read_text() == "my notes"
    forced = run(home, tmp_path, SID, "--force")
    assert forced.returncode == 0, forced.stderr
    assert target.read_text().startswith("# ") and not list(tmp_path.glob(".*.tmp"))


def test_export_never_writes_through_a_symlink(home: Path, tmp_path: Path) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    out = tmp_path / "out"
    out.mkdir()
    link = out / f"{SID}.md"
    link.symlink_to(victim)
    dangling = out / f"{SID}.html"
    dangling.symlink_to(tmp_path / "not-yet")
    for args in ((SID,), (SID, "--format", "html")):
        proc = run(home, out, *args)
        assert proc.returncode == 1 and "--force" in proc.stderr and proc.stderr.count("\n") == 1
    assert victim.read_text() == "precious" and not (tmp_path / "not-yet").exists()
    assert run(home, out, SID, "--force").returncode == 0
    assert victim.read_text() == "precious"  # the link was replaced, not followed
    assert not link.is_symlink() and link.read_text().startswith("# ")


def test_a_directory_export_refuses_before_writing_anything(home: Path, tmp_path: Path) -> None:
    out = tmp_path / "chain"
    out.mkdir()
    (out / "index.md").write_text("my index")
    proc = run(home, tmp_path, SLUG, "-o", "chain/")
    assert proc.returncode == 1 and "--force" in proc.stderr and proc.stderr.count("\n") == 1
    assert sorted(p.name for p in out.iterdir()) == ["index.md"] and (out / "index.md").read_text() == "my index"
    forced = run(home, tmp_path, SLUG, "-o", "chain/", "--force")
    assert forced.returncode == 0, forced.stderr
    assert len(list(out.glob("*.md"))) == 3 and "my index" not in (out / "index.md").read_text()


# --- no live markup ---------------------------------------------------------------------------


def _outside_code(md: str) -> str:
    """The Markdown with fenced blocks and code spans removed (what a viewer renders as markup)."""
    md = re.sub(r"(?ms)^ *(`{3,}|~{3,}).*?^ *\1 *$", "", md)
    return re.sub(r"(`+)(?!`).*?\1", "", md)


def test_markdown_neutralises_html_javascript_links_and_remote_images(home: Path, tmp_path: Path) -> None:
    md = exported(home, tmp_path, "md")
    live = _outside_code(md)
    assert "<img" not in live and "<script" not in live  # raw HTML escaped
    assert not re.search(r"\]\(\s*javascript:", live, re.IGNORECASE)  # no javascript: link
    assert not re.search(r"(?<!\\)!\[", live)  # no image a viewer would fetch
    assert "evil.example/track.png" in md and "click" in md  # the text is still there, as text
    assert "`<kept>`" in md  # code stays as written


class _Scripts(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []

    def handle_starttag(self, tag, attrs) -> None:
        self.tags.append(tag)


def test_html_escapes_script_in_tool_output_and_title(home: Path, tmp_path: Path) -> None:
    page = exported(home, tmp_path, "html")
    parser = _Scripts()
    parser.feed(page)
    assert "script" not in parser.tags and "img" not in parser.tags
    assert "&lt;script&gt;alert(&#x27;output&#x27;)&lt;/script&gt;" in page
    assert "&lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt;" in page


def test_codex_parallel_calls_pair_by_their_call_ids(tmp_path: Path) -> None:
    from core.fixtures.codex import CodexRollout, codex_id

    home = tmp_path / "home"
    rollout = CodexRollout(home / ".codex", codex_id(7), cwd=CWD).user("run the three checks")
    for n, (command, _) in enumerate(CALLS.values()):
        rollout.item({"type": "function_call", "name": "shell", "call_id": f"call_{n}",
                      "arguments": json.dumps({"command": ["bash", "-lc", command]})})
    for n in (1, 2, 0):  # outputs in another order
        marker = list(CALLS.values())[n][1]
        rollout.item({"type": "function_call_output", "call_id": f"call_{n}",
                      "output": json.dumps({"output": f"{marker} line 0", "metadata": {"exit_code": 0}})})
    rollout.assistant("done")
    proc = run(home, tmp_path / "out", codex_id(7))
    assert proc.returncode == 0, proc.stderr
    md = (tmp_path / "out" / f"{codex_id(7)}.md").read_text()
    for command, marker in CALLS.values():
        call = md.index(command)
        nxt = md.find("🔧", call + 1)
        section = md[call:nxt if nxt > 0 else None]
        assert f"{marker} line 0" in section and sum(m in section for _, m in CALLS.values()) == 1, command
