"""A throwaway PostgreSQL cluster on loopback, for tests and the benchmark.

Uses the Debian package's binaries (``/usr/lib/postgresql/<version>/bin``): initdb
into a temp dir, start on 127.0.0.1 with a free port and the unix socket inside the
same dir, stop and delete it at the end. PostgreSQL refuses to run as root, so as
root the server runs as the package's ``postgres`` system user (or ``nobody``) via
``runuser``. Durability is switched off: the data is thrown away anyway.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
from pathlib import Path
from urllib.parse import quote

SUPERUSER = "relay"


def find_bin_dir() -> Path | None:
    """The newest installed PostgreSQL's bin dir, or None when none is installed."""
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]) if Path(p).parts[-3].isdigit() else 0)
    if found:
        return Path(found[-1]).parent
    on_path = shutil.which("initdb")
    return Path(on_path).parent if on_path else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ThrowawayCluster:
    """``with ThrowawayCluster() as pg: pg.create_database("x")`` → a URL."""

    def __init__(self, password: str = "relay-test-pw") -> None:
        bin_dir = find_bin_dir()
        if bin_dir is None:
            raise RuntimeError("no PostgreSQL binaries (initdb) found; apt-get install postgresql")
        self.bin = bin_dir
        self.password = password
        self.port = _free_port()
        self.root = Path(tempfile.mkdtemp(prefix="relay-pg-"))
        self.data = self.root / "data"
        self.log = self.root / "server.log"
        self._run_as: list[str] = []
        if os.geteuid() == 0:
            name = "postgres" if _user_exists("postgres") else "nobody"
            entry = pwd.getpwnam(name)
            os.chown(self.root, entry.pw_uid, entry.pw_gid)
            self._run_as = ["runuser", "-u", name, "--"]
        self.started = False

    def _run(self, *args: str) -> None:
        subprocess.run([*self._run_as, *args], check=True, capture_output=True, text=True)

    def start(self) -> ThrowawayCluster:
        pwfile = self.root / "pw"
        pwfile.write_text(self.password + "\n")
        if self._run_as:
            entry = pwd.getpwnam(self._run_as[2])
            os.chown(pwfile, entry.pw_uid, entry.pw_gid)
        self._run(
            str(self.bin / "initdb"), "-D", str(self.data), "-U", SUPERUSER, f"--pwfile={pwfile}",
            "--auth-local=trust", "--auth-host=scram-sha-256", "--no-sync", "-E", "UTF8", "--locale=C.UTF-8",
        )  # fmt: skip
        pwfile.unlink()
        options = (
            f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=60"
        )
        self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "-t", "60", "start")
        self.started = True
        return self

    def stop(self) -> None:
        if self.started:
            try:
                self._run(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop")
            except subprocess.CalledProcessError:
                pass
            self.started = False
        shutil.rmtree(self.root, ignore_errors=True)

    def url(self, database: str = "postgres", *, password: str | None = None) -> str:
        pw = quote(self.password if password is None else password, safe="")
        return f"postgresql://{SUPERUSER}:{pw}@127.0.0.1:{self.port}/{database}"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}"')
            conn.execute(f'CREATE DATABASE "{name}" TEMPLATE template0')
        return self.url(name)

    def __enter__(self) -> ThrowawayCluster:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()


def _user_exists(name: str) -> bool:
    try:
        pwd.getpwnam(name)
        return True
    except KeyError:
        return False
