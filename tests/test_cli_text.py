"""The CLI's text for people (issue 36's CLI part, issue 37 item 6), through real
subprocesses of ``relay-search``, their stdout a pipe or a pseudo-terminal:

- every word after ``search`` is the query, quoted or not, options before or after;
- every option of every subcommand says what it does and its default;
- a search's snippets highlight the query's words on a terminal, never in a pipe or
  with ``NO_COLOR`` set;
- a transcript's terminal escapes (``ESC ]52`` writes the clipboard, ``ESC ]0`` the
  title, ``ESC [2J`` clears, the C1 ``0x9b`` is a CSI) are shown, never sent: byte by
  byte, the only escapes in the output are the highlighting's own; ``--json`` escapes them.
"""

from __future__ import annotations

import argparse
import json
import os
import pty
import subprocess
import time
from pathlib import Path

import pytest

from core.front.cli import build_parser
from core.front.cli.printing import MARK_OFF, MARK_ON

from .hostile_support import SCRIPT, cli_env, drain_terminal, exchange, run_cli, write_jsonl

PLAIN_SID = "11111111-1111-4111-8111-111111111111"
EVIL_SID = "22222222-2222-4222-8222-222222222222"
CLIPBOARD = "\x1b]52;c;cm0gLXJmIH4K\x07"  # OSC 52: sets the clipboard to "rm -rf ~"
TITLE = "\x1b]0;owned\x07"
CLEAR = "\x1b[2J"
CSI_C1 = "\x9b31m"  # C1 CSI: red, on a terminal that takes 8-bit controls
EVIL_PROMPT = f"the kestrel deploy {CLIPBOARD}{TITLE}{CLEAR}{CSI_C1} log\x7f and a bell\x07 done"
EVIL_ANSWER = "The kestrel answer \x1b[31mred\x1b[0m and \x9b2J end."


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    home = tmp_path_factory.mktemp("cli-text")
    projects = home / ".claude" / "projects"
    write_jsonl(projects / "-home-t-billing-api" / f"{PLAIN_SID}.jsonl", exchange(
        PLAIN_SID, "test_invoice_rollover is flaky in CI: the spotter tail shows it",
        "The spotter tail log says flaky invoice rollover at midnight.", "2026-11-01T09:00:00Z",
        cwd="/home/t/billing-api"))  # fmt: skip
    evil = exchange(EVIL_SID, EVIL_PROMPT, EVIL_ANSWER, "2026-11-02T09:00:00Z", cwd=f"/home/t/proj{CLEAR}")
    evil[1]["message"].update(id="msg_1", model=f"claude-x{TITLE}", usage={"input_tokens": 10, "output_tokens": 5})
    evil[1]["requestId"] = "req_1"
    write_jsonl(projects / "-home-t-proj" / f"{EVIL_SID}.jsonl", evil)
    assert run_cli(home, "index").returncode == 0
    return home


def on_terminal(home: Path, *args: str, **env: str) -> tuple[int, bytes]:
    """``relay-search ARGS`` with stdout a pseudo-terminal (stderr a pipe, checked inert):
    its exit status and the bytes the terminal got."""
    leader, follower = pty.openpty()
    proc = subprocess.Popen([str(SCRIPT), *args], stdin=subprocess.DEVNULL, stdout=follower, stderr=subprocess.PIPE,
                            env=cli_env(home, **{"TERM": "xterm-256color", **env}), close_fds=True)  # fmt: skip
    os.close(follower)
    deadline = time.monotonic() + 120
    try:
        out = drain_terminal(leader, proc, 120)
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    finally:
        if proc.poll() is None:
            proc.kill()
        os.close(leader)
    stderr = proc.stderr.read() if proc.stderr else b""
    assert b"Traceback" not in stderr and b"unexpected error" not in stderr, stderr
    assert_inert(stderr)
    return proc.returncode, out


def in_pipe(home: Path, *args: str, **env: str) -> tuple[int, bytes]:
    proc = run_cli(home, *args, env=env)
    assert_inert(proc.stderr)
    return proc.returncode, proc.stdout


def assert_inert(out: bytes) -> str:
    """No control byte a terminal acts on but newline, tab and a terminal's CR, once our
    highlighting's own escapes are taken out: no ESC, no BEL, no DEL, no C1 (raw or UTF-8)."""
    text = out.decode("utf-8")  # (strict: no stray byte such as a raw 0x9b)
    plain = text.replace(MARK_ON, "").replace(MARK_OFF, "")
    bad = sorted({f"U+{ord(c):04X}" for c in plain if (ord(c) < 0x20 and c not in "\n\t\r") or 0x7F <= ord(c) <= 0x9F})
    assert not bad, (bad, text[:2000])
    return plain


# --- the words after `search` are the query -----------------------------------------------


def _sessions(home: Path, *args: str) -> list[str]:
    rc, out = in_pipe(home, *args)
    assert rc == 0, args
    return [h["session_id"] for h in json.loads(out)["results"]]


