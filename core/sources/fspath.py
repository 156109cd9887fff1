"""File-system names that are not UTF-8: kept exact for the disk, escaped for people.

On Linux a name is bytes; Python hands back the bytes that are not UTF-8 as lone
surrogates (``caf\\udce9`` for ``caf\\xe9``), which SQLite, JSON encoders and
terminals all refuse. Such a file is still a transcript: the catalog keeps its
path's exact bytes (a BLOB instead of TEXT, so it can be opened again), and every
name shown — paths, project keys, ids taken from names — has those bytes escaped
(``caf\\xe9``), the way ``backslashreplace`` writes them.
"""

from __future__ import annotations

import os


def is_text(value: str) -> bool:
    """Whether ``value`` is valid Unicode text (no lone surrogates)."""
    if value.isascii():
        return True
    try:
        value.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def display_text(value: str) -> str:
    """``value`` with the bytes a file name could not decode written as ``\\xNN``."""
    if is_text(value):
        return value
    try:
        return value.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate no file name decodes to
        return value.encode("utf-8", "backslashreplace").decode("utf-8")


def path_to_db(path: str) -> str | bytes:
    """How the catalog stores a path: text, or its exact bytes when it is not UTF-8."""
    return path if is_text(path) else os.fsencode(path)


def path_from_db(value: str | bytes) -> str:
    return os.fsdecode(value) if isinstance(value, bytes) else value
