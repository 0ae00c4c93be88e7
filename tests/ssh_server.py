"""A real OpenSSH server for the remote-gateway tests: ``sshd`` in the foreground on a free
port of 127.0.0.1, with a host key, a client key and a configuration of its own in a
temporary folder (nothing of the machine's ``/etc/ssh`` is used or changed), and an
``ssh_config`` for the client that reaches it as the current user with that key.

A machine without ``sshd`` (Debian package ``openssh-server``; ``scripts/test`` installs it)
skips the tests that need it, saying so; under ``CI`` they fail instead.
"""

from __future__ import annotations

import getpass
import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pytest_srbench.managed.common import free_port
from tests.optional import part_missing

HOST_ALIAS = "srbench-test-host"


@dataclass(frozen=True)
class SshServer:
    port: int
    ssh_config: Path  # a client configuration: `ssh -F ssh_config srbench-test-host` logs in
    log: Path  # sshd's own log (-e): one "Accepted publickey" line per login

    def logins(self) -> int:
        return self.log.read_text(errors="replace").count("Accepted publickey")

    def gateway(self, *, python: str, chdir: Path) -> str:
        """An execnet ``--tx`` spec for one worker on this host."""
        return f"ssh={HOST_ALIAS}//ssh_config={self.ssh_config}//python={python}//chdir={chdir}"


def find_sshd() -> str | None:
    return shutil.which("sshd") or next(
        (path for path in ("/usr/sbin/sshd", "/usr/local/sbin/sshd") if os.access(path, os.X_OK)),
        None,
    )


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)], check=True, timeout=30
    )


def _wait_for_login(server: SshServer, proc: subprocess.Popen[bytes]) -> bool:
    """Until a real login runs a command (sshd listening is not enough: keys, modes); False
    when sshd could not bind its port, an error for anything else."""
    deadline = time.monotonic() + 30
    while "Server listening on" not in server.log.read_text(errors="replace"):
        if proc.poll() is not None:  # it could not bind (or start): the log says which
            log = server.log.read_text(errors="replace")
            if "Address already in use" in log:
                return False
            raise AssertionError(f"sshd exited {proc.returncode}: {log[-2000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"sshd is not listening: {server.log.read_text()[-2000:]}")
        time.sleep(0.05)
    while True:
        if proc.poll() is not None:
            raise AssertionError(f"sshd exited {proc.returncode}: {server.log.read_text()}")
        done = subprocess.run(
            ["ssh", "-F", str(server.ssh_config), HOST_ALIAS, "true"],
            capture_output=True, text=True, timeout=30,
        )  # fmt: skip
        if done.returncode == 0:
            return True
        if time.monotonic() > deadline:
            raise AssertionError(
                f"cannot log in to the test sshd: {done.stderr[-1000:]}\n"
                f"{server.log.read_text(errors='replace')[-2000:]}"
            )
        time.sleep(0.2)


@contextmanager
def ssh_server(folder: Path) -> Iterator[SshServer]:
    """A running sshd on 127.0.0.1 that lets the current user in with a key made here."""
    sshd = find_sshd()
    if sshd is None or shutil.which("ssh") is None:
        part_missing(
            "no OpenSSH server here (Debian package openssh-server; "
            "SRBENCH_INSTALL_SSHD=1 scripts/test installs it)"
        )
    folder.mkdir(parents=True, exist_ok=True)
    _keygen(folder / "host_key")
    _keygen(folder / "client_key")
    (folder / "authorized_keys").write_text((folder / "client_key.pub").read_text())
    (folder / "authorized_keys").chmod(0o600)
    if os.geteuid() == 0:  # sshd as root insists on its privilege-separation folder
        Path("/run/sshd").mkdir(mode=0o755, exist_ok=True)
    for _ in range(5):  # another process may take the free port before sshd binds it
        server, proc = _start(sshd, folder)
        if _wait_for_login(server, proc):
            break
        _stop(proc)
    else:
        raise AssertionError(f"sshd did not start: {server.log.read_text()[-2000:]}")
    try:
        yield server
    finally:
        _stop(proc)


def _start(sshd: str, folder: Path) -> tuple[SshServer, subprocess.Popen[bytes]]:
    """sshd on a free port of 127.0.0.1 with a configuration of its own, and a client
    configuration that reaches it."""
    port = free_port()
    config = folder / "sshd_config"
    config.write_text(
        f"Port {port}\nListenAddress 127.0.0.1\nHostKey {folder / 'host_key'}\n"
        f"PidFile {folder / 'sshd.pid'}\nAuthorizedKeysFile {folder / 'authorized_keys'}\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nUsePAM no\n"
        "PermitRootLogin prohibit-password\nStrictModes no\nAllowUsers "
        f"{getpass.getuser()}\nPermitUserEnvironment no\n"
    )
    ssh_config = folder / "ssh_config"
    ssh_config.write_text(
        f"Host {HOST_ALIAS}\n  HostName 127.0.0.1\n  Port {port}\n  User {getpass.getuser()}\n"
        f"  IdentityFile {folder / 'client_key'}\n  IdentitiesOnly yes\n  BatchMode yes\n"
        "  StrictHostKeyChecking no\n  UserKnownHostsFile /dev/null\n  LogLevel ERROR\n"
        "  ConnectTimeout 10\n"
    )
    log = folder / "sshd.log"
    with log.open("wb") as sink:
        proc = subprocess.Popen(
            [sshd, "-D", "-e", "-f", str(config)], stdout=sink, stderr=subprocess.STDOUT
        )
    return SshServer(port=port, ssh_config=ssh_config, log=log), proc


def _stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