def test_every_word_after_search_is_the_query_quoted_or_not(home):
    quoted = _sessions(home, "search", "spotter tail", "--json")
    assert quoted == [PLAIN_SID]
    assert _sessions(home, "search", "spotter", "tail", "--json") == quoted  # (was: "unrecognized arguments: tail")
    assert _sessions(home, "search", "--json", "spotter", "tail") == quoted  # options before
    assert _sessions(home, "search", "spotter", "--json", "tail") == quoted  # and between the words
    assert _sessions(home, "search", "flaky", "invoice", "--project", "billing-api", "--json") == [PLAIN_SID]
    assert _sessions(home, "search", "kestrel", "--project", "billing-api", "--json") == []
    # global options after the subcommand, a pattern starting with '-', their abbreviations
    assert _sessions(home, "search", "spotter", "tail", "--pattern", "-home-t-billing*", "--json") == quoted
    assert _sessions(home, "--pattern", "-home-t-billing*", "search", "spotter", "tail", "--proj", "bill", "--json") == quoted
    # a word starting with one '-' is an exclusion, not an option; after '--' everything is the query
    assert _sessions(home, "search", "spotter", "-midnight", "--json") == []
    assert _sessions(home, "search", "--json", "--", "spotter", "-midnight") == []
    assert _sessions(home, "search", "kestrel", "-spotter", "--json") == [EVIL_SID]
    rc, out = in_pipe(home, "search", "spotter", "tail")
    assert rc == 0 and PLAIN_SID[:8].encode() in out or b"billing-api" in out
    # a missing query and an unknown option are still one-line errors (exit 1)
    for args in (["search"], ["search", "--json"], ["search", "spotter", "--jsno"]):
        proc = run_cli(home, *args)
        assert proc.returncode == 1 and proc.stderr.count(b"\n") == 1, (args, proc.stderr)


