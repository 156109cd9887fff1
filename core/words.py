"""Counts in words: ``1 turn``, ``2 turns`` — one rule for the CLI, errors and the app."""

from __future__ import annotations


def plural(n: int, noun: str) -> str:
    """``1 turn``, ``2 turns``, ``1,204 sessions`` (``noun`` is the singular)."""
    return f"{n:,} {noun}{'' if n == 1 else 's'}"
