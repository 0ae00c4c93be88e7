"""The fork server the suite starts its pytest sessions through (tests/zygote.py) behaves like
``python -m pytest`` in a fresh interpreter: exit status, streams, folder, environment,
signals. A mistake here would let a test pass that a fresh process fails."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.zygote_server import start_zygote

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a Linux fork server")


@pytest.fixture(scope="module")
def zygote(tmp_path_factory: pytest.TempPathFactory):
    server = start_zygote(Path(tmp_path_factory.mktemp("z")))
    yield server
    server.stop()


def session(zygote, folder: Path, *args: str, env: dict[str, str | None] | None = None, **kw):
    """``python -m pytest ARGS`` through the server, with ``env`` changed (None: removed)."""
    changed = {**os.environ, **(env or {})}
    return subprocess.Popen(
        [*zygote.command, "-p", "no:cacheprovider", *args],
        cwd=folder,
        env={name: value for name, value in changed.items() if value is not None},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


@pytest.mark.parametrize("no_bytecode", ["1", None])
def test_status_streams_folder_and_environment(zygote, tmp_path, no_bytecode):
    (tmp_path / "helper_mod.py").write_text("VALUE = 'from the folder'\n")
    (tmp_path / "test_it.py").write_text(
        "import os, sys, tempfile\n"
        "import helper_mod\n"
        "def test_env():\n"
        "    print('out:', helper_mod.VALUE, os.environ['ZYGOTE_PROBE'], tempfile.gettempdir())\n"
        "    print('err: to stderr', file=sys.stderr)\n"
        "    assert sys.dont_write_bytecode is ('PYTHONDONTWRITEBYTECODE' in os.environ)\n"
        "def test_fails():\n"
        "    assert 1 == 2\n"
    )
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    env = {
        "ZYGOTE_PROBE": "probe-7",
        "TMPDIR": str(scratch),
        "PYTHONDONTWRITEBYTECODE": no_bytecode,
    }
    proc = session(zygote, tmp_path, "-s", "-q", env=env)
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 1, out + err  # one test failed: pytest's exit status 1
    assert f"out: from the folder probe-7 {scratch}" in out
    assert "err: to stderr" in err
    assert "1 failed, 1 passed" in out
    assert bool(list(tmp_path.glob("__pycache__/helper_mod*"))) is (no_bytecode is None)


def test_a_usage_error_is_exit_status_4(zygote, tmp_path):
    proc = session(zygote, tmp_path, "--no-such-option")
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 4 and "unrecognized arguments" in err


def test_sigint_reaches_the_session_and_sigkill_ends_it(zygote, tmp_path):
    (tmp_path / "test_slow.py").write_text(
        "import time\ndef test_slow():\n    print('started', flush=True)\n    time.sleep(60)\n"
    )
    proc = session(zygote, tmp_path, "-s", "-q")
    assert proc.stdout is not None
    assert "started" in proc.stdout.readline()
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2 and "KeyboardInterrupt" in out + err  # pytest's "interrupted"

    marker = tmp_path / "pid"
    (tmp_path / "test_slow.py").write_text(
        "import os, time\n"
        f"def test_slow():\n    open({str(marker)!r}, 'w').write(str(os.getpid()))\n"
        "    time.sleep(60)\n"
    )
    proc = session(zygote, tmp_path, "-q")
    deadline = time.monotonic() + 60
    while not marker.exists() or not marker.read_text():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    pid = int(marker.read_text())
    proc.kill()
    proc.wait(10)
    deadline = time.monotonic() + 10
    while _alive(pid):  # the server kills the session its client stood for
        assert time.monotonic() < deadline, f"session {pid} outlived its killed client"
        time.sleep(0.05)


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False
