"""What Claude Code showed a person outside the conversation itself, as one line of text each.

Claude Code writes these as ``system`` records, hook ``attachment`` records, and
machinery inside user records; relay-search reads each into a ``system`` message of
the turn it happened in (SPEC §2 extended by issue 34: they are indexed and read back
like any note):

* ``away_summary`` (the recap shown when a person comes back) and the compaction
  summary (the ``isCompactSummary`` record after a ``compact_boundary``): type
  ``summary``;
* hook output: a blocking error (``PostToolUse:Edit hook blocked: ruff check
  failed``), a non-blocking error, a success with its command and output, extra
  context a hook added, the ``stop_hook_summary`` of Stop hooks, and 1.0.x's
  ``PostToolUse:Edit [cmd] completed successfully: …`` notes;
* API errors (``api_error``, ``error``) and refusals, and local command output
  (``/model`` → "Kept model as …"), terminal colour codes stripped;
* the IDE context a person's client attached to a prompt (``<ide_opened_file>``,
  ``<ide_selection>``: the path opened is a word of the turn) and background task
  notifications (``<task-notification>``).

Pure functions of one record or one string (no state but the last command's name,
which the reader keeps), separate from :mod:`.claude_reader`'s turn rules.
"""

from __future__ import annotations

import re
from typing import Any

import msgspec

from .claude_records import Record, decode_any
from .jsonl import DECODE_ERRORS

NOTICE_CHARS = 300  # of a value quoted inside a notice (a command, an error message)

# Terminal control sequences a CLI wrote into its output: CSI (SGR colours ``\x1b[1m``,
# private modes ``\x1b[?2026h``), OSC (titles, hyperlinks) and lone escapes; then the
# C0 controls other than tab and newline.
_ANSI = re.compile(r"\x1b\[[0-9;:?<=>]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]?")
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")
_STDOUT = re.compile(r"<(local-command-stdout|local-command-stderr)>(.*?)(?:</\1>|$)", re.S)
_COMMAND_NAME = re.compile(r"<command-name>\s*(.*?)\s*</command-name>", re.S)
_RUNNING = re.compile(r"^Running .{1,200}\.\.\.$")  # 1.0.x's "Running PostToolUse:Edit...": progress, not output
_NO_OUTPUT = ("", "(no content)", "{}")
_COMPACT_INTRO = re.compile(
    r"^This session is being continued from a previous conversation that ran out of context\."
    r"(?: The (?:conversation is summarized below|summary below covers the earlier portion of the conversation)\.?:?)?\s*"
)
# The closing sentences Claude Code appends to a compaction summary (cut by :func:`_without_outro`).
_OUTRO_DETAILS = "If you need specific details from before compaction"
_OUTRO_CLOSINGS = tuple(
    f"Please continue the conversation from where we left {it}off without asking the user any further questions."
    " Continue with the last task that you were asked to work on."
    for it in ("it ", "")
)
_IDE_OPENED = re.compile(r"<ide_opened_file>\s*(?:The user opened the file\s+)?(.*?)(?:\s+in the IDE\..*?)?</ide_opened_file>", re.S)
_IDE_SELECTION = re.compile(
    r"<ide_selection>\s*(?:The user selected the )?(.*?)(?:\s*This may or may not be related to the current task\.)?\s*</ide_selection>",
    re.S,
)
_TASK = re.compile(r"<task-notification>(.*?)(?:</task-notification>|$)", re.S)
_TASK_FIELD = re.compile(r"<(summary|result)>(.*?)</\1>", re.S)


def plain(text: str) -> str:
    """``text`` without terminal colour codes and control characters."""
    if "\x1b" in text:
        text = _ANSI.sub("", text)
    return _CONTROLS.sub("", text)


def _short(value: Any, chars: int = NOTICE_CHARS) -> str:
    text = plain(value).strip() if isinstance(value, str) else ""
    return text if len(text) <= chars else text[: chars - 1] + "…"


