"""``core.outputs.export.export`` in-process: where the files go, their names, the index
page of a directory export, and the refusals (a file there, the transcript folders).

tests/test_export.py and tests/test_export_safety.py check the same through the CLI;
these run in the test process, so a mutation tool sees them (bench/MUTATION.md).
"""

from __future__ import annotations

import errno
import json
import os
import re
import resource
import signal
import time
from pathlib import Path

import pytest
from msgspec.structs import replace

from core.errors import BadInput, NotFound
from core.model import SessionInfo
from core.outputs import export as ex
from core.outputs.export import document, html, jsonfmt, markdown

from .support import open_archive
from .test_export_safety import SID, SID2, SLUG, rec, write_home

FOUR = "four-part-chain"
SIDS4 = [f"abcdef1{i}-1111-4222-8333-444444444444" for i in (1, 2, 3, 4)]
STAMP = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00")


def write_four(home: Path) -> None:
    """A chain of four sessions, each answer with its thinking, under a title that is not ASCII."""
    project = home / ".claude" / "projects" / "-home-t-work-exp"
    for i, sid in enumerate(SIDS4, start=1):
        p = sid[:8]
        lines = [rec("user", 0, None, f"question {i}", sid=sid, minute=i, slug=FOUR),
                 rec("assistant", 1, f"{p}-u0", [{"type": "thinking", "thinking": f"pondering {i}"},
                                                 {"type": "text", "text": f"answer {i}"}], sid=sid, minute=i, slug=FOUR),
                 {"type": "custom-title", "customTitle": f"Titel ü {i}", "sessionId": sid}]  # fmt: skip
        (project / f"{sid}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in lines))


@pytest.fixture(scope="module")
def archive(tmp_path_factory):
    home = write_home(tmp_path_factory.mktemp("export-files"))
    write_four(home)
    with open_archive(home) as a:
        yield a


def same_but_time(a: str, b: str) -> bool:
    return STAMP.sub("T", a) == STAMP.sub("T", b)


@pytest.mark.parametrize(
    ("ref", "name", "sessions"),
    [
        (SID, f"{SID}.md", 1),
        (SID2[:8], f"{SID2}.md", 1),
        (f"{SID}:0", f"{SID}-turn-0.md", 1),
        (SLUG, f"{SLUG}.md", 2),
        (f"{SLUG}#1-2", f"{SLUG}.md", 2),
        (f"{SLUG}#2", f"{SLUG}-s2.md", 1),
        (f"{SLUG}#1", f"{SLUG}-s1.md", 1),
        (f"{SLUG}#2:0", f"{SLUG}-s2-turn-0.md", 1),
        (f"{FOUR}#1-2", f"{FOUR}-s1-2.md", 2),
        (f"{FOUR}#2-3", f"{FOUR}-s2-3.md", 2),
        (f"{FOUR}#3", f"{FOUR}-s3.md", 1),
        (f"{FOUR}#1-3", f"{FOUR}-s1-3.md", 3),
        (FOUR, f"{FOUR}.md", 4),
    ],
)
def test_one_file_in_the_current_directory_named_for_the_reference(archive, tmp_path: Path, ref, name, sessions):
    done = ex.export(archive, ref, cwd=tmp_path)
    assert done == ex.Exported((tmp_path / name,), sessions)
    assert [p.name for p in tmp_path.iterdir()] == [name]
    assert same_but_time((tmp_path / name).read_text(), markdown.render(document.build(archive, ref)))
    s = "s" if sessions > 1 else ""
    assert done.describe() == f"exported {sessions} session{s} to {tmp_path / name}"


@pytest.mark.parametrize(("fmt", "render"), [("html", html.render), ("json", jsonfmt.render), ("md", markdown.render)])
def test_each_format_and_thinking_reach_the_renderer(archive, tmp_path: Path, fmt, render):
    done = ex.export(archive, SID, fmt=fmt, thinking=True, cwd=tmp_path)
    assert done.files == (tmp_path / f"{SID}.{fmt}",)
    assert same_but_time(done.files[0].read_text(), render(document.build(archive, SID), thinking=True))
    assert (done.files[0].stat().st_mode & 0o777) == 0o666 & ~_umask()


def _umask() -> int:
    old = os.umask(0)
    os.umask(old)
    return old


def test_a_bad_format_is_refused(archive, tmp_path: Path):
    with pytest.raises(BadInput) as err:
        ex.export(archive, SID, fmt="pdf", cwd=tmp_path)
    assert str(err.value) == "format must be one of md, html, json"
    assert list(tmp_path.iterdir()) == []


def test_output_names_a_file_or_a_directory(archive, tmp_path: Path):
    assert ex.export(archive, SID, output="a/b/x.txt", cwd=tmp_path).files == (tmp_path / "a/b/x.txt",)
    assert ex.export(archive, SID, output=str(tmp_path / "abs.md"), cwd=tmp_path / "elsewhere").files == (
        tmp_path / "abs.md",
    )
    (tmp_path / "there").mkdir()
    assert ex.export(archive, SID, output="there", cwd=tmp_path).files == (tmp_path / "there" / f"{SID}.md",)
    assert ex.export(archive, SID, output="new/", cwd=tmp_path).files == (tmp_path / "new" / f"{SID}.md",)
    assert ex.export(archive, SID, output="win\\", cwd=tmp_path).files == (tmp_path / "win\\" / f"{SID}.md",)
    # several sessions into a file: one file
    assert ex.export(archive, SLUG, output="chain.md", cwd=tmp_path).files == (tmp_path / "chain.md",)


def test_home_in_output_is_expanded(archive, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "h"))
    assert ex.export(archive, SID, output="~/x.md", cwd=tmp_path).files == (tmp_path / "h" / "x.md",)


