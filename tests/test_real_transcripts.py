"""The Claude Code parser against the public samples in ``../shared/transcripts``.

Every number pinned here was checked by reading the raw JSONL independently of core
(python ``json`` over each line: user records with a string or text/image-block content,
no ``tool_result``, not ``isMeta``/``isCompactSummary``, not Claude Code machinery
such as ``<command-name>``/``<local-command-stdout>``/``<bash-stdout>``/caveats/IDE
context/"[Request interrupted by user…]", each uuid once; ``system``/``compact_boundary``
records; ``sessionId`` of old-layout ``agent-*.jsonl`` files; ``summary`` records and
which file holds their ``leafUuid``).
"""

from __future__ import annotations

import re
import shutil
from collections import Counter
from pathlib import Path

import pytest

from core.api import Archive
from core.config import Config
from core.errors import NotFound
from core.model import COMPACTION_TEXT
from core.sources.base import SourceFile
from core.sources.claude import ClaudeSource

SHARED = Path(__file__).resolve().parents[2] / "shared" / "transcripts"
REAL_PROJECTS = SHARED / "claude-code-log" / "test_data" / "real_projects"
SPOTTER = SHARED / "spotter"

pytestmark = pytest.mark.skipif(not SHARED.is_dir(), reason="../shared/transcripts not present")

# spotter session -> the project dir it was copied from (spotter/README.md)
SPOTTER_DIRS = {
    "ae4a77f8-aedd-4bc1-888f-c94edc91af04": "-home-marco-projects-spotter-worktrees-spotter-4te",
    "fa812bfe-b295-4cca-9c2f-fdf01028cb46": "-home-marco-projects-spotter-worktrees-spotter-a0y",
    "258c7280-ae70-4798-800f-63464d01a85d": "-home-marco-projects-spotter-worktrees-spotter-gqc",
    "8463c716-a2ea-4c14-9efa-87158ebd9f20": "-home-marco-projects-spotter-worktrees-spotter-fum",
    "4d5611e5-241a-462a-8d15-5122611a9569": "-home-marco-projects-spotter-worktrees-spotter-dov",
    "6c2214d7-b87e-4432-8e41-22ba294ea584": "-home-marco-projects-spotter-worktrees-spotter-0rt",  # subagent only
}
VIBE = "VibeCodingTracker/at-d6ca31e/examples/test_conversation.jsonl"  # 1.0.95, two sessionIds


def claude_files() -> list[Path]:
    """Every Claude Code JSONL file INDEX.md lists (its format column says so)."""
    index = (SHARED / "INDEX.md").read_text(encoding="utf-8")
    found = re.findall(r"### `([^`]+\.jsonl)`\n(?:- [^\n]*\n)*?- size: [\d,]+ bytes; lines: \d+; format: Claude Code", index)
    return [SHARED / rel for rel in found]


# --- every file parses ------------------------------------------------------------------


def test_every_claude_code_file_parses():
    files = claude_files()
    assert len(files) == 143  # 126 JSONL + 17 empty files in INDEX.md
    source = ClaudeSource()
    skipped = {}
    for path in files:
        for full_text in (False, True):
            result = source.read(SourceFile(path, "claude"), full_text=full_text)
            assert result.error is None, path
            data = path.read_bytes()
            # every line is consumed; a last line without its newline is left for later
            # (only edge_cases.jsonl, SYNTHETIC, ends so: its final summary record)
            assert result.offset == (len(data) if data.endswith(b"\n") or not data else data.rindex(b"\n") + 1), path
        if result.skipped:
            skipped[path.relative_to(SHARED).as_posix()] = result.skipped
    # edge_cases.jsonl (SYNTHETIC): `"massive error"`, `42`, `[1]` and one record whose
    # content key is misspelled (`contenst`, so null content); everything else reads clean
    assert skipped == {"claude-code-log/test_data/edge_cases.jsonl": 4}


