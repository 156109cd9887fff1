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
Only a regular file (or a symlink to one, or to nothing) is ever replaced: a
directory, a device (``/dev/null``), a FIFO or a socket at that name, or a symlink
to one, is refused with one line, ``--force`` or not. Each file is written whole
beside the target first, then linked to its name (so one that appears meanwhile is
not overwritten) or, with ``force``, renamed over it, which replaces a symlink at
that name rather than writing through it. A write that fails (a full disk, a
read-only place) is one line naming the target, and leaves nothing behind: no
partial file, no temporary file, none of a directory export's other files.

A transcript's control characters (``ESC ]52;…`` writes a terminal's clipboard, ``ESC
[2J`` clears it, ``0x9b`` is a C1 CSI) never reach a file as they are: Markdown, which
a user may ``cat``, shows them as ``core.words.visible`` does (``␛``, ``␡``, ``<9B>``);
HTML the same, ``<9B>`` as text; JSON escapes them (``\u001b``, ``\u009b``).
"""

from __future__ import annotations

import errno
import os
import re
import secrets
import stat
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from html import escape
from pathlib import Path

from core.errors import BadInput, OutOfSpace, RelayError
from core.words import visible

from . import document, html, jsonfmt, markdown

FORMATS: dict[str, Callable[..., str]] = {"md": markdown.render, "html": html.render, "json": jsonfmt.render}
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")
_C1 = re.compile("[\x7f-\x9f]")  # JSON leaves DEL and C1 as they are (C0 it escapes)
_JSON_C1 = {c: f"\\u{c:04x}" for c in range(0x7F, 0xA0)}
_HTML_C1 = {c: f"&lt;{c:02X}&gt;" for c in range(0x80, 0xA0)}


def inert(fmt: str, text: str) -> str:
    """A rendered export with its control characters shown (md, html) or escaped (json)."""
    if fmt == "json":
        return text.translate(_JSON_C1) if _C1.search(text) else text
    if fmt == "html" and _C1.search(text):
        text = text.translate(_HTML_C1)  # <9B> as text, not a tag's start
    return visible(text)


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
    render = _shown(FORMATS[fmt], fmt)
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
        with _all_or_nothing(folder, [*paths, index]) as done:
            written = []
            for info, path in zip(sessions, paths, strict=True):
                doc = document.build(archive, ref, sessions=(info,), turn=turn)
                write_new(path, render(doc, thinking=thinking), force)
                written.append((info, path))
                done.append(path)
            write_new(index, inert(fmt, _index(fmt, ref, written)), force)
        return Exported(tuple(p for _, p in written) + (index,), len(sessions))
    refuse_existing([target], force)
    doc = document.build(archive, ref, sessions=sessions, turn=turn)
    with _all_or_nothing(target.parent, [target]):
        write_new(target, render(doc, thinking=thinking), force)
    return Exported((target,), len(sessions))


def _shown(render: Callable[..., str], fmt: str) -> Callable[..., str]:
    return lambda doc, **kw: inert(fmt, render(doc, **kw))


@contextmanager
def _all_or_nothing(folder: Path, paths: list[Path]) -> Iterator[list[Path]]:
    """Make ``folder`` (and its missing parents); if writing ``paths`` then fails, remove
    those the caller wrote (it appends them to the list yielded) that were new, and the
    folders made here: nothing is left behind."""
    new = [p for p in paths if not os.path.lexists(p)]
    made: list[Path] = []
    try:
        for parent in reversed([folder, *folder.parents]):
            if not os.path.lexists(parent):
                os.mkdir(parent)
                made.append(parent)
    except OSError as exc:
        _remove_dirs(made)
        raise BadInput(f"cannot create {folder}: {exc.strerror or type(exc).__name__}; nothing was written") from None
    done: list[Path] = []
    try:
        yield done
    except BaseException:
        for path in done:
            if path in new:
                _remove(path)
        _remove_dirs(made)
        raise


def _remove_dirs(made: list[Path]) -> None:
    for folder in reversed(made):
        try:
            os.rmdir(folder)
        except OSError:
            return


def _session_file(info, fmt: str) -> str:
    if info.slug:
        return f"{_safe(info.slug or info.session_id)}-s{info.session_number or 1}.{fmt}"
    return f"{_safe(info.session_id)}.{fmt}"


def refuse_existing(paths: Iterable[Path], force: bool) -> None:
    """One line naming ``--force`` when any of ``paths`` exists (a symlink counts, even
    dangling); one line refusing, whatever ``force`` says, when one is not a regular file."""
    taken = []
    for path in paths:
        if os.path.lexists(path):
            _check_replaceable(path)
            taken.append(path)
    if taken and not force:
        raise Exists(taken[0], len(taken) - 1)


def _check_replaceable(path: Path) -> None:
    """Refuse ``path`` unless it is new, a regular file, or a symlink to one (or to nothing):
    a directory, a device (``/dev/null``), a FIFO or a socket is never replaced (issue 37 item 7)."""
    try:
        mode = os.lstat(path).st_mode
        if stat.S_ISLNK(mode):
            mode = os.stat(path).st_mode  # (the link itself is replaced; what it points at decides)
    except FileNotFoundError:
        return  # (new, or a dangling symlink)
    except OSError as exc:
        raise _cannot_write(path, exc) from None
    if stat.S_ISREG(mode):
        return
    if stat.S_ISDIR(mode):
        raise BadInput(f"{path} is a directory; not replacing it")
    kind = "a FIFO" if stat.S_ISFIFO(mode) else "a socket" if stat.S_ISSOCK(mode) else "a device"
    raise BadInput(f"{path} is {kind}, not a regular file; export writes only to regular files or new paths")


def _cannot_write(path: Path, exc: OSError) -> RelayError:
    """One line naming ``path`` (never a temporary file's name) and why it failed."""
    reason = exc.strerror or type(exc).__name__
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return OutOfSpace(f"cannot write {path}: {reason}; nothing was written")
    return BadInput(f"cannot write {path}: {reason}; nothing was written")


def write_new(path: Path, text: str, force: bool) -> None:
    """Write ``text`` to ``path`` whole or not at all, without following a symlink there;
    replace only with ``force``, and only a regular file (:func:`_check_replaceable`).

    The text goes to a hidden file beside ``path`` first, which is then linked to the
    name (``O_EXCL``-like: a file that appeared meanwhile is not overwritten) or, with
    ``force``, renamed over it. A failed write (a full disk, no permission) leaves
    nothing behind, so a retry is not told the file "already exists" (issue 37 item 8).
    """
    data = text.encode("utf-8")
    if force:
        _check_replaceable(path)
    stem = path.name
    while len(stem.encode("utf-8", "surrogateescape")) > 200:  # (room for the rest within 255 bytes)
        stem = stem[:-1]
    temp = path.with_name(f".{stem}.{secrets.token_hex(4)}.tmp")
    try:
        _write_file(temp, data)
        try:
            if force:
                _check_replaceable(path)  # (again: something may have appeared meanwhile)
                os.replace(temp, path)  # renames over the name: a symlink there is replaced, its target untouched
                return
            try:
                os.link(temp, path)
            except FileExistsError:
                raise Exists(path) from None
            except OSError as exc:
                if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK):
                    raise
                _write_exclusive(path, data)  # (a filesystem without hard links)
        finally:
            _remove(temp)
    except OSError as exc:
        raise _cannot_write(path, exc) from None


def _write_file(path: Path, data: bytes) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o666)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())  # (a full disk may only say so here)
    except BaseException:
        _remove(path)
        raise


def _write_exclusive(path: Path, data: bytes) -> None:
    try:
        _write_file(path, data)
    except FileExistsError:
        raise Exists(path) from None


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


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