def test_a_directory_and_several_sessions_give_a_file_each_and_an_index(archive, tmp_path: Path):
    done = ex.export(archive, SLUG, output="dir/", cwd=tmp_path, thinking=True)
    folder = tmp_path / "dir"
    assert done == ex.Exported((folder / f"{SLUG}-s1.md", folder / f"{SLUG}-s2.md", folder / "index.md"), 2)
    assert done.describe() == f"exported 2 sessions to 2 files; index: {folder / 'index.md'}"
    for info, path in zip(archive.resolve(SLUG).sessions, done.files, strict=False):
        doc = document.build(archive, SLUG, sessions=(info,))
        assert same_but_time(path.read_text(), markdown.render(doc, thinking=True))
    summary = "&lt;script>alert('title')&lt;/script> plan"
    assert (folder / "index.md").read_text() == (
        f"# {SLUG}\n\n"
        f"- [Session 1](<{SLUG}-s1.md>) · 2026-10-01 10:00 UTC · 1 turns — {summary}\n"
        f"- [Session 2](<{SLUG}-s2.md>) · 2026-10-02 10:00 UTC · 1 turns — {summary}\n"
    )


def test_the_html_and_json_index_pages(archive, tmp_path: Path):
    done = ex.export(archive, SLUG, fmt="html", output="h/", cwd=tmp_path)
    summary = "&lt;script&gt;alert(&#x27;title&#x27;)&lt;/script&gt; plan"
    assert done.files[-1].read_text() == (
        f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n<title>{SLUG}</title>\n'
        f"<style>{html.CSS}</style>\n</head>\n<body>\n<header><h1>{SLUG}</h1></header>\n<main><ul>\n"
        f'<li><a href="{SLUG}-s1.html">Session 1</a> · 2026-10-01 10:00 UTC · 1 turns — {summary}</li>\n'
        f'<li><a href="{SLUG}-s2.html">Session 2</a> · 2026-10-02 10:00 UTC · 1 turns — {summary}</li>\n'
        "</ul></main>\n</body>\n</html>\n"
    )
    done = ex.export(archive, SLUG, fmt="json", output="j", cwd=tmp_path)  # no slash: a new name is a file
    assert done.files == (tmp_path / "j",)
    (tmp_path / "jd").mkdir()
    done = ex.export(archive, SLUG, fmt="json", output="jd", cwd=tmp_path)
    text = done.files[-1].read_text()
    assert text.startswith('{\n "ref": "brave-quiet-export",\n') and text.endswith("}\n")
    row = {"turns": 1, "summary": "<script>alert('title')</script> plan"}
    assert json.loads(text) == {"ref": SLUG, "files": [
        {"session_id": SID, "session_number": 1, "file": f"{SLUG}-s1.json", **row,
         "first_timestamp": "2026-10-01T10:00:00.000Z", "last_timestamp": "2026-10-01T10:00:09.000Z"},
        {"session_id": SID2, "session_number": 2, "file": f"{SLUG}-s2.json", **row,
         "first_timestamp": "2026-10-02T10:00:00.000Z", "last_timestamp": "2026-10-02T10:00:09.000Z"},
    ]}  # fmt: skip