# file -> (turns, compaction boundaries), each verified by reading the file. (Not pinned:
# agent-sessions' small.jsonl, SYNTHETIC, whose scrubbed records share the placeholder uuid
# "[trimmed for fixture]", so how many of them are "the same record" is undecidable.)
FILE_COUNTS = {
    VIBE: (4, 0),
    "agent-history/tests/fixtures/real_sessions/claude/session-01.jsonl": (1, 0),
    "claude-code-log/test_data/dag_compact_after_rewind_preserved.jsonl": (5, 1),
    "claude-code-log/test_data/dag_fork.jsonl": (7, 0),
    "claude-code-log/test_data/dag_resume.jsonl": (5, 0),
    "claude-code-log/test_data/debug_image_message.jsonl": (1, 0),
    "claude-code-log/test_data/teammates/ef000000-0000-4000-8000-000000000001.jsonl": (3, 0),
    "episodic-memory/test/fixtures/large-conversation.jsonl": (21, 0),
    "episodic-memory/test/fixtures/long-conversation.jsonl": (15, 0),
    "episodic-memory/test/fixtures/medium-conversation.jsonl": (0, 0),
    "episodic-memory/test/fixtures/tiny-conversation.jsonl": (2, 0),
    "spotter/short.jsonl": (1, 0),  # the 2nd user text is "[Request interrupted by user for tool use]"
    "spotter/tool_heavy.jsonl": (2, 0),
    # its `/compact` was given arguments ("and continue with the reamining tasks"): the user's words
    "spotter/ae4a77f8-aedd-4bc1-888f-c94edc91af04.jsonl": (3, 1),
    "spotter/fa812bfe-b295-4cca-9c2f-fdf01028cb46.jsonl": (2, 1),
    "spotter/258c7280-ae70-4798-800f-63464d01a85d.jsonl": (2, 1),
    "spotter/8463c716-a2ea-4c14-9efa-87158ebd9f20.jsonl": (1, 1),
    "spotter/4d5611e5-241a-462a-8d15-5122611a9569.jsonl": (2, 1),
}


@pytest.mark.parametrize("rel", sorted(FILE_COUNTS))
def test_turns_and_compactions_per_file(rel):
    result = ClaudeSource().read(SourceFile(SHARED / rel, "claude"))
    turns = sum(e.starts_turn for e in result.entries)
    compactions = [e for e in result.entries if e.type == "compaction"]
    assert (turns, len(compactions)) == FILE_COUNTS[rel]
    assert all((e.role, e.text) == ("system", COMPACTION_TEXT) for e in compactions)


# --- the samples as a ~/.claude/projects tree ----------------------------------------------


@pytest.fixture(scope="module")
def archive(tmp_path_factory) -> Archive:
    home = tmp_path_factory.mktemp("real-home")
    projects = home / ".claude" / "projects"
    for session_id, name in SPOTTER_DIRS.items():
        project = projects / name
        project.mkdir(parents=True)
        main = SPOTTER / f"{session_id}.jsonl"
        if main.exists():
            shutil.copy2(main, project / main.name)
        if (SPOTTER / session_id).is_dir():
            shutil.copytree(SPOTTER / session_id, project / session_id)
    for project in REAL_PROJECTS.iterdir():  # real ~/.claude/projects dirs, both subagent layouts
        shutil.copytree(project, projects / project.name)
    (projects / "-home-wei-repo-claude-code").mkdir()
    shutil.copy2(SHARED / VIBE, projects / "-home-wei-repo-claude-code" / "test_conversation.jsonl")
    archive = Archive.open(Config.from_env({"HOME": str(home)}))
    yield archive
    archive.close()


def full_id(prefix: str) -> str:
    return next(sid for sid in LISTED if sid.startswith(prefix))


