"""A real PostgreSQL server for the tests: ``initdb`` + ``pg_ctl start`` into a private
temporary folder, listening only on a Unix socket in that folder (no port to collide on), one
per test session (so one per xdist worker), stopped at the end.

As root (which ``initdb`` refuses) the server runs as the ``postgres`` user. Missing binaries
skip the tests that need the server, saying why; under ``CI=1`` they fail instead.
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tests.optional import import_extra, part_missing

TOOLS = ("initdb", "pg_ctl")


def find_tool(name: str) -> str | None:
    """A PostgreSQL program on PATH or in Debian's /usr/lib/postgresql/*/bin."""
    found = shutil.which(name)
    if found:
        return found
    candidates = sorted(glob.glob(f"/usr/lib/postgresql/*/bin/{name}"), reverse=True)
    return candidates[0] if candidates else None


@dataclass
class PostgresServer:
    folder: Path
    socket_dir: Path
    as_user: list[str]
    pg_ctl: str

    def url(self, database: str = "postgres") -> str:
        """A libpq URL of ``database`` over the server's socket (no password: trust auth)."""
        return f"postgresql:///{database}?host={self.socket_dir}&user=srbench"

    def create_database(self, name: str) -> str:
        import psycopg

        with psycopg.connect(self.url(), autocommit=True) as connection:
            connection.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def stop(self) -> None:
        subprocess.run(
            [
                *self.as_user,
                self.pg_ctl,
                "stop",
                "-D",
                str(self.folder / "data"),
                "-m",
                "immediate",
            ],
            capture_output=True,
            timeout=60,
        )
        shutil.rmtree(self.folder, ignore_errors=True)


def start_server(*, durable: bool = False) -> PostgresServer:
    """Initialise and start a server in a new temporary folder (skip when not installed).
    Tests run it without fsync (nothing to keep after the session); ``durable`` keeps the
    server's defaults (fsync on every commit), for timing commits (``bench/store_commit.py``)."""
    tools = {name: find_tool(name) for name in TOOLS}
    missing = [name for name, path in tools.items() if path is None]
    if missing:
        reason = (
            f"PostgreSQL is not installed ({', '.join(missing)} not found on PATH or in "
            "/usr/lib/postgresql/*/bin); scripts/test installs Debian's postgresql package"
        )
        part_missing(reason)
    import_extra("psycopg", "postgres")  # the tests and the store reach the server with it
    folder = Path(tempfile.mkdtemp(prefix="srpg-"))  # short: a socket path has ~100 bytes
    as_user: list[str] = []
    if os.geteuid() == 0:
        user = pwd.getpwnam("postgres")
        os.chown(folder, user.pw_uid, user.pw_gid)
        as_user = ["runuser", "-u", "postgres", "--"]
    data = folder / "data"
    subprocess.run(
        [*as_user, str(tools["initdb"]), "-D", str(data), "-U", "srbench", "-A", "trust",
         "--no-sync", "-E", "UTF8", "--locale=C"],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    options = (
        f"-c listen_addresses='' -c unix_socket_directories={folder}"
        " -c max_connections=100 -c shared_buffers=32MB"
    )
    if not durable:
        options += " -c fsync=off -c synchronous_commit=off"
    subprocess.run(
        [*as_user, str(tools["pg_ctl"]), "start", "-D", str(data), "-w", "-t", "60",
         "-l", str(folder / "server.log"), "-o", options],
        check=True, capture_output=True, timeout=120,
    )  # fmt: skip
    return PostgresServer(folder, folder, as_user, str(tools["pg_ctl"]))
