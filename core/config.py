"""Where transcripts live and where relay-search keeps its own files.

Every default derives from ``HOME`` (and each agent's own variable when set), so
``HOME=/some/dir relay-search …`` sees only that tree (SPEC §1).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping
from pathlib import Path

import msgspec
from msgspec.structs import replace

AGENTS = ("claude", "codex", "gemini", "ash")


class Config(msgspec.Struct, frozen=True):
    """Where the transcripts and the cache are, and which agents and projects to look at."""

    home: Path
    env: Mapping[str, str] = msgspec.field(default_factory=dict)  # (left out of repr: a user's whole environment)
    root: Path | None = None  # --root: the Claude projects dir (or any agent's root)
    pattern: str = "*"  # --pattern: which projects this process answers for (core/archive/scope.py)
    cache_dir: Path | None = None
    data_dir: Path | None = None
    agents: tuple[str, ...] = AGENTS
    user: str | None = None

    @classmethod
    def from_env(
        cls,
        env: Mapping[str, str] | None = None,
        *,
        root: str | Path | None = None,
        pattern: str | None = None,
        cache_dir: str | Path | None = None,
    ) -> Config:
        env = dict(os.environ if env is None else env)
        home = Path(env.get("HOME") or Path.home())
        return cls(
            home=home,
            env=env,
            root=Path(root).expanduser() if root else None,
            pattern=pattern or "*",
            cache_dir=Path(cache_dir) if cache_dir else None,
            user=env.get("USER") or env.get("LOGNAME") or home.name or None,
        )

    def __repr__(self) -> str:  # every field but ``env``: a user's whole environment has no place in a log line
        shown = ", ".join(f"{name}={getattr(self, name)!r}" for name in self.__struct_fields__ if name != "env")
        return f"Config({shown})"

    def with_(self, **changes) -> Config:
        return replace(self, **changes)

    # --- agent roots -------------------------------------------------------------

    @property
    def claude_projects(self) -> Path:
        if self.root is not None:
            return self.root
        base = self.env.get("CLAUDE_CONFIG_DIR")
        return (Path(base) if base else self.home / ".claude") / "projects"

    @property
    def codex_home(self) -> Path:
        base = self.env.get("CODEX_HOME")
        return Path(base) if base else self.home / ".codex"

    @property
    def gemini_home(self) -> Path:
        base = self.env.get("GEMINI_CLI_HOME") or self.env.get("GEMINI_HOME")
        return Path(base) if base else self.home / ".gemini"

    @property
    def ash_home(self) -> Path:
        base = self.env.get("ASH_HOME")
        return Path(base) if base else self.home / ".ash"

    # --- relay-search's own files ------------------------------------------------

    @property
    def cache_path(self) -> Path:
        """Derived data (catalog, index): safe to delete, rebuilt on demand.

        The cache holds everything found under the roots, whatever ``--pattern`` the
        process writing it has (the pattern filters at query time), so it is keyed by
        the roots only: the default roots use the cache dir itself, a ``--root`` its
        own subdir named by a hash of the resolved path.
        """
        if self.cache_dir is not None:
            return self.cache_dir
        base = self.env.get("XDG_CACHE_HOME")
        cache = (Path(base) if base else self.home / ".cache") / "relay-search"
        if self.root is None:
            return cache
        resolved = str(self.root.resolve())
        return cache / "roots" / hashlib.sha256(resolved.encode("utf-8", "surrogateescape")).hexdigest()[:16]

    @property
    def data_path(self) -> Path:
        """User data (tags): kept across cache rebuilds."""
        if self.data_dir is not None:
            return self.data_dir
        base = self.env.get("XDG_DATA_HOME")
        return (Path(base) if base else self.home / ".local" / "share") / "relay-search"