LISTED = {
    # spotter (2.1.38/39)
    "ae4a77f8-aedd-4bc1-888f-c94edc91af04", "fa812bfe-b295-4cca-9c2f-fdf01028cb46",
    "258c7280-ae70-4798-800f-63464d01a85d", "8463c716-a2ea-4c14-9efa-87158ebd9f20",
    "4d5611e5-241a-462a-8d15-5122611a9569",
    # claude-code-log real_projects
    "7acd37a8-2745-4b58-a8a9-46164b22ad9e",
    "07f2e15c-a38b-454b-9148-60edc06de401", "0d3a8e6f-290f-4105-a327-a2496e5e2a83",
    "12a546d1-83a7-49a6-abba-5400db340b43", "326189cf-5676-4237-8cde-1ce80aae4a9f",
    "37f83ec9-f2ea-42a9-925e-0d5c105cb6e8", "71c9afe9-d9cc-4583-86b3-e62ba682b83a",
    "89488521-e2e7-4d97-bc02-38197efdddc8", "937c6e6b-27e7-4edd-86f1-ad28f9731841",
    "aa5c5ada-4f1e-4b7f-9d1f-c496b3badde5", "b45ad5d8-81fb-4bcb-baba-19d9f503d731",
    "cbc0f75b-b36d-4efd-a7da-ac800ea30eb6", "fe869ecb-c176-478f-9734-7e4b8ef12cff",
    "cb2e607c-c758-415a-8b45-c49e4631906a",
    "4379d1bf-ccb1-414e-a856-9791b73f3af2", "5ed31c36-bca8-40fd-8d24-f1a1f0af7901",
    "9e953218-585f-4692-89df-9e0747a31c68", "b25638d7-b104-4f06-a797-70ac33d069ed",
    "f852ad25-1024-47da-964e-5eaae5bd6e6a",
    "03eb5929-52b3-4b13-ada3-b93ae35806b8", "ef958aa1-0e93-49f0-bb71-150f63befcd1",
    "a7da6a22-facc-4fcd-8bab-f83c87862004",
    "3680252d-d4e3-4416-bddd-8f5b5b4fdb7f",  # a /model command's output and summaries only (issue 34: findable)
    "256ba646-2c15-437a-98e9-4171aafd030e", "29ccd257-68b1-427f-ae5f-6524b7cb6f20",
    "2b4ed4c0-b905-41de-9238-273db3ec737a", "94604a7b-062f-4369-bdf0-da948381c3e5",
    # VibeCodingTracker 1.0.95 (file named test_conversation.jsonl; first sessionId)
    "e9f146fa-3b20-48d0-9be4-d99ca901cae4",
}  # fmt: skip


# Sessions whose own transcript file is absent from the samples but whose subagent files
# survive: those files stand in for the session (listed under the parent's id, never as
# sessions of their own). Verified: each agent file's sessionId (old layout) or dir (new).
ABSENT_PARENTS = {
    "6c2214d7-b87e-4432-8e41-22ba294ea584": {"agent-afc096d.jsonl"},  # spotter subagents/ dir only
    "741790a4-4fe2-4644-9a51-fb4482074060": {  # coderabbit: 5 investigations (its 4 Warmup pings left out)
        "agent-668b5ac2.jsonl", "agent-9fa17969.jsonl", "agent-b52b1c09.jsonl", "agent-db734024.jsonl",
        "agent-f36dc5e5.jsonl"},
}  # fmt: skip
# Absent parents of which only "Warmup" pings survive: nothing of the conversation is
# left, so they are not listed.
WARMUP_ONLY = {
    "58edcfae-5291-436c-91e4-54fbb188a0ca", "14653a8a-9a1b-4299-8e64-c0aa4b772c1d",  # claude-code-log-sample
    "4e062ed2-cbfa-4cb8-bc9a-1551bf168eaf", "b769b1e5-8b11-4acd-b8de-294bbf2ec281",
}  # fmt: skip


def test_listed_sessions(archive):
    listed = {s.session_id for s in archive.list_sessions(limit=500)}
    assert listed == LISTED | set(ABSENT_PARENTS)
    stats = archive.stats()
    assert stats.sessions == len(LISTED) + len(ABSENT_PARENTS) == 35
    assert listed & WARMUP_ONLY == set()
    assert stats.skipped_lines == 0 and stats.errors == ()


