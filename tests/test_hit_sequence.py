"""A hit points at its own message (issue #34.4): ``sequence`` is the message its snippet came from.

One long agent turn holds each kind of match in a different message: the prompt, an
early answer, a tool's input, a tool's output and the closing summary, with unrelated
tool calls between them. For each, through MCP (search_history, then
get_message_context as the tool descriptions tell an agent), HTTP (/search, then the
session's messages) and the CLI's ``--json``, the message at the hit's ``sequence``
holds the searched word and the snippet's words. On main every hit pointed at the
turn's first message (the prompt), so all but the prompt's failed.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timezone
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client

from core.api import Archive
from core.config import Config
from core.fixtures.claude import ClaudeTranscript, stable_uuid
from core.front.http_api import build_http_app
from core.front.mcp import build_server
from core.query import landing
from tests.hostile_support import cli_json

T0 = datetime(2025, 7, 1, 9, 0, tzinfo=timezone.utc)
CWD = "/home/t/work/tracing"
SID = stable_uuid("hit-sequence", "long")
OTHER = stable_uuid("hit-sequence", "other")
# the word searched → where it is
WORDS = {
    "quetzalcoatl": "prompt",
    "ocelotmarker": "answer",
    "tapir_probe.sh": "tool input",
    "okapi_overflow": "tool output",
    "traceparent": "closing summary",
}


def write_corpus(home: Path) -> None:
    root = home / ".claude" / "projects"
    t = ClaudeTranscript(SID, cwd=CWD, slug="tracing-long-turn", start=T0)
    t.user("Add distributed tracing to the quetzalcoatl service so hook calls show up as spans")
    t.assistant("I will start with the dependencies. The ocelotmarker module is where spans begin.")
    for n in range(6):
        t.tool("Edit", {"file_path": f"{CWD}/lib/mod{n}.ex", "old_string": f"a{n}", "new_string": f"b{n}"})
        t.assistant(f"Edited module {n}.")
    t.tool("Bash", {"command": "sh scripts/tapir_probe.sh --all"}, "probe ok")
    for n in range(4):
        t.tool("Read", {"file_path": f"{CWD}/lib/read{n}.ex"}, f"defmodule Read{n} do\nend\n")
    t.tool("Bash", {"command": "mix test"}, "12 tests, 1 failure\n** (RuntimeError) okapi_overflow in buffer\n")
    t.assistant("Fixed the buffer. Running the tests again.")
    t.tool("Bash", {"command": "mix test"}, "12 tests, 0 failures")
    t.assistant(
        "All done. Summary: the W3C traceparent header is now propagated from the hook scripts, "
        "the controller opens a span per request and the tests cover malformed headers."
    )
    t.write_under(root)
    other = ClaudeTranscript(OTHER, cwd=CWD, slug="tracing-other", start=T0.replace(day=2))
    other.user("Unrelated question about the build")
    other.assistant("The build is fine.")
    other.write_under(root)


@pytest.fixture(scope="module")
def home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("home")
    write_corpus(home)
    return home


@pytest.fixture(scope="module")
def archive(home: Path) -> Iterator[Archive]:
    with Archive.open(Config.from_env({"HOME": str(home)})) as arch:
        yield arch


def shown_text(message: dict[str, Any]) -> str:
    """A message's words as an agent reads them (its text, or a tool call's input)."""
    return " ".join([str(message.get("text") or ""), *(str(v) for v in (message.get("tool_input") or {}).values())])


def holds(message: dict[str, Any], word: str, snippet: str) -> None:
    text = " ".join(shown_text(message).split())
    assert word.lower() in text.lower(), (word, message)
    # the snippet shows the word, with the words around it as this message has them
    words = snippet.strip("…").split()
    at = next(i for i, w in enumerate(words) if word.lower() in w.lower())
    around = " ".join(words[max(0, at - 1) : at + 2]).strip(".,:;")
    assert around.lower() in text.lower(), (around, snippet, text)


def test_land_picks_the_message_holding_the_snippet() -> None:
    """The pure choice: a snippet straddling two messages goes to the one with its rarest word."""

    class M:
        def __init__(self, sequence: int, text: str, type: str = "text") -> None:
            self.sequence, self.text, self.type, self.tool_input = sequence, text, type, None

    messages = [M(1, "Fix the build"), M(2, "Edited."), M(3, "The traceparent header is propagated.")]
    assert landing.land(messages, "Edited. The traceparent header", ["traceparent", "header"])[0] == 3
    seq, snippet = landing.land(messages, "Fix the build", ["propag"], {"propag": 1.0})
    assert seq == 3 and "propagated" in snippet  # a snippet without the word is remade from the message holding it


async def test_mcp_hit_sequence_is_the_snippets_message(archive: Archive) -> None:
    async with Client(build_server(archive), raise_exceptions=True) as c:
        for word, kind in WORDS.items():
            result = await c.call_tool("search_history", {"query": word})
            hits = (result.structured_content or {})["results"]
            assert hits and hits[0]["session_id"] == SID, (word, hits)
            hit = hits[0]
            context = await c.call_tool("get_message_context", {"session_id": SID, "sequence": hit["sequence"], "before": 0, "after": 0})
            current = (context.structured_content or {})["current"]
            assert current["sequence"] == hit["sequence"]
            holds(current, word, hit["snippet"]), kind


async def test_http_hit_sequence_is_the_snippets_message(archive: Archive) -> None:
    transport = httpx.ASGITransport(app=build_http_app(archive))
    async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
        messages = (await client.get(f"/sessions/{SID}/messages", params={"include_tools": "true"})).json()["messages"]
        by_sequence = {m["sequence"]: m for m in messages}
        for word in WORDS:
            hits = (await client.get("/search", params={"q": word})).json()["results"]
            assert hits and hits[0]["session_id"] == SID, (word, hits)
            holds(by_sequence[hits[0]["sequence"]], word, hits[0]["snippet"])


def test_cli_json_hit_sequence_is_the_snippets_message(home: Path, tmp_path: Path) -> None:
    found = {word: cli_json(home, "search", word)["results"][0] for word in WORDS}
    with Archive.open(Config.from_env({"HOME": str(home)})) as arch:
        for word, hit in found.items():
            assert hit["session_id"] == SID, (word, hit)
            current = arch.get_message_context(SID, hit["sequence"], before=0, after=0).to_dict()["current"]
            holds(current, word, hit["snippet"])


def test_typing_search_keeps_the_passage_start(archive: Archive) -> None:
    """The app's search-as-you-type reads no transcript per keystroke: its hits point at the passage
    (the reader finds the snippet's step itself), so the two differ only in ``sequence``."""
    typed = archive.search("traceparent", typing=True)[0]
    full = archive.search("traceparent")[0]
    assert typed.turn_number == full.turn_number and typed.sequence < full.sequence


@pytest.mark.semantic
async def test_a_hit_found_by_meaning_points_at_a_message_holding_its_snippet(tmp_path: Path) -> None:
    from core.semantic.embedder import MODEL_ENV, SHIPPED_DIR, model_state

    state = model_state({MODEL_ENV: str(SHIPPED_DIR)})
    if not state.on:
        pytest.skip(f"the model cannot run here: {state.reason}")
    write_corpus(tmp_path)
    baking = ClaudeTranscript(stable_uuid("hit-sequence", "baking"), cwd="/home/t/kitchen", slug="warm-oven", start=T0)
    baking.user("continue with the notes")  # the turn's first message is not what it was found for
    baking.tool("Read", {"file_path": "/home/t/kitchen/notes.md"}, "proof 4h at 24C")
    baking.assistant(
        "The sourdough loaf came out dense because the dough was underproofed: let it rise longer, "
        "and bake it hotter with steam for a lighter crumb."
    )
    baking.write_under(tmp_path / ".claude" / "projects")
    with Archive.open(Config.from_env({"HOME": str(tmp_path)})) as arch:
        assert arch.wait_semantic(timeout=300)
        async with Client(build_server(arch), raise_exceptions=True) as c:
            result = await c.call_tool("search_history", {"query": "my homemade bread was too heavy and flat"})
            hits = [h for h in (result.structured_content or {})["results"] if h.get("by_meaning")]
            assert hits, result.structured_content
            context = await c.call_tool("get_message_context", {"session_id": hits[0]["session_id"], "sequence": hits[0]["sequence"], "before": 0, "after": 0})
            current = (context.structured_content or {})["current"]
            assert current["role"] == "assistant" and hits[0]["snippet"].strip("…") in shown_text(current)
