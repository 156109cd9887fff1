"""Source adapters, one module per agent, looked up by agent name."""

from __future__ import annotations

from functools import cache
from importlib import import_module

from .base import AUX, MAIN, SUBAGENT, ReadResult, Source, SourceFile

# Bump when any adapter reads the same file into different entries: caches made by
# an older parser are then rebuilt instead of serving stale turns.
PARSER_VERSION = 7  # 7: what Claude Code showed besides the conversation (issue 34)

_MODULES = {
    "claude": ("claude", "ClaudeSource"),
    "codex": ("codex", "CodexSource"),
    "gemini": ("gemini", "GeminiSource"),
    "ash": ("ash", "AshSource"),
}

__all__ = ["AUX", "MAIN", "SUBAGENT", "ReadResult", "Source", "SourceFile", "get_source", "all_sources"]


@cache
def get_source(agent: str) -> Source:
    module_name, class_name = _MODULES[agent]
    module = import_module(f"{__name__}.{module_name}")
    return getattr(module, class_name)()


def all_sources(agents: tuple[str, ...]) -> list[Source]:
    return [get_source(agent) for agent in agents if agent in _MODULES]