def test_subagent_files_stand_in_for_an_absent_parent(archive):
    for session_id, agents in ABSENT_PARENTS.items():
        info = archive.resolve(session_id).sessions[0]
        assert {Path(f).name for f in info.files} == agents, session_id
        assert info.turn_count == len(agents)  # one prompt per agent file
    assert archive.resolve("6c2214d7-b87e-4432-8e41-22ba294ea584").sessions[0].summary == "adaptive-spinning-moon"
    hits = archive.search("Explore the Elixir/Phoenix project structure, mix.exs Ash-related dependencies", limit=5)
    assert hits[0].session_id == "6c2214d7-b87e-4432-8e41-22ba294ea584"


def test_parents_that_are_empty_files_are_never_listed(archive):
    """Old-layout "Warmup" agents whose parent file is 0 bytes: attached data, no session."""
    empty_parents = [
        "2c5941bd-b9de-41d6-9414-221d175776f7", "b23cbd1d-a39d-4f31-98fd-98f8ff69b816",  # JSSoundRecorder
        "1ca217c4-f55d-4f6e-a994-b7e2231336f0", "4227a68e-2b1f-4923-b824-6e04a67f77c1",  # coderabbit
        "53196f99-eefe-4512-a459-d6def854aae8", "5b97e2d4-d624-4af2-9fb8-7fc02540282a",
        "6323a48e-3984-42eb-8790-2f7811368ab7", "8a69e93c-e842-471d-a053-5c316757e5e9",
        "a4d5ef26-c12c-47f7-970f-ec573fdbdcbd", "a6022a13-4ec2-41a1-85e9-6e31e7c62f58",
        "c7fda819-26c4-40c8-bfec-2d2240999e42",
        "7864f562-717b-4d70-a1cb-b588f7826a1a",  # danieldemmel.me-next (2 Warmup agents)
        *sorted(WARMUP_ONLY),
        "4e27c414-a885-46a0-b5c8-d58e1417377d",  # summary-only file
        "a95fea4a-b88a-4e49-ac07-4cc323d8700c",  # file-history-snapshot only
    ]  # fmt: skip
    for session_id in empty_parents:
        with pytest.raises(NotFound, match=f"Unknown session_id: {session_id}"):
            archive.resolve(session_id)
    hits = archive.search("Warmup", limit=100)
    assert not {h.session_id for h in hits} & set(empty_parents)


# session prefix -> turn_count (main files only; subagents never add turns)
TURNS = {
    "ae4a77f8": 3, "fa812bfe": 2, "258c7280": 2, "8463c716": 1, "4d5611e5": 2,
    # turn 0: the answer to a bare `/init` (SPEC §2: before the first prompt), then
    # prompts at lines 46, 58, 63, 98, 168 (IDE-context block lists)
    "7acd37a8": 6,
    "cb2e607c": 5,
    "9e953218": 11,
    "a7da6a22": 7,  # 2 "[Request interrupted…]" and /context, /model machinery excluded
    "03eb5929": 7, "ef958aa1": 2,
    "37f83ec9": 6, "fe869ecb": 2,
    "326189cf": 2,  # <bash-input> is typed (a turn), its <bash-stdout> is not
    "e9f146fa": 4,
}  # fmt: skip


def test_turn_counts(archive):
    got = {prefix: archive.resolve(full_id(prefix)).sessions[0].turn_count for prefix in TURNS}
    assert got == TURNS


def test_opening_turns_are_read_and_searched_like_any_turn(archive):
    """Issue 14.1: the answer to a bare `/init` is turn 0; a command given arguments is a prompt."""
    init = full_id("7acd37a8")
    opening = archive.read_turn(init, 0)
    assert opening.user_text == "" and "CLAUDE.md" in opening.assistant_text and opening.tools_used
    assert archive.read_turn(init, 1).user_text  # the first prompt starts turn 1
    hits = archive.search("analyze codebase create CLAUDE.md", session_id=init, limit=3)
    assert hits and (hits[0].session_id, hits[0].turn_number) == (init, 0)
    compact = full_id("ae4a77f8")
    hits = archive.search("reamining tasks", session_id=compact, limit=3)
    assert hits, "the /compact arguments are searchable"
    turn = archive.read_turn(compact, hits[0].turn_number)
    assert turn.user_text == "/compact and continue with the reamining tasks"


