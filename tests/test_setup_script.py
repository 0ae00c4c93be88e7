"""scripts/test's Debian steps, run by bash from the script's own text with stand-ins for
``apt-get``, ``sudo`` and ``id`` (nothing is installed): the C/C++ toolchain step installs
``build-essential cmake`` (after an ``apt-get update``) where a tool is missing and it may;
where it may not it says in one line why and what to install."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = (ROOT / "scripts" / "test").read_text()


def _block(pattern: str) -> str:
    """The script's text from the line matching ``pattern`` to the next line that closes a
    top-level block (``}`` or ``fi``)."""
    match = re.search(pattern + r".*?\n(\}|fi)\n", SCRIPT, flags=re.DOTALL | re.MULTILINE)
    assert match, pattern
    return match.group(0)


STEP = re.search(r"^step\(\) .*\n", SCRIPT, flags=re.MULTILINE)
assert STEP
TOOLCHAIN_STEP = "\n".join(
    [
        STEP.group(0),
        _block(r"^debian_package\(\) \{"),
        _block(r'^step "C/C\+\+ compiler, make and cmake'),
    ]
)


def _stub(folder: Path, name: str, body: str) -> None:
    path = folder / name
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)


def _machine(tmp_path: Path, *, uid: int, apt_get: bool, sudo: bool) -> tuple[Path, Path]:
    """A PATH with no compiler, make or cmake (bash's builtins and a few coreutils only), the
    given user id, apt-get and sudo; returns the PATH folder and the journal of apt-get calls."""
    bin_dir, journal = tmp_path / "bin", tmp_path / "apt-get.log"
    bin_dir.mkdir()
    _stub(bin_dir, "id", f'[ "$1" = -u ] && echo {uid}')
    if apt_get:
        _stub(bin_dir, "apt-get", f'echo "$*" >> {journal}')
    _stub(bin_dir, "sudo", 'shift; [ "$1" = true ] && exit 0; exec "$@"' if sudo else "exit 1")
    (tmp_path / "venv" / "bin").mkdir(parents=True)
    (tmp_path / "venv" / "bin" / "python").symlink_to(sys.executable)
    return bin_dir, journal


def _run_step(
    tmp_path: Path, bin_dir: Path, skip: bool = False
) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": str(bin_dir),
        "PYTHONPATH": str(ROOT),
        "HOME": str(tmp_path),
        "SRBENCH_SKIP_REAL_BUILD": "1" if skip else "0",
    }
    script = f'set -euo pipefail\nvenv="{tmp_path / "venv"}"\n{TOOLCHAIN_STEP}'
    bash = "/bin/bash" if os.path.exists("/bin/bash") else "bash"
    return subprocess.run(
        [bash, "-c", script], env=env, capture_output=True, text=True, timeout=60, check=False
    )


def test_the_step_is_read_from_the_script():
    assert 'debian_package "C/C++ toolchain" "build-essential cmake"' in TOOLCHAIN_STEP
    assert 'debian_package eslint "nodejs npm"' in SCRIPT  # with its apt-get update


def test_a_missing_toolchain_is_installed_after_an_apt_get_update(tmp_path):
    bin_dir, journal = _machine(tmp_path, uid=0, apt_get=True, sudo=False)
    done = _run_step(tmp_path, bin_dir)
    assert done.returncode == 0, done.stderr
    assert journal.read_text().splitlines() == [
        "update -qq",
        "install -y -qq build-essential cmake",
    ]
    assert done.stdout.splitlines()[-1] == "installed: build-essential cmake"


def test_with_password_less_sudo_it_installs_through_sudo(tmp_path):
    bin_dir, journal = _machine(tmp_path, uid=1000, apt_get=True, sudo=True)
    done = _run_step(tmp_path, bin_dir)
    assert done.returncode == 0, done.stderr
    assert "install -y -qq build-essential cmake" in journal.read_text()


@pytest.mark.parametrize(
    ("uid", "apt_get", "why"),
    [(1000, True, "installing needs root"), (0, False, "this machine has no apt-get")],
)
def test_where_it_may_not_install_one_line_says_why_and_what_to_install(
    tmp_path, uid, apt_get, why
):
    bin_dir, journal = _machine(tmp_path, uid=uid, apt_get=apt_get, sudo=False)
    done = _run_step(tmp_path, bin_dir)
    assert done.returncode == 0 and done.stderr == ""
    header, line = done.stdout.strip().splitlines()
    assert header.startswith("== C/C++ compiler, make and cmake")
    assert line.startswith(f"not installed, and {why}: install a C compiler, a C++ compiler, make")
    assert "(Debian: build-essential cmake)" in line and "SRBENCH_SKIP_REAL_BUILD=1" in line
    assert not journal.exists()


def test_skipping_the_real_parts_needs_no_toolchain(tmp_path):
    bin_dir, journal = _machine(tmp_path, uid=0, apt_get=True, sudo=False)
    done = _run_step(tmp_path, bin_dir, skip=True)
    assert done.stdout.strip().splitlines()[-1] == "not needed (SRBENCH_SKIP_REAL_BUILD=1)"
    assert not journal.exists()