def command_name(text: str) -> str | None:
    """The ``/name`` of a ``<command-name>`` record, remembered for the output that follows."""
    found = _COMMAND_NAME.search(text)
    if found is None or not found.group(1).strip():
        return None
    name = _short(found.group(1), 80)
    return name if name.startswith("/") else "/" + name


def command_output(text: str, command: str | None) -> str | None:
    """``/model: Kept model as Default`` for a ``<local-command-stdout>`` text; None when empty."""
    parts = [plain(m.group(2)).strip() for m in _STDOUT.finditer(text)]
    out = "\n".join(p for p in parts if p not in _NO_OUTPUT)
    if not out:
        return None
    return f"{command}: {out}" if command else out


def compaction_summary(text: str) -> str | None:
    """A compaction summary without Claude Code's fixed opening and closing sentences."""
    body = _without_outro(_COMPACT_INTRO.sub("", plain(text), count=1)).strip()
    return f"Compaction summary: {body}" if body else None


def _without_outro(text: str) -> str:
    r"""``text`` without the closing sentences, up to surrounding whitespace, by ``str.find``.

    It cuts where the pattern ``\s*(?:If you need specific details from before compaction.*?)?
    (?:Please continue … to work on\.)?\s*$`` (re.S; the tests hold it whole) would: that
    pattern can only match from the end of the text back to the first "If you
    need specific details…" (its ``.*?`` then reaches the end), else to a closing
    "Please continue…" that only whitespace follows, else to the trailing
    whitespace: the leftmost of these is where its match starts. Searching for it
    tried a match at every character (160 ns each: 0.1 CPU-s for the 42 summaries of
    the 446 MB bench, 2% of its cold index); the caller strips what is left.
    """
    end = len(text.rstrip())  # (``\s`` and ``str.isspace`` are the same characters)
    details = text.find(_OUTRO_DETAILS, 0, end)
    if details >= 0:
        return text[:details]
    for closing in _OUTRO_CLOSINGS:
        if text.endswith(closing, 0, end):
            return text[: end - len(closing)]
    return text[:end]


def ide_context(text: str) -> str | None:
    """``Opened in the IDE: /path`` (or the selection with its path) for an IDE context block."""
    found = []
    for m in _IDE_OPENED.finditer(text):
        if path := _short(m.group(1)):
            found.append(f"Opened in the IDE: {path}")
    for m in _IDE_SELECTION.finditer(text):
        if selected := plain(m.group(1)).strip():
            found.append(f"Selected in the IDE: {selected}")
    return "\n".join(found) or None


def task_notification(text: str) -> str | None:
    """A background task's notification: its summary line and result."""
    found = []
    for m in _TASK.finditer(text):
        fields = {k: plain(v).strip() for k, v in _TASK_FIELD.findall(m.group(1))}
        line = "\n".join(v for v in (fields.get("summary"), fields.get("result")) if v)
        if line:
            found.append(line)
    return "\n".join(found) or None


def is_ide_context(text: str) -> bool:
    return text.lstrip().startswith(("<ide_opened_file>", "<ide_selection>"))


def is_task_notification(text: str) -> bool:
    return text.lstrip().startswith("<task-notification>")


def is_command_output(text: str) -> bool:
    return text.lstrip().startswith(("<local-command-stdout>", "<local-command-stderr>"))


def system_notice(record: Record, command: str | None) -> tuple[str, str] | None:
    """``(type, text)`` of the message a ``system`` record showed, or None for machinery
    (``turn_duration``, ``session_start``, a 1.0.x "Running …" line, a compaction boundary)."""
    subtype = record.subtype
    content = record.content if isinstance(record.content, str) else ""
    if subtype == "away_summary":
        text = plain(content).strip()
        return ("summary", f"Away summary: {text}") if text else None
    if subtype == "local_command":
        out = command_output(content, command)
        return ("text", out) if out else None
    if subtype in ("api_error", "error"):
        return "text", _error_text(record)
    if subtype == "stop_hook_summary":
        hooks = _stop_hooks(record)
        return ("text", hooks) if hooks else None
    if subtype in ("compact_boundary", "turn_duration", "session_start") or record.isMeta:
        return None
    if subtype in ("api_refusal", "model_refusal_fallback"):
        why = _short(record.apiRefusalExplanation) or _short(content)
        return "text", f"Refused: {why}" if why else "Refused"
    text = plain(content).strip()
    if not text or _RUNNING.match(text):
        return None
    return "text", text  # 1.0.x hook notes ("PostToolUse:Edit [uv run ruff format] completed …"), warnings, new kinds


