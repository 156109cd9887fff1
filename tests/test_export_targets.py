"""Where ``export`` may write, and what a failed write leaves (issue 37 items 7 and 8),
through the CLI subprocess and the app's export dialog (Pilot).

Item 7: ``export -o /dev/null --force`` as root replaced the device with a file. Only a
regular file (or a symlink to one, which is replaced, never written through) or a new
path is written; a FIFO, a device, a directory, or a symlink to one is refused with one
line, ``--force`` or not. The device here is made with ``mknod`` in a temporary
directory (the real ``/dev/null`` is never touched).

Item 8: a full disk left a 4,096-byte file at the target (the retry then said "already
exists") and printed ``unexpected error: OSError``; a read-only place named the hidden
temporary file. Now: one line naming the target, and nothing left behind.
"""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest
from textual.widgets import Input, OptionList

from core.fixtures.demo import DEFAULT_NOW
from tui.app import make_app
from tui.screens.export_dialog import ExportScreen
from tui.testing import settle, wait_for

from .hostile_support import run_cli
from .test_export_safety import SLUG, write_home
from .test_tui import SIZE

REGULAR_ONLY = "not a regular file; export writes only to regular files or new paths"


@pytest.fixture(scope="module")
def home(tmp_path_factory) -> Path:
    return write_home(tmp_path_factory.mktemp("export-targets"))


def export(home: Path, cwd: Path, *args: str) -> subprocess.CompletedProcess:
    return run_cli(home, "export", SLUG, *args, cwd=cwd)  # (run_cli: never a traceback, never "unexpected error")


def one_line(proc: subprocess.CompletedProcess) -> str:
    stderr = proc.stderr.decode()
    assert proc.returncode == 1 and proc.stdout == b"" and stderr.count("\n") == 1, (proc.returncode, stderr)
    return stderr