def test_an_index_cuts_and_flattens_summaries_and_numbers_sessions(tmp_path: Path):
    def info(number, summary):
        return SessionInfo(session_id="x", agent="claude", project="p", cwd=None, git_branch=None, slug=None,
                           summary=summary, title=None, first_timestamp=None, last_timestamp=None, turn_count=3,
                           message_count=1, files=(), session_number=number)  # fmt: skip

    written = [(info(None, "a\n  <b> " + "y" * 200), tmp_path / "f.md")]
    assert ex._index("md", "r<", written) == f"# r&lt;\n\n- [Session 1](<f.md>) · ? · 3 turns — a &lt;b> {'y' * 112}\n"
    assert f"Session 1</a> · ? · 3 turns — a\n  &lt;b&gt; {'y' * 152}</li>" in ex._index("html", "r<", written)
    assert "<title>r&lt;</title>" in ex._index("html", "r<", written)


def test_session_file_names():
    def info(sid, slug, number):
        return SessionInfo(session_id=sid, agent="claude", project="p", cwd=None, git_branch=None, slug=slug,
                           summary="", title=None, first_timestamp=None, last_timestamp=None, turn_count=1,
                           message_count=1, files=(), session_number=number)  # fmt: skip

    assert ex._session_file(info("a/b", "my slug", 3), "md") == "my_slug-s3.md"
    assert ex._session_file(info("a/b", "s", None), "md") == "s-s1.md"
    assert ex._session_file(info("../a b", None, 2), "html") == "a_b.html"
    assert ex._safe("..x..") == "x" and ex._safe("__x__") == "x" and ex._safe("./.") == "export"
    assert ex._safe("a.b_c-D9") == "a.b_c-D9" and ex._safe("a//:b") == "a_b" and ex._safe("X-y.X") == "X-y.X"


def test_nothing_is_written_over_a_file_without_force(archive, tmp_path: Path):
    (tmp_path / f"{SID}.md").write_text("mine")
    with pytest.raises(ex.Exists) as err:
        ex.export(archive, SID, cwd=tmp_path)
    assert str(err.value) == f"{tmp_path / f'{SID}.md'} already exists; give --force to replace it"
    assert err.value.path == tmp_path / f"{SID}.md"
    assert (tmp_path / f"{SID}.md").read_text() == "mine"
    done = ex.export(archive, SID, cwd=tmp_path, force=True)
    assert done.files[0].read_text().startswith("# &lt;script")
    assert sorted(p.name for p in tmp_path.iterdir()) == [f"{SID}.md"]  # no temporary file left


