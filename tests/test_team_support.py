"""Shared by the team-mode tests (no tests here): a throwaway PostgreSQL cluster and
three users' homes.

One cluster serves the whole test session (started on first use, stopped at exit);
every test gets a fresh database in it. Without PostgreSQL's binaries (no initdb)
the team tests are skipped with the reason; `.ci/run` installs them, and in CI
(``CI=true``) their absence fails the team tests instead: a green run must not
hide 26 tests that never ran.

* alice: the demo corpus (a 5-session slug chain, subagents, compaction, …).
* bob: three sessions of his own in `infra`, one of them with alice's chain slug, so a
  bare reference to it is ambiguous in the team store.
* carol: the demo corpus again (every id and slug collides with alice's).
"""

from __future__ import annotations

import atexit
import itertools
import os
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pytest

from core.api import Archive
from core.config import Config
from core.fixtures.claude import ClaudeTranscript, stable_uuid
from core.fixtures.demo import CHAIN_SLUG, DEFAULT_NOW, write_demo_corpus
from core.team.cluster import ThrowawayCluster, find_bin_dir
from core.team.db import connect
from core.team.push import Pusher, PushResult
from core.team.schema import ensure_schema
from core.team.store import TeamArchive

NOW = DEFAULT_NOW.timestamp()
BOB_T0 = datetime(2026, 11, 10, 9, 0, tzinfo=timezone.utc)
BOB_INFRA = "/home/bob/src/infra"
BOB_SLUGGED = stable_uuid("team-bob", "slugged")
BOB_INGRESS = stable_uuid("team-bob", "ingress")
BOB_TERRAFORM = stable_uuid("team-bob", "terraform")

_cluster: ThrowawayCluster | None = None
_names = itertools.count()


NO_POSTGRES = "PostgreSQL is not installed (no initdb binary): apt-get install postgresql to run the team tests"


def in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def cluster() -> ThrowawayCluster:
    global _cluster
    if find_bin_dir() is None:
        if in_ci():
            pytest.fail(f"CI=true: {NO_POSTGRES}", pytrace=False)
        pytest.skip(NO_POSTGRES)
    if _cluster is None:
        _cluster = ThrowawayCluster().start()
        atexit.register(_cluster.stop)
    return _cluster


def new_database() -> str:
    return cluster().create_database(f"team_{next(_names)}")


def config_for(home: Path, user: str) -> Config:
    return Config.from_env({"HOME": str(home), "USER": user})


def open_local(home: Path, user: str) -> Archive:
    return Archive.open(config_for(home, user), now=lambda: NOW)


def push(archive: Archive, url: str, user: str, **kw) -> PushResult:
    with connect(url) as conn:
        ensure_schema(conn)
        return Pusher(archive, conn, user, **kw).push()


def open_team(url: str) -> TeamArchive:
    return TeamArchive(url, now=lambda: NOW)


def write_bob(home: Path) -> dict[str, ClaudeTranscript]:
    root = home / ".claude" / "projects"
    slugged = ClaudeTranscript(BOB_SLUGGED, cwd=BOB_INFRA, slug=CHAIN_SLUG, start=BOB_T0)
    slugged.user("Rotate the staging TLS certificates before they expire on Friday")
    slugged.tool("Bash", {"command": "certbot renew --cert-name staging"}, "Congratulations, all renewals succeeded")
    slugged.assistant("Renewed the staging certificates with certbot; they now expire in 90 days.")
    slugged.write_under(root)

    ingress = ClaudeTranscript(BOB_INGRESS, cwd=BOB_INFRA, slug="brave-quiet-heron", start=BOB_T0 + timedelta(days=1))
    ingress.user("The kubernetes ingress returns 504 gateway timeout for the uploads service")
    ingress.tool("Read", {"file_path": f"{BOB_INFRA}/k8s/ingress.yaml"}, "proxy-read-timeout: 30")
    ingress.assistant("The ingress proxy-read-timeout is 30 s but uploads take longer; raised it to 300 s.")
    ingress.user("Also add a readiness probe to the uploads deployment")
    ingress.tool("Edit", {"file_path": f"{BOB_INFRA}/k8s/uploads.yaml", "old_string": "a", "new_string": "b"})
    ingress.assistant("Added an HTTP readiness probe on /healthz to the uploads deployment.")
    ingress.write_under(root)

    terraform = ClaudeTranscript(BOB_TERRAFORM, cwd=f"{BOB_INFRA}/terraform", slug="calm-amber-fox", start=BOB_T0 + timedelta(days=2))
    terraform.user("terraform plan wants to destroy the production database, why?")
    terraform.tool("Bash", {"command": "terraform plan"}, "# aws_db_instance.main must be replaced\n-/+ engine_version")
    terraform.assistant("The engine_version change forces replacement; pin engine_version and use allow_major_version_upgrade.")
    terraform.write_under(root)
    return {"slugged": slugged, "ingress": ingress, "terraform": terraform}


class Team:
    """Three users' homes, their local archives, and one team database."""

    def __init__(self, tmp: Path, url: str) -> None:
        self.url = url
        self.homes = {name: tmp / name for name in ("alice", "bob", "carol")}
        self.corpus = write_demo_corpus(self.homes["alice"])
        write_demo_corpus(self.homes["carol"])
        self.bob = write_bob(self.homes["bob"])

    def push_all(self) -> dict[str, PushResult]:
        results = {}
        for name, home in self.homes.items():
            with open_local(home, name) as archive:
                results[name] = push(archive, self.url, name)
        return results