def make_node(where: Path, kind: str) -> tuple[Path, int]:
    """At ``where/SLUG.md`` (the name ``export SLUG`` writes): a FIFO, a character device
    (what /dev/null is), a directory, or a symlink to one of these; with the kind of node
    it must still be after the export."""
    at = where / f"{SLUG}.md"
    node = where / f"real-{kind.removeprefix('link to ')}" if kind.startswith("link to ") else at
    if kind.endswith("fifo"):
        os.mkfifo(node)
    elif kind.endswith("device"):
        try:
            os.mknod(node, stat.S_IFCHR | 0o666, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("mknod needs root (CAP_MKNOD)")
    else:
        node.mkdir()
    if node != at:
        at.symlink_to(node)
        return at, stat.S_IFLNK
    return at, stat.S_IFMT(os.lstat(at).st_mode)


KINDS = ["fifo", "device", "directory", "link to fifo", "link to device", "link to directory"]


# --- item 7: only regular files or new paths --------------------------------------------------


@pytest.mark.parametrize("force", [["--force"], []], ids=["force", "no-force"])
@pytest.mark.parametrize("kind", KINDS)
def test_export_never_replaces_a_fifo_a_device_or_a_directory(home: Path, tmp_path: Path, kind: str, force: list[str]) -> None:
    target, node_kind = make_node(tmp_path, kind)
    before = sorted(os.listdir(tmp_path))
    for output in ([], ["-o", str(target)]):  # the default name, and the name given with -o (as /dev/null was)
        if output and "directory" in kind:
            continue  # (-o DIR means "into DIR")
        line = one_line(export(home, tmp_path, *output, *force))
        why = "is a directory; not replacing it" if "directory" in kind else REGULAR_ONLY
        assert line.startswith(f"relay-search: {target} is ") and why in line, line
        assert stat.S_IFMT(os.lstat(target).st_mode) == node_kind
        assert sorted(os.listdir(tmp_path)) == before  # (no hidden temporary file left)
    if kind.startswith("link to "):
        assert os.readlink(target).endswith(kind.removeprefix("link to "))


def test_force_still_replaces_a_regular_file_and_a_symlink_to_one(home: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine.md"
    mine.write_text("old")
    kept = tmp_path / "kept.md"
    kept.write_text("the link's target")
    link = tmp_path / "link.md"
    link.symlink_to(kept)
    for path in (mine, link):
        assert "already exists; give --force" in one_line(export(home, tmp_path, "-o", str(path)))
        assert export(home, tmp_path, "-o", str(path), "--force").returncode == 0
        assert not path.is_symlink() and "run the three checks" in path.read_text()
    assert kept.read_text() == "the link's target"  # (the link was replaced, not written through)
    longest = tmp_path / ("é" * 125 + ".md")  # 253 bytes: the temporary file beside it must fit too
    for force in ([], ["--force"]):
        assert export(home, tmp_path, "-o", str(longest), *force).returncode == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(["kept.md", "link.md", "mine.md", longest.name])


# --- item 8: a failed write leaves nothing ----------------------------------------------------


def fill(disk: Path) -> None:
    """Fill ``disk`` to the last block: any export's write then fails with ENOSPC."""
    fd = os.open(disk / "filler", os.O_WRONLY | os.O_CREAT)
    try:
        while os.write(fd, b"\0" * 4096):
            pass
    except OSError:
        pass
    finally:
        os.close(fd)


@pytest.mark.parametrize("fmt", ["html", "md", "json"])
def test_a_full_disk_is_one_line_naming_the_target_and_leaves_nothing(home: Path, tiny_disk: Path, fmt: str) -> None:
    fill(tiny_disk)
    target = tiny_disk / f"out.{fmt}"
    for force in ([], ["--force"]):
        line = one_line(export(home, tiny_disk, "--format", fmt, "-o", str(target), *force))
        assert line == f"relay-search: cannot write {target}: No space left on device; nothing was written\n"
        assert sorted(os.listdir(tiny_disk)) == ["filler"]  # (no partial file, no hidden temporary file)
    line = one_line(export(home, tiny_disk, "--format", fmt, "-o", f"{tiny_disk}/chain/"))  # a file per session
    assert "No space left on device; nothing was written" in line and sorted(os.listdir(tiny_disk)) == ["filler"]
    (tiny_disk / "filler").unlink()
    done = export(home, tiny_disk, "--format", fmt, "-o", str(target))  # the retry is not told "already exists"
    assert done.returncode == 0 and target.stat().st_size > 0, done.stderr


def test_a_read_only_place_is_one_line_naming_the_target(home: Path, tiny_disk: Path) -> None:
    existing = tiny_disk / "old.md"
    existing.write_text("old")
    made = subprocess.run(["mount", "-o", "remount,ro", str(tiny_disk)], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot remount read-only: {made.stderr.strip()}")
    for target, force in ((tiny_disk / "new.md", []), (existing, ["--force"])):
        line = one_line(export(home, tiny_disk, "-o", str(target), *force))
        assert line == f"relay-search: cannot write {target}: Read-only file system; nothing was written\n"
    line = one_line(export(home, tiny_disk, "-o", f"{tiny_disk}/sub/dir/"))
    assert line == f"relay-search: cannot create {tiny_disk}/sub/dir: Read-only file system; nothing was written\n"
    assert sorted(os.listdir(tiny_disk)) == ["old.md"] and existing.read_text() == "old"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a mode-555 directory")
def test_an_unwritable_directory_is_one_line_naming_the_target(home: Path, tmp_path: Path) -> None:
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "old.md").write_text("old")
    locked.chmod(0o555)
    try:
        for target, force in ((locked / "new.md", []), (locked / "old.md", ["--force"])):
            line = one_line(export(home, tmp_path, "-o", str(target), *force))
            assert line == f"relay-search: cannot write {target}: Permission denied; nothing was written\n"
        assert sorted(os.listdir(locked)) == ["old.md"]
    finally:
        locked.chmod(0o755)


async def test_the_app_export_dialog_says_the_same_line_on_a_full_disk(tmp_path: Path, tiny_disk: Path, monkeypatch) -> None:
    home = write_home(tmp_path / "home")
    monkeypatch.chdir(tmp_path)
    fill(tiny_disk)
    app = make_app(home, now=DEFAULT_NOW)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.main.sessions_pane.session_list.focus()
        await pilot.press("E")
        await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen), what="the export dialog")
        screen = app.screen
        screen.query_one("#export-dir", Input).value = str(tiny_disk)
        screen.query_one(OptionList).focus()
        await pilot.press("enter")  # Markdown: a file per session of the chain, and an index
        status = screen.query_one("#export-status")
        await wait_for(pilot, lambda: "Not exported" in str(status.render()), what="the error")
        text = str(status.render())
        assert "No space left on device; nothing was written" in text and str(tiny_disk) in text and ".tmp" not in text
        assert sorted(os.listdir(tiny_disk)) == ["filler"]