def test_a_directory_export_refuses_before_writing_anything(archive, tmp_path: Path):
    folder = tmp_path / "d"
    folder.mkdir()
    (folder / "index.md").write_text("x")
    os.symlink(tmp_path / "nowhere", folder / f"{SLUG}-s2.md")  # dangling: it counts
    with pytest.raises(ex.Exists) as err:
        ex.export(archive, SLUG, output="d/", cwd=tmp_path)
    assert str(err.value) == f"{folder / f'{SLUG}-s2.md'} (and 1 more) already exists; give --force to replace it"
    assert sorted(p.name for p in folder.iterdir()) == [f"{SLUG}-s2.md", "index.md"]
    done = ex.export(archive, SLUG, output="d/", cwd=tmp_path, force=True)
    assert len(done.files) == 3 and not (folder / f"{SLUG}-s2.md").is_symlink()
    assert not (tmp_path / "nowhere").exists()


def test_write_new_never_follows_a_symlink(tmp_path: Path):
    ex.write_new(tmp_path / "forced", "x", True)
    assert ((tmp_path / "forced").stat().st_mode & 0o777) == 0o666 & ~_umask()
    (tmp_path / "forced").unlink()
    target = tmp_path / "target"
    target.write_text("keep")
    link = tmp_path / "link"
    os.symlink(target, link)
    with pytest.raises(ex.Exists) as err:
        ex.write_new(link, "new", False)
    assert err.value.path == link and str(err.value) == f"{link} already exists; give --force to replace it"
    ex.write_new(link, "new ü", True)
    assert (target.read_text(), link.is_symlink(), link.read_bytes()) == ("keep", False, "new ü".encode())
    ex.write_new(tmp_path / "fresh", "é", False)
    assert (tmp_path / "fresh").read_bytes() == "é".encode()
    (tmp_path / "dir").mkdir()
    with pytest.raises(BadInput) as err2:
        ex.write_new(tmp_path / "dir", "x", True)
    assert str(err2.value) == f"{tmp_path / 'dir'} is a directory; not replacing it"
    os.symlink(tmp_path / "dir", tmp_path / "dirlink")
    with pytest.raises(BadInput) as err3:  # a symlink to a directory is not a regular file either (issue 37 item 7)
        ex.write_new(tmp_path / "dirlink", "over", True)
    assert str(err3.value) == f"{tmp_path / 'dirlink'} is a directory; not replacing it"
    assert (tmp_path / "dirlink").is_symlink() and (tmp_path / "dir").is_dir()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dir", "dirlink", "fresh", "link", "target"]


def test_a_failed_write_leaves_no_temporary_file_and_the_old_one_whole(tmp_path: Path):
    """A write that fails midway (a file-size limit: EFBIG) removes its temporary file."""
    (tmp_path / "x.md").write_text("old")
    old_handler = signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limits = resource.getrlimit(resource.RLIMIT_FSIZE)
    resource.setrlimit(resource.RLIMIT_FSIZE, (100, limits[1]))
    try:
        with pytest.raises(BadInput) as err:
            ex.write_new(tmp_path / "x.md", "y" * 5000, True)
    finally:
        resource.setrlimit(resource.RLIMIT_FSIZE, limits)
        signal.signal(signal.SIGXFSZ, old_handler)
    assert str(err.value) == f"cannot write {tmp_path / 'x.md'}: {os.strerror(errno.EFBIG)}; nothing was written"
    assert [p.name for p in tmp_path.iterdir()] == ["x.md"] and (tmp_path / "x.md").read_text() == "old"


def test_refuse_existing_with_force_or_nothing_there(tmp_path: Path):
    (tmp_path / "a").write_text("")
    ex.refuse_existing([tmp_path / "a"], True)
    ex.refuse_existing([tmp_path / "b"], False)
    with pytest.raises(ex.Exists) as err:
        ex.refuse_existing([tmp_path / "b", tmp_path / "a"], False)
    assert str(err.value) == f"{tmp_path / 'a'} already exists; give --force to replace it"