def test_spotter_compactions_are_one_message_in_place(archive):
    for session_id in ("ae4a77f8", "fa812bfe", "258c7280", "8463c716", "4d5611e5"):
        messages = archive.session_messages(full_id(session_id))
        compactions = [m for m in messages if m.type == "compaction"]
        assert len(compactions) == 1, session_id
        (boundary,) = compactions
        assert (boundary.role, boundary.text) == ("system", COMPACTION_TEXT)
        assert 0 < boundary.sequence < messages[-1].sequence
        assert not any(m.text.startswith("This session is being continued") for m in messages)


# session -> subagent files attached (both layouts; agent-acompact-* summarizers count usage only)
SUBAGENTS = {
    "ae4a77f8": {"agent-aac57f5.jsonl"},
    "fa812bfe": {"agent-a93ccab.jsonl", "agent-aa84377.jsonl"},
    "258c7280": {"agent-a881341.jsonl"},
    "8463c716": {"agent-a7be2f0.jsonl"},
    "4d5611e5": {"agent-a2898e3.jsonl"},
    "ef958aa1": {"agent-a36efb2a1231c41e2.jsonl", "agent-a4ca7529859c158c2.jsonl", "agent-a52886dc180afb356.jsonl",
                 "agent-a6aa8ad077d9ea083.jsonl", "agent-ab1e6e141221a29ab.jsonl", "agent-aef063ba534d73153.jsonl"},
    "29ccd257": {"agent-a2271d1.jsonl"},
    # old layout: agent-*.jsonl beside the sessions, parent = the records' sessionId
    "7acd37a8": {"agent-3430b97e.jsonl", "agent-388fb764.jsonl", "agent-88061e52.jsonl", "agent-8d27fe83.jsonl"},
    "cb2e607c": {"agent-2b93909d.jsonl", "agent-645808c9.jsonl", "agent-ea02459f.jsonl"},
    "5ed31c36": {"agent-c3d572ee.jsonl", "agent-c63fe96c.jsonl"},
    "a7da6a22": {"agent-c8d9b115.jsonl"},
}  # fmt: skip


def test_subagents_are_attached_to_their_parents(archive):
    attached = {}
    for info in archive.list_sessions(limit=500):
        if info.session_id not in LISTED:
            continue  # judged by test_subagent_files_stand_in_for_an_absent_parent
        names = {Path(f).name for f in info.files}
        assert Path(info.files[0]).name == f"{info.session_id}.jsonl" or info.session_id.startswith("e9f146fa")
        # a compaction summarizer's file is the session's for its billed responses only
        # (no messages, no turns: tests/test_usage_views.py)
        agents = {n for n in names if n.startswith("agent-") and not n.startswith("agent-acompact")}
        if agents:
            attached[info.session_id[:8]] = agents
    assert attached == SUBAGENTS


@pytest.mark.parametrize(
    "query, parent",
    [
        ("opentelemetry_exporter version constraints hex.pm", "ae4a77f8"),  # spotter, subagents/ layout
        ("SessionStart hook output contract", "258c7280"),
        ("Tmux list_panes SessionRegistry get_pane_id", "8463c716"),
        ("coderabbit_review_extractor", "cb2e607c"),  # old layout agent-ea02459f.jsonl
        ("musllinux manylinux", "a7da6a22"),  # old layout agent-c8d9b115.jsonl, which has no prompt record
    ],
)
def test_subagent_work_is_searchable_in_its_parent(archive, query, parent):
    session_id = full_id(parent)
    hits = archive.search(query, session_id=session_id, limit=20)
    assert any(h.is_sidechain for h in hits)
    assert all(h.session_id == session_id for h in hits)


