"""The command that resumes a session in its own agent, in its own directory.

Each agent's syntax, checked against its documentation:

* Claude Code: ``claude --resume <session-id>`` (``-r``) — CLI reference,
  https://docs.anthropic.com/en/docs/claude-code/cli-reference ("claude -r
  "<session-id>" … Resume session by ID"). Sessions are stored per project
  directory, so the command runs from the session's cwd.
* Codex CLI: ``codex resume <SESSION_ID>`` — Codex CLI reference
  (https://developers.openai.com/codex/cli/reference; ``codex resume [OPTIONS]
  [SESSION_ID]``, the UUID of the session; ``--last`` for the newest).
* Gemini CLI: ``gemini --resume <session-uuid>`` (``-r``) — session management,
  https://geminicli.com/docs/cli/session-management ("Resume by ID: … provide the
  full session UUID"); sessions are project-specific, so again from the cwd.
* Ash: a chat bot (Telegram, Slack, …) whose sessions live on its server; there
  is no terminal command that reopens one.

A session id comes from transcript content, so it is checked before it becomes an
argument: each agent names its sessions by a UUID (Claude Code's file names, Codex's
``session_meta`` id, Gemini's ``sessionId``), and anything else is refused with one
line — an id such as ``--settings=/tmp/evil.json`` would otherwise be an option
(a settings file can hold hooks, which run commands). Where the parser takes it
(Codex's clap positional), the id also goes after ``--``; Claude Code's
``--resume [id]`` and Gemini's ``--resume <id>`` take their value from the next word
and would read ``--`` as "no id", so there the UUID check is the guard. The
command's words are shell-quoted (``shlex``), the directory included.
"""

from __future__ import annotations

import os
import re
import shlex
from dataclasses import dataclass

from core.errors import BadInput
from core.model import SessionInfo
from core.refs import parse_reference

_COMMANDS: dict[str, tuple[str, ...]] = {
    "claude": ("claude", "--resume"),
    "codex": ("codex", "resume", "--"),
    "gemini": ("gemini", "--resume"),
}
_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
# The shape of a session id each agent accepts on its command line.
ID_SHAPES: dict[str, re.Pattern[str]] = {"claude": _UUID, "codex": _UUID, "gemini": _UUID}


@dataclass(frozen=True, slots=True)
class ResumePlan:
    """How to resume one session; ``argv`` is None when the agent cannot resume."""

    session_id: str
    agent: str
    cwd: str | None
    argv: tuple[str, ...] | None
    cwd_exists: bool
    reason: str | None = None  # why there is no command, or what the caller should know

    @property
    def command(self) -> str | None:
        """The one line to paste into a shell."""
        if self.argv is None:
            return None
        run = shlex.join(self.argv)
        return f"cd {shlex.quote(self.cwd)} && {run}" if self.cwd else run

    def to_dict(self) -> dict[str, object]:
        return {
            "session_id": self.session_id,
            "agent": self.agent,
            "cwd": self.cwd,
            "cwd_exists": self.cwd_exists,
            "command": self.command,
            "argv": list(self.argv) if self.argv else None,
            "note": self.reason,
        }


def pick_session(ref: str, sessions: tuple[SessionInfo, ...], single: bool) -> SessionInfo:
    """The session a resume of ``ref`` means: the one named, or a chain's latest.

    A range (``slug#2-4``) names several sessions, and an agent resumes one: it is
    refused rather than guessed.
    """
    parsed = parse_reference(ref)
    if parsed.sessions and len(sessions) > 1:
        name = parsed.name
        example = f"{name}#{sessions[-1].session_number}"
        raise BadInput(f"{ref} names {len(sessions)} sessions; resume one of them, e.g. {example}")
    return sessions[0] if single or len(sessions) == 1 else sessions[-1]


def plan(info: SessionInfo) -> ResumePlan:
    cwd = info.cwd
    exists = cwd is not None and bool(cwd) and os.path.isdir(cwd)
    base = _COMMANDS.get(info.agent)
    if base is None:
        why = (
            "Ash sessions are chat-bot conversations kept by the Ash server: they cannot be resumed from a terminal"
            if info.agent == "ash"
            else f"{info.agent} sessions cannot be resumed from relay-search"
        )
        return ResumePlan(info.session_id, info.agent, cwd, None, exists, why)
    if not ID_SHAPES[info.agent].fullmatch(info.session_id):
        shown = info.session_id if len(info.session_id) <= 60 else info.session_id[:57] + "…"
        why = f"not resuming: the session id {shown!r} is not a {info.agent} session id (a UUID)"
        return ResumePlan(info.session_id, info.agent, cwd, None, exists, why)
    note = None
    if not cwd:
        note = "the session did not record its directory: run the command from the project's directory"
    elif not exists:
        note = f"the session's directory {cwd} no longer exists"
    return ResumePlan(info.session_id, info.agent, cwd, (*base, info.session_id), exists, note)