@pytest.mark.parametrize(
    "argv",
    [
        ["search", "flaky", "invoice", "--limit", "3", "--project", "x"],
        ["--pattern", "-home-me-*", "search", "-staging", "deploy", "--json"],
        ["--root", "/tmp/p", "--demo", "list", "--limit", "2", "--from", "7d"],
        ["--pat", "list", "search", "x"],  # an abbreviated global option takes "list" as its value
        ["--root=/x", "show", "chain#2", "--limit", "1"],
        ["index", "--stats"],
        ["mcp", "-home-me*"],
        ["export", "chain#1", "--format", "md"],
        ["usage", "--by", "day"],
        ["--demo"],
    ],
)
def test_a_command_line_parses_the_same_with_only_its_command_built(argv):
    """main() builds only the named command's options; any argv parses as with every command built."""
    from core.front.cli import finding, join_dash_values

    def parse(parser: argparse.ArgumentParser) -> argparse.Namespace:
        return parser.parse_args(finding.gather_query(parser, join_dash_values(parser, list(argv))))

    full, only = build_parser(), build_parser(argv)
    assert vars(parse(only)) == vars(parse(full))
    commands = next(a for a in only._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert len(commands) == (11 if argv == ["--demo"] else 1)


# --- every option says what it does and its default ---------------------------------------


def test_every_option_of_every_subcommand_has_help_naming_its_default():
    parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
    assert len(commands) >= 11
    missing = []
    for name, sub in [("relay-search", parser), *commands.items()]:
        for action in sub._actions:
            if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
                continue
            text = action.help or ""
            if not text.strip() or text == argparse.SUPPRESS:
                missing.append(f"{name} {'/'.join(action.option_strings) or action.dest}: no help")
            elif action.option_strings and "default" not in text:
                missing.append(f"{name} {'/'.join(action.option_strings)}: no default in {text!r}")
    assert not missing, "\n".join(missing)


def test_index_help_describes_its_options(tmp_path):
    proc = run_cli(tmp_path, "index", "--help")
    assert proc.returncode == 0
    lines = proc.stdout.decode().splitlines()
    for option in ("--stats", "--rebuild", "--json", "--wait"):
        at = next(i for i, line in enumerate(lines) if line.strip().startswith(option))
        described = " ".join(lines[at : at + 3])
        assert "default" in described and len(described.split()) > 5, described
    search = run_cli(tmp_path, "search", "--help").stdout.decode()
    assert "--limit LIMIT" in search and "default 10" in search and "at most 500" in search


def test_the_limits_in_the_help_are_the_archive_s():
    from core.query.execute import MAX_LIMIT

    assert MAX_LIMIT == 500  # (the help says "at most 500" without importing the query layer)


# --- highlighting on a terminal only ------------------------------------------------------


def test_search_highlights_the_query_s_words_on_a_terminal(home):
    rc, out = on_terminal(home, "search", "flaky", "invoice")
    assert rc == 0
    text = out.decode()
    assert f"{MARK_ON}flaky{MARK_OFF}" in text and f"{MARK_ON}invoice{MARK_OFF}" in text, text
    assert f"{MARK_ON}test_invoice_rollover{MARK_OFF}" in text  # (the token that matched, whole)
    assert_inert(out)


@pytest.mark.parametrize("how", ["pipe", "NO_COLOR", "dumb"])
def test_search_is_plain_in_a_pipe_or_with_no_color(home, how):
    if how == "pipe":
        rc, out = in_pipe(home, "search", "flaky", "invoice")
    elif how == "NO_COLOR":
        rc, out = on_terminal(home, "search", "flaky", "invoice", NO_COLOR="1")
    else:
        rc, out = on_terminal(home, "search", "flaky", "invoice", TERM="dumb")
    assert rc == 0 and b"flaky" in out
    assert b"\x1b" not in out, out


def test_an_empty_no_color_is_unset(home):
    rc, out = on_terminal(home, "search", "flaky", "invoice", NO_COLOR="")  # https://no-color.org: only a value counts
    assert rc == 0 and MARK_ON.encode() in out


# --- a transcript's escapes never reach the terminal --------------------------------------

READING = {
    "show": ["show", EVIL_SID],
    "show a turn": ["show", f"{EVIL_SID}:0"],
    "show --handoff": ["show", EVIL_SID, "--handoff"],
    "search": ["search", "kestrel"],
    "list": ["list"],
    "resume": ["resume", EVIL_SID],
    "usage": ["usage", "--by", "project"],
    "usage by model": ["usage", "--by", "model"],
}


@pytest.mark.parametrize("where", ["terminal", "pipe"])
@pytest.mark.parametrize("command", sorted(READING))
def test_escapes_in_a_transcript_are_shown_never_sent(home, command, where):
    rc, out = (on_terminal if where == "terminal" else in_pipe)(home, *READING[command])
    assert rc in (0, 1), out  # (resume: 1 when the session's directory is gone; its line says why)
    text = assert_inert(out)
    shown = {  # each command prints the transcript's text, its escapes visible and inert
        "show": ["USER: the kestrel deploy ␛]52;c;cm0gLXJmIH4K␇␛]0;owned␇␛[2J<9B>31m log␡ and a bell␇ done",
                 "ASSISTANT: The kestrel answer ␛[31mred␛[0m and <9B>2J end.", "project proj␛[2J"],
        "show a turn": ["USER: the kestrel deploy ␛]52;c;cm0gLXJmIH4K␇␛]0;owned␇", "␛[31mred␛[0m and <9B>2J"],
        "show --handoff": ["project proj␛[2J · 1 session · 2026-11-02 · the kestrel deploy ␛]52;c;cm0gLXJmIH4K␇"],
        "search": ["[proj␛[2J · claude", "deploy ␛]52;c;cm0gLXJmIH4K␇␛]0;owned␇␛[2J<9B>31m log␡"],
        "list": ["proj␛[2J", "the kestrel deploy ␛]52;c;cm0gLXJmIH4K␇␛]0;owned␇␛[2J<9B>31m log␡"],
        "resume": ["/home/t/proj␛[2J"],
        "usage": ["proj␛[2J"],
        "usage by model": ["claude-x␛]0;owned␇"],
    }[command]
    for piece in shown:
        assert piece in text, (piece, text)


@pytest.mark.parametrize("command", ["show", "search", "list"])
def test_json_escapes_them_as_json_does(home, command):
    args = {"show": ["show", EVIL_SID], "search": ["search", "kestrel"], "list": ["list"]}[command]
    rc, out = on_terminal(home, *args, "--json")
    assert rc == 0
    assert b"\x1b" not in out and b"\xc2\x9b" not in out and b"\x07" not in out and b"\x7f" not in out
    data = json.loads(out)  # ... and the text is all there, as it was written
    if command == "show":
        assert data["turns"][0]["user_text"] == EVIL_PROMPT
        assert "\\u009b" in out.decode() and "\\u001b]52;c;" in out.decode()
    elif command == "search":
        assert CLIPBOARD in data["results"][0]["snippet"]


def test_an_error_echoing_a_reference_shows_its_escapes(home):
    proc = run_cli(home, "show", f"{EVIL_SID[:8]}\x1b]0;x\x07")
    assert proc.returncode == 1
    assert b"\x1b" not in proc.stderr and b"\x07" not in proc.stderr, proc.stderr


@pytest.mark.parametrize("where", ["terminal", "pipe"])
def test_index_stats_shows_a_file_name_s_escapes(tmp_path, where):
    sid = "33333333-3333-4333-8333-333333333333"
    name = tmp_path / ".claude" / "projects" / "-home-t-proj" / f"{sid}{TITLE}.jsonl"
    prompt, answer = exchange(sid, "a zebra prompt", "A zebra answer.", "2026-11-03T09:00:00Z")
    name.parent.mkdir(parents=True)
    name.write_text(json.dumps(prompt) + "\n{not json\n" + json.dumps(answer) + "\n")  # (a skipped line: the file is named)
    rc, out = (on_terminal if where == "terminal" else in_pipe)(tmp_path, "index", "--stats")
    assert rc == 0
    assert f"{sid}␛]0;owned␇.jsonl" in assert_inert(out)