SUMMARIES = {
    # summary records whose leafUuid lies in another file describe that file's session
    "aa5c5ada": "Cache Version Compatibility Tests Added",  # record in 37f83ec9
    "4379d1bf": "CSS Details Margin Styling",  # records in 3680252d
    "f852ad25": "Tokenizer App Documentation: Technical Details and Usage",
    "b25638d7": "HTML Ruby Tokenizer Conversion for Better Browser Support",
    # the summaries these files hold point into deleted sessions: first prompt instead
    "fe869ecb": "Hey Claude, can you please add a Github Action to run tests and linting? You can test it with `act`.",
    # no summary record or title: the slug
    "ae4a77f8": "lexical-painting-whisper", "fa812bfe": "linked-soaring-matsumoto",
    "258c7280": "modular-petting-thompson", "8463c716": "drifting-tumbling-whisper",
    "4d5611e5": "radiant-floating-music", "a7da6a22": "humble-doodling-wolf",
}  # fmt: skip
# the first 200 characters of the first prompt, for sessions with none of the above
PROMPT_SUMMARIES = {
    "89488521": "now we have cache so we should change TUI that it launches the session HTML page rather than "
                "regenerating it.",  # its 3 summary records point into deleted sessions
    "37f83ec9": "Hey Claude, please have a look at the git diff of claude_code_log/renderer.py",  # idem (5 of 6)
    "e9f146fa": "幫我檢查一下 go.mod 裡面 為何 go版本是 1.23, toolchain 卻是 1.24? 請幫我統一成1.23並且我希望1.23以上就能使用",
}  # fmt: skip


def test_summaries_resolve(archive):
    got = {prefix: archive.resolve(full_id(prefix)).sessions[0].summary for prefix in SUMMARIES}
    assert got == SUMMARIES
    for prefix, start in PROMPT_SUMMARIES.items():
        summary = archive.resolve(full_id(prefix)).sessions[0].summary
        assert summary.startswith(start) and len(summary) <= 200, (prefix, summary)


def test_the_1_0_95_file_with_two_session_ids_is_one_session(archive):
    """Continue in 1.0.95: records of b162b1ae follow e9f146fa's in one file; the first record
    of the second duplicates the last of the first (uuid 562d6805…), counted once."""
    info = archive.resolve("e9f146fa-3b20-48d0-9be4-d99ca901cae4").sessions[0]
    assert archive.resolve("b162b1ae-97bc-475f-9b5f-ffbf55ca5b3f").sessions[0].session_id == info.session_id
    assert "b162b1ae-97bc-475f-9b5f-ffbf55ca5b3f" not in {s.session_id for s in archive.list_sessions(limit=500)}
    assert info.turn_count == 4 and info.message_count == 75
    kinds = Counter((m.role, m.type) for m in archive.session_messages(info.session_id))
    assert kinds == {
        ("assistant", "tool_use"): 30, ("tool", "tool_result"): 30, ("assistant", "text"): 6,
        ("assistant", "thinking"): 5, ("user", "text"): 4,
    }  # fmt: skip
    assert len([m for m in archive.session_messages(info.session_id) if m.uuid == "562d6805-363d-4bf4-aba6-7c6ec68a291d"]) == 1


def test_summary_leaf_links_a_continuation_into_one_chain(archive):
    chain = archive.resolve(full_id("37f83ec9")).chain
    assert [s.session_id[:8] for s in chain] == ["aa5c5ada", "37f83ec9"]
    assert [s.session_number for s in chain] == [1, 2]


def test_chains_are_numbered_by_when_their_sessions_started(archive):
    """Every chain oldest first, judged by each session's first prompt (not by records it replays)."""
    seen = set()
    for info in archive.list_sessions(limit=500):
        chain = archive.resolve(info.session_id).chain
        key = tuple(s.session_id for s in chain)
        if len(chain) < 2 or key in seen:
            continue
        seen.add(key)
        started = [archive.read_turn(s.session_id, 0).timestamp for s in chain]
        assert started == sorted(started), [(s.session_id[:8], s.session_number, t) for s, t in zip(chain, started)]
