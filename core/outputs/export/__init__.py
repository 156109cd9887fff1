"""Exporting conversations to files: Markdown, one self-contained HTML page, or JSON.

``export`` decides where files go and writes them; :mod:`.document` builds what
they contain once, and one module per format renders it. A reference may name a
session, a chain (all its sessions in one file), a range, or one turn. Given a
directory and several sessions, each session gets its own file plus an index
page linking them.

Files go to the current directory unless ``-o`` says otherwise, and never into an
agent's transcript folders unless ``-o`` names a place there explicitly: a
stray export beside the transcripts would be picked up as a session by tools
that scan those folders.

An export never clobbers: if any file it would write exists (a symlink at that
name included, dangling or not) nothing is written and one line names ``--force``.
A file is created with ``O_EXCL`` (so one that appears meanwhile is not
overwritten either); with ``force`` it is written beside the target and renamed
over it, which replaces a symlink at that name rather than writing through it.
"""

from __future__ import annotations

import os
import re
import secrets
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from html import escape
from pathlib import Path

from core.errors import BadInput

from . import document, html, jsonfmt, markdown

FORMATS: dict[str, Callable[..., str]] = {"md": markdown.render, "html": html.render, "json": jsonfmt.render}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


class Exists(BadInput):
    """A file the export would write exists (``path``): nothing was written."""

    def __init__(self, path: Path, others: int = 0) -> None:
        more = f" (and {others} more)" if others else ""
        super().__init__(f"{path}{more} already exists; give --force to replace it")
        self.path = path


@dataclass(frozen=True, slots=True)
class Exported:
    files: tuple[Path, ...]  # what was written (the index page last, if any)
    sessions: int

    def describe(self) -> str:
        if len(self.files) == 1:
            return f"exported {self.sessions} session{'s' if self.sessions != 1 else ''} to {self.files[0]}"
        return f"exported {self.sessions} sessions to {len(self.files) - 1} files; index: {self.files[-1]}"


def export(
    archive: document.Reader,
    ref: str,
    *,
    fmt: str = "md",
    output: str | None = None,
    thinking: bool = False,
    cwd: Path,
    transcript_roots: Iterable[Path] = (),
    force: bool = False,
) -> Exported:
    if fmt not in FORMATS:
        raise BadInput(f"format must be one of {', '.join(FORMATS)}")
    render = FORMATS[fmt]
    resolved = archive.resolve(ref)
    sessions, turn = resolved.sessions, resolved.turn
    base = _base_name(resolved)
    if output is None:
        _refuse_transcript_dir(cwd, transcript_roots)
        target, as_dir = cwd / f"{base}.{fmt}", False
    else:
        out = Path(output).expanduser()
        out = out if out.is_absolute() else cwd / out
        as_dir = output.endswith(("/", "\\")) or out.is_dir()
        target = out / f"{base}.{fmt}" if as_dir else out
    if as_dir and len(sessions) > 1:
        folder = target.parent
        paths = [folder / _session_file(info, fmt) for info in sessions]
        index = folder / f"index.{fmt}"
        refuse_existing([*paths, index], force)
        folder.mkdir(parents=True, exist_ok=True)
        written = []
        for info, path in zip(sessions, paths, strict=True):
            doc = document.build(archive, ref, sessions=(info,), turn=turn)
            write_new(path, render(doc, thinking=thinking), force)
            written.append((info, path))
        write_new(index, _index(fmt, ref, written), force)
        return Exported(tuple(p for _, p in written) + (index,), len(sessions))
    refuse_existing([target], force)
    doc = document.build(archive, ref, sessions=sessions, turn=turn)
    target.parent.mkdir(parents=True, exist_ok=True)
    write_new(target, render(doc, thinking=thinking), force)
    return Exported((target,), len(sessions))


def _session_file(info, fmt: str) -> str:
    if info.slug:
        return f"{_safe(info.slug or info.session_id)}-s{info.session_number or 1}.{fmt}"
    return f"{_safe(info.session_id)}.{fmt}"


def refuse_existing(paths: Iterable[Path], force: bool) -> None:
    """One line naming ``--force`` when any of ``paths`` exists (a symlink counts, even dangling)."""
    if force:
        return
    taken = [p for p in paths if os.path.lexists(p)]
    if taken:
        raise Exists(taken[0], len(taken) - 1)


def write_new(path: Path, text: str, force: bool) -> None:
    """Write ``text`` to ``path`` without following a symlink there; replace only with ``force``."""
    data = text.encode("utf-8")
    if not force:
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
        except FileExistsError:
            raise Exists(path) from None
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        return
    if os.path.isdir(path) and not os.path.islink(path):
        raise BadInput(f"{path} is a directory; not replacing it")
    temp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.tmp")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(temp, path)  # renames over the name: a symlink there is replaced, its target untouched
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise


def _base_name(resolved) -> str:
    first = resolved.sessions[0]
    if first.slug and not resolved.single:
        base = first.slug
        numbers = [s.session_number or 1 for s in resolved.sessions]
        if len(resolved.sessions) != len(resolved.chain):
            base += f"-s{numbers[0]}" + (f"-{numbers[-1]}" if len(numbers) > 1 else "")
    else:
        base = first.session_id
    if resolved.turn is not None:
        base += f"-turn-{resolved.turn}"
    return _safe(base)


def _safe(name: str) -> str:
    return _UNSAFE.sub("_", name).strip("._") or "export"


def _refuse_transcript_dir(cwd: Path, roots: Iterable[Path]) -> None:
    here = cwd.resolve()
    for root in roots:
        try:
            root = root.resolve()
        except (OSError, RuntimeError):  # (a symlink loop: RuntimeError up to Python 3.12)
            continue
        if here == root or root in here.parents:
            raise BadInput(f"the current directory is inside the transcripts ({root}); "
                           "give -o FILE|DIR to export there or elsewhere")


def _index(fmt: str, ref: str, written: list) -> str:
    """The page linking a directory export's files."""
    if fmt == "json":
        import json

        rows = [{"session_id": i.session_id, "session_number": i.session_number, "file": p.name, "turns": i.turn_count,
                 "first_timestamp": i.first_timestamp, "last_timestamp": i.last_timestamp, "summary": i.summary}
                for i, p in written]
        return json.dumps({"ref": ref, "files": rows}, ensure_ascii=False, indent=1) + "\n"
    if fmt == "md":
        lines = [f"# {markdown.neutral(ref)}", ""]
        for info, path in written:
            summary = markdown.neutral(" ".join(info.summary[:120].split()))
            started = document.when(info.first_timestamp)
            lines.append(f"- [Session {info.session_number or 1}](<{path.name}>) · {started} · "
                         f"{info.turn_count} turns — {summary}")
        return "\n".join(lines) + "\n"
    items = "\n".join(
        f'<li><a href="{escape(path.name)}">Session {info.session_number or 1}</a> · '
        f"{escape(document.when(info.first_timestamp))} · "
        f"{info.turn_count} turns — {escape(info.summary[:160])}</li>"
        for info, path in written
    )
    return (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{escape(ref)}</title>\n'
        f"<style>{html.CSS}</style>\n</head>\n<body>\n<header><h1>{escape(ref)}</h1></header>\n<main><ul>\n{items}\n</ul></main>\n</body>\n</html>\n"
    )
