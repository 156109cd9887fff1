"""A small four-agent corpus for bad-input tests: one session per agent, each with
a distinctive word per good line, plus a bystander Claude session with a subagent.

Tests append poison lines to one file and check that every good line of every
file is still found and that the poison costs exactly one counted line.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from core.fixtures.ash import AshSession
from core.fixtures.codex import CodexRollout
from core.fixtures.gemini import GeminiChat

from .support import project_dir, transcript


@dataclass
class Corpus:
    home: Path
    files: dict[str, Path] = field(default_factory=dict)  # name -> transcript file
    sessions: dict[str, str] = field(default_factory=dict)  # name -> session id
    words: dict[str, list[str]] = field(default_factory=dict)  # name -> a word per good prompt

    def append(self, name: str, data: bytes) -> None:
        with open(self.files[name], "ab") as handle:
            handle.write(data)


def build_corpus(home: Path) -> Corpus:
    corpus = Corpus(home)
    project = project_dir(home)

    claude = transcript("11111111-1111-4111-8111-111111111111", slug="poison-claude-main")
    claude.user("first prompt about the aardvark ledger")
    claude.assistant("The aardvark ledger balances.")
    child = claude.subagent("a1b2c3d4", "subagent task about the bittern cache")
    child.assistant("The bittern cache is warm.")
    claude.user("second prompt about the caracal queue")
    claude.assistant("The caracal queue drains.")
    corpus.files["claude"] = claude.write(project)
    corpus.files["claude-sub"] = project / child.relpath
    corpus.sessions["claude"] = corpus.sessions["claude-sub"] = claude.session_id
    corpus.words["claude"] = ["aardvark", "caracal"]
    corpus.words["claude-sub"] = ["bittern"]

    bystander = transcript("22222222-2222-4222-8222-222222222222", slug="poison-bystander")
    bystander.user("a prompt about the dugong compiler")
    bystander.assistant("The dugong compiler is fast.")
    corpus.files["bystander"] = bystander.write(project)
    corpus.sessions["bystander"] = bystander.session_id
    corpus.words["bystander"] = ["dugong"]

    codex = CodexRollout(home / ".codex", "0199a000-0000-7000-8000-0000000000c1")
    codex.user("a codex prompt about the eland parser")
    codex.assistant("The eland parser is done.")
    codex.user("another codex prompt about the fossa router")
    codex.assistant("The fossa router routes.")
    corpus.files["codex"] = codex.path
    corpus.sessions["codex"] = codex.session_id
    corpus.words["codex"] = ["eland", "fossa"]

    gemini = GeminiChat(home / ".gemini", session_id="5e551011-0000-4000-8000-0000000000e1")
    gemini.user("a gemini prompt about the gerenuk schema")
    gemini.gemini("The gerenuk schema validates.")
    gemini.user("a gemini prompt about the hoopoe index")
    gemini.gemini("The hoopoe index is sorted.")
    corpus.files["gemini"] = gemini.path
    corpus.sessions["gemini"] = gemini.session_id
    corpus.words["gemini"] = ["gerenuk", "hoopoe"]

    ash = AshSession(home / ".ash", "telegram_9_9")
    ash.user("an ash prompt about the ibis scheduler")
    ash.assistant("The ibis scheduler runs.")
    ash.user("an ash prompt about the jacana mailer")
    ash.assistant("The jacana mailer sent it.")
    corpus.files["ash"] = ash.context
    corpus.sessions["ash"] = ash.key
    corpus.words["ash"] = ["ibis", "jacana"]
    return corpus


def deep_line(depth: int = 5000) -> bytes:
    return b'{"x":' * depth + b"1" + b"}" * depth + b"\n"