def _error_text(record: Record) -> str:
    """``API error: Overloaded (retry 2 of 10)``: the message a person saw, as far as the record keeps it."""
    message = _error_message(record.error)
    label = "API error" if record.subtype == "api_error" else "Error"
    text = f"{label}: {message}" if message else label
    attempt, most = record.retryAttempt, record.maxRetries
    if isinstance(attempt, int) and not isinstance(attempt, bool) and attempt > 0:
        text += f" (retry {attempt} of {most})" if isinstance(most, int) and not isinstance(most, bool) else f" (retry {attempt})"
    return text


def _error_message(error: Any, depth: int = 0) -> str:
    if isinstance(error, str):
        return _short(error)
    if not isinstance(error, dict) or depth > 4:
        return ""
    for key in ("message", "formatted"):
        if text := _short(error.get(key)):
            return text
    nested = _error_message(error.get("error"), depth + 1)
    if nested:
        return nested
    status = error.get("status")
    kind = _short(error.get("type"), 80)
    if isinstance(status, int) and not isinstance(status, bool) and status:
        return f"{status} {kind}".strip()
    return kind


def _stop_hooks(record: Record) -> str | None:
    """The commands the Stop hooks ran, their errors, and why they stopped the turn."""
    infos = record.hookInfos if isinstance(record.hookInfos, list) else []
    commands = [c for c in (_short(i.get("command")) for i in infos if isinstance(i, dict)) if c]
    errors = [e for e in (_short(x) for x in (record.hookErrors if isinstance(record.hookErrors, list) else ())) if e]
    reason = _short(record.stopReason)
    if not (commands or errors or reason):
        return None
    text = "Stop hooks ran: " + "; ".join(commands) if commands else "Stop hooks"
    if errors:
        text += "\nHook errors: " + "\n".join(errors)
    if reason:
        text += f"\nStopped: {reason}"
    return text


def hook_notice(raw: msgspec.Raw) -> str | None:
    """A hook ``attachment``'s notice (blocking error, non-blocking error, success, added
    context), or None for every other attachment (file contents, reminders, listings)."""
    if b'"hook_' not in bytes(raw):  # (most attachments: no decode at all)
        return None
    try:
        found = decode_any(raw)
    except DECODE_ERRORS:
        return None
    if not isinstance(found, dict):
        return None
    kind = found.get("type")
    name = _short(found.get("hookName"), 120) or _short(found.get("hookEvent"), 120) or "hook"
    command = _short(found.get("command"))
    if kind == "hook_blocking_error":
        blocking = found.get("blockingError")
        if isinstance(blocking, dict):
            command = command or _short(blocking.get("command"))
            blocking = blocking.get("blockingError")
        text = f"{name} hook blocked: {_short(blocking) or 'error'}"
    elif kind == "hook_non_blocking_error":
        detail = _short(found.get("stderr")) or _short(found.get("stdout"))
        text = f"{name} hook error: {detail}" if detail else f"{name} hook error"
    elif kind == "hook_success":
        out = _short(found.get("content")) or _short(found.get("stdout"))
        if out in _NO_OUTPUT and not command:
            return None
        text = f"{name} hook" + (f": {out}" if out not in _NO_OUTPUT else " ran")
    elif kind == "hook_additional_context":
        context = found.get("content")
        lines = context if isinstance(context, list) else [context]
        added = "\n".join(t for t in (_short(x) for x in lines) if t)
        return f"{name} hook added: {added}" if added else None
    else:
        return None
    return f"{text} ({command})" if command else text