def test_never_into_the_transcript_folders_unless_asked(archive, tmp_path: Path):
    root = tmp_path / "projects"
    inside = root / "p" / "q"
    inside.mkdir(parents=True)
    line = (f"the current directory is inside the transcripts ({root}); "
            "give -o FILE|DIR to export there or elsewhere")  # fmt: skip
    for cwd in (root, inside):
        with pytest.raises(BadInput) as err:
            ex.export(archive, SID, cwd=cwd, transcript_roots=[tmp_path / "gone", root])
        assert str(err.value) == line
    assert list(root.rglob("*.md")) == []
    assert ex.export(archive, SID, cwd=inside, output="x.md", transcript_roots=[root]).files == (inside / "x.md",)
    beside = tmp_path / "projects-2"
    beside.mkdir()
    assert ex.export(archive, SID, cwd=beside, transcript_roots=[root]).files == (beside / f"{SID}.md",)
    os.symlink(inside, tmp_path / "via")
    with pytest.raises(BadInput):
        ex.export(archive, SID, cwd=tmp_path / "via", transcript_roots=[tmp_path / "projects" / "." ])


def test_thinking_only_when_asked_for_in_one_file_and_in_a_directory(archive, tmp_path: Path):
    assert "pondering" not in ex.export(archive, SIDS4[0], cwd=tmp_path / "a").files[0].read_text()
    assert "pondering 1" in ex.export(archive, SIDS4[0], cwd=tmp_path / "b", thinking=True).files[0].read_text()
    plain = ex.export(archive, FOUR, output="c/", cwd=tmp_path)
    assert len(plain.files) == 5 and not any("pondering" in p.read_text() for p in plain.files)
    shown = ex.export(archive, FOUR, output="d/", cwd=tmp_path, thinking=True)
    assert [f"pondering {i}" in p.read_text() for i, p in enumerate(shown.files, start=1)] == [True] * 4 + [False]


def test_a_directory_export_makes_missing_parents_and_keeps_text_as_it_is(archive, tmp_path: Path):
    done = ex.export(archive, FOUR, fmt="json", output="x/y/z/", cwd=tmp_path)
    assert done.files[-1] == tmp_path / "x/y/z/index.json"
    text = done.files[-1].read_text()
    assert '"summary": "Titel ü 1"' in text and '"title": "Titel ü 1"' in done.files[0].read_text()


def test_build_keeps_usage_turn_and_titles_and_stamps_utc_seconds(archive):
    doc = document.build(archive, f"{SID}:0")
    assert doc.turn == 0 and [t.number for t in doc.sessions[0].turns] == [0]
    assert doc.sessions[0].usage == archive.session_usage(SID) and doc.sessions[0].usage is not None
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\+00:00", doc.exported_at)
    info = archive.resolve(SID).sessions[0]
    assert document.build(archive, SID, sessions=(replace(info, title=None),)).title == info.summary
    assert document.build(archive, SID, sessions=(replace(info, title="", summary=""),)).title == SID
    with pytest.raises(NotFound) as err:
        document.build(archive, SID, sessions=(info,), turn=5)
    assert str(err.value) == "Turn 5 out of range (session has 1 turns)"


def test_times_are_utc_whatever_the_local_zone(monkeypatch):
    monkeypatch.setenv("TZ", "Asia/Tokyo")
    time.tzset()
    try:
        assert document.when("2026-11-01T01:05:00-03:00") == "2026-11-01 04:05 UTC"
    finally:
        monkeypatch.undo()
        time.tzset()


def test_a_transcript_root_that_is_a_symlink_loop_is_passed_over(archive, tmp_path: Path):
    """A loop cannot be resolved (RuntimeError on Python 3.11, OSError from 3.13): it is
    not where the export is, and the roots after it are still checked."""
    loop = tmp_path / "loop"
    os.symlink(loop, loop)
    root = tmp_path / "projects"
    root.mkdir()
    with pytest.raises(BadInput):
        ex.export(archive, SID, cwd=root, transcript_roots=[loop, root])
    elsewhere = tmp_path / "out"
    elsewhere.mkdir()
    assert ex.export(archive, SID, cwd=elsewhere, transcript_roots=[loop]).files == (elsewhere / f"{SID}.md",)
