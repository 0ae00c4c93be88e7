"""A fake ``docker`` client for tests on machines without a Docker daemon.

``install`` writes an executable Python script named ``docker`` into a folder put first on
``PATH``. The script records every argument list it gets (``calls``) and emulates the
commands the container runner uses: ``info``, ``image inspect``, ``pull``, ``build``,
``run -d``, ``exec`` (the command really runs, in a folder standing for the container's
file system: ``/app``, ``/tests`` and ``/logs`` are mapped into it), ``cp`` and ``rm -f``
(which kills what the container's commands left running, as removing a container does).
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

SCRIPT = r"""
import json, os, re, shutil, signal, subprocess, sys, threading, uuid
from pathlib import Path

STATE = Path(os.environ["FAKE_DOCKER_STATE"])
args = sys.argv[1:]
with open(STATE / "calls.jsonl", "a") as log:
    log.write(json.dumps(args) + "\n")


def safe(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name)


def fs(name):
    return STATE / "containers" / name / "fs"


def mapped(text, name):
    root = str(fs(name))
    return re.sub(r"(?<![\w./])/(app|tests|logs)\b", lambda m: root + m.group(0), text)


def kill_all(name):
    pgids = STATE / "containers" / name / "pgids"
    if pgids.exists():
        for line in pgids.read_text().split():
            try:
                os.killpg(int(line), signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass


command = args[0] if args else ""
if command == "info":
    if (STATE / "no_daemon").exists():
        print("Cannot connect to the Docker daemon at unix:///var/run/docker.sock. "
              "Is the docker daemon running?", file=sys.stderr)
        sys.exit(1)
    print("27.0.0-fake")
elif command == "image" and args[1] == "inspect":
    if not (STATE / "images" / safe(args[-1])).is_dir():
        print(f"Error: No such image: {args[-1]}", file=sys.stderr)
        sys.exit(1)
    print("sha256:fake")
elif command == "pull":
    if (STATE / "pull_fails").exists():
        print(f"Error response from daemon: pull access denied for {args[1]}", file=sys.stderr)
        sys.exit(1)
    (STATE / "images" / safe(args[1])).mkdir(parents=True, exist_ok=True)
elif command == "build":
    tag = args[args.index("-t") + 1]
    dockerfile = Path(args[args.index("-f") + 1])
    image = STATE / "images" / safe(tag)
    shutil.copytree(args[-1], image, dirs_exist_ok=True)
    (image / dockerfile.name).unlink()
    (STATE / "built" / safe(tag)).parent.mkdir(exist_ok=True)
    (STATE / "built" / safe(tag)).write_text(dockerfile.read_text())
elif command == "run":
    name = args[args.index("--name") + 1]
    image = args[args.index("--entrypoint") + 2]
    (fs(name) / "app").mkdir(parents=True)
    shutil.copytree(STATE / "images" / safe(image), fs(name) / "app", dirs_exist_ok=True)
    print(uuid.uuid4().hex)
elif command == "exec":
    name, argv = args[1], args[2:]
    if not fs(name).is_dir():
        print(f"Error response from daemon: No such container: {name}", file=sys.stderr)
        sys.exit(1)
    if argv == ["kill", "-KILL", "-1"]:
        kill_all(name)
        sys.exit(0)
    # the command runs in its own session and reaches this client only through pipes, as a
    # process in a container does: killing the client leaves it running
    child = subprocess.Popen([mapped(a, name) for a in argv], cwd=fs(name) / "app",
                             start_new_session=True, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
    with open(STATE / "containers" / name / "pgids", "a") as pgids:
        pgids.write(f"{child.pid}\n")
    def relay(source, sink):
        for chunk in iter(lambda: source.read1(65536), b""):
            sink.write(chunk)
            sink.flush()
    threads = [threading.Thread(target=relay, args=(child.stdout, sys.stdout.buffer)),
               threading.Thread(target=relay, args=(child.stderr, sys.stderr.buffer))]
    for thread in threads:
        thread.start()
    code = child.wait()
    for thread in threads:
        thread.join(1.0)
    sys.stdout.flush()
    os._exit(code)
elif command == "cp":
    source, target = args[1], args[2]
    name, _, where = target.partition(":")
    destination = Path(mapped(where, name))
    shutil.copytree(source.rstrip("."), destination, dirs_exist_ok=True)
    for file in destination.rglob("*"):
        if file.is_file():
            file.write_text(mapped(file.read_text(), name))
elif command == "rm":
    name = args[-1]
    kill_all(name)
    shutil.rmtree(STATE / "containers" / name, ignore_errors=True)
    print(name)
else:
    print(f"fake docker: unknown command {args}", file=sys.stderr)
    sys.exit(2)
"""


@dataclass
class FakeDocker:
    """The installed fake: its state folder and what it was asked to do."""

    state: Path
    client: Path

    def calls(self) -> list[list[str]]:
        log = self.state / "calls.jsonl"
        if not log.exists():
            return []
        return [json.loads(line) for line in log.read_text().splitlines()]

    def commands(self) -> list[str]:
        """The first word of every call (``info``, ``run``, ``exec``, ...)."""
        return [call[0] for call in self.calls()]

    def has_image(self, name: str) -> None:
        import re

        (self.state / "images" / re.sub(r"[^A-Za-z0-9_.-]", "_", name)).mkdir(parents=True)

    def containers(self) -> list[str]:
        folder = self.state / "containers"
        return sorted(p.name for p in folder.iterdir()) if folder.is_dir() else []

    def without_daemon(self) -> None:
        (self.state / "no_daemon").write_text("")


def install(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> FakeDocker:
    """Put a fresh fake ``docker`` first on ``PATH`` for this test."""
    folder = tmp_path / "fake-docker-bin"
    folder.mkdir(parents=True)
    state = tmp_path / "fake-docker-state"
    (state / "images").mkdir(parents=True)
    client = folder / "docker"
    client.write_text(f"#!{sys.executable}\n{SCRIPT}")
    client.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("FAKE_DOCKER_STATE", str(state))
    return FakeDocker(state, client)
