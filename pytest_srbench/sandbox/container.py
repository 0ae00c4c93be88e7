"""Running a task inside a Docker container: the image (pulled or built), one labelled,
resource-limited container per cell, commands through ``docker exec`` with a wall clock and
output caps, files copied in, and the container removed however the cell ends.

Every step is the ``docker`` command-line client found on ``PATH`` (no SDK): what the machine's
Docker installation can do is what runs. ``docker info`` decides whether Docker is usable; when
it is not, ``ContainerUnavailable`` says so with the client's own words and the task's need —
nothing else is substituted for the task's container.

See docs/sandbox.md, "Containers".
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import signal
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Coroutine, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from pytest_srbench.core.container_spec import ContainerSpec, relative_path
from pytest_srbench.core.errors import UnavailableError
from pytest_srbench.sandbox.runner import TRUNCATED, SandboxResult

T = TypeVar("T")
CONTAINER_UNAVAILABLE = "BENCHMARK_CONTAINER_UNAVAILABLE"
CONTAINER_UNSUPPORTED = "BENCHMARK_CONTAINER_UNSUPPORTED"
LABEL = "srbench.container"  # every container and built image carries it (find / clean up)
KEEP_ALIVE = "while :; do sleep 3600; done"  # the container's init while the cell runs
STOP_ALL = ["kill", "-KILL", "-1"]  # after a timeout: every process but the container's init
INFO_TIMEOUT_S = 20.0
CONTROL_TIMEOUT_S = 60.0  # run, cp, rm, inspect
_GRACE_S = 1.0
_ISOLATION = {"filesystem": True, "processes": True, "environment": True, "user": False}


class ContainerUnavailable(UnavailableError):
    """The task needs a container and this machine cannot give it one; ``str()`` starts with
    the stable code (``BENCHMARK_CONTAINER_UNAVAILABLE`` or ``BENCHMARK_CONTAINER_UNSUPPORTED``)
    and says what the task needs and what Docker answered."""


@dataclass
class _Output:
    """The first ``cap`` bytes of a stream and its total length."""

    cap: int
    kept: bytearray = field(default_factory=bytearray)
    total: int = 0

    async def drain(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(1 << 16):
            self.total += len(chunk)
            self.kept += chunk[: max(0, self.cap - len(self.kept))]

    def text(self) -> str:
        text = self.kept.decode("utf-8", errors="replace")
        return text + TRUNCATED if self.total > self.cap else text


@dataclass(frozen=True)
class _Ran:
    code: int | None  # None: the wall clock ran out
    stdout: str
    stderr: str
    seconds: float


def docker_client() -> str | None:
    """The ``docker`` client on ``PATH`` (None when there is none)."""
    return shutil.which("docker")


async def _docker(
    client: str, args: list[str], timeout_s: float, output_bytes: int = 1 << 20
) -> _Ran:
    """Run ``docker ARGS`` to its end, its wall clock or the caller's cancellation (then the
    client is killed and reaped before the cancellation goes on)."""
    out, err = _Output(output_bytes), _Output(output_bytes)
    started = time.monotonic()
    proc = await asyncio.create_subprocess_exec(
        client,
        *args,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    readers = [asyncio.create_task(o.drain(s)) for o, s in ((out, proc.stdout), (err, proc.stderr))]
    timed_out = False
    try:
        try:
            await asyncio.wait_for(proc.wait(), timeout_s)
        except TimeoutError:
            timed_out = True
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
        if (await _to_the_end(asyncio.wait(readers, timeout=_GRACE_S)))[1]:
            for reader in readers:  # a stray process holds a pipe: stop reading it
                reader.cancel()
            transport = getattr(proc, "_transport", None)
            if transport is not None:
                transport.close()
        if proc.returncode is None:
            await _to_the_end(asyncio.wait_for(proc.wait(), _GRACE_S))
    return _Ran(
        None if timed_out else proc.returncode,
        out.text(),
        err.text(),
        round(time.monotonic() - started, 4),
    )


_usable: dict[tuple[str, str, str], str | None] = {}


async def docker_problem() -> str | None:
    """None when ``docker info`` succeeds with the client on ``PATH``; otherwise what is wrong
    (no client, or the client's own words). Checked once per client and ``DOCKER_HOST`` /
    ``DOCKER_CONTEXT`` per process."""
    client = docker_client()
    if client is None:
        return "no `docker` command on PATH"
    key = (client, os.environ.get("DOCKER_HOST", ""), os.environ.get("DOCKER_CONTEXT", ""))
    if key not in _usable:
        try:
            ran = await _docker(client, ["info", "--format", "{{.ServerVersion}}"], INFO_TIMEOUT_S)
        except OSError as error:
            _usable[key] = f"`docker info` could not start: {error}"
        else:
            if ran.code == 0:
                _usable[key] = None
            else:
                said = " ".join((ran.stderr or ran.stdout).split())[-400:] or "no output"
                ended = "timed out" if ran.code is None else f"exit code {ran.code}"
                _usable[key] = f"`docker info` said ({ended}): {said}"
    return _usable[key]


class TaskContainer:
    """One running container of a cell: commands, files in, files out."""

    def __init__(self, client: str, name: str, spec: ContainerSpec) -> None:
        self.client = client
        self.name = name
        self.spec = spec
        self.isolation = {**_ISOLATION, "network": not spec.allow_internet}

    async def run(
        self, command: str, *, timeout_s: float, output_bytes: int = 65536
    ) -> SandboxResult:
        """``sh -c command`` in the container's working directory; at the wall clock every
        process of the container but its init is killed (``kill -KILL -1``)."""
        ran = await _docker(
            self.client, ["exec", self.name, "sh", "-c", command], timeout_s, output_bytes
        )
        if ran.code is None:
            await _docker(self.client, ["exec", self.name, *STOP_ALL], CONTROL_TIMEOUT_S)
            reason = f"wall-clock timeout after {timeout_s:.1f} s"
            return SandboxResult(
                "timeout", None, ran.stdout, ran.stderr, ran.seconds, reason, self.isolation
            )
        if ran.code == 0:
            return SandboxResult("ok", 0, ran.stdout, ran.stderr, ran.seconds, None, self.isolation)
        if ran.code == 137:
            status, reason = "limit", "killed by SIGKILL (likely the container's memory limit)"
        elif ran.code in (125, 126) and not ran.stdout:
            status, reason = "failed", f"docker exec failed ({ran.code}): {ran.stderr[-300:]}"
        else:
            status, reason = "failed", f"exit code {ran.code}"
        return SandboxResult(
            status,  # type: ignore[arg-type]
            ran.code,
            ran.stdout,
            ran.stderr,
            ran.seconds,
            reason,
            self.isolation,
        )

    async def put_files(self, files: Mapping[str, str], directory: str) -> None:
        """Copy text files into ``directory`` (absolute, made if missing) of the container."""
        if not directory.startswith("/"):
            raise ValueError(f"container directory must be absolute: {directory!r}")
        staging = Path(tempfile.mkdtemp(prefix="srbench-container-files-"))
        try:
            for name, text in files.items():
                target = staging / relative_path(name, "files")
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
            await self._control(["exec", self.name, "mkdir", "-p", directory], "mkdir")
            await self._control(["cp", f"{staging}/.", f"{self.name}:{directory}"], "cp")
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    async def read_text(self, path: str) -> str | None:
        """The text of a file in the container, None when it does not exist."""
        ran = await _docker(self.client, ["exec", self.name, "cat", path], CONTROL_TIMEOUT_S)
        return ran.stdout if ran.code == 0 else None

    async def _control(self, args: list[str], what: str) -> _Ran:
        ran = await _docker(self.client, args, CONTROL_TIMEOUT_S)
        if ran.code != 0:
            said = " ".join(ran.stderr.split())[-400:]
            raise ContainerUnavailable(f"{CONTAINER_UNAVAILABLE}: docker {what} failed: {said}")
        return ran


async def _image(client: str, spec: ContainerSpec, labels: Mapping[str, str]) -> str:
    """The image to run: the named one (pulled when not present) or the one built from the
    Dockerfile and its context (built once per content)."""
    image = spec.image or spec.build_tag()
    present = await _docker(client, ["image", "inspect", "--format", "{{.Id}}", image], 60.0)
    if present.code == 0:
        return image
    if spec.image:
        pulled = await _docker(client, ["pull", image], spec.build_timeout_s)
        if pulled.code != 0:
            raise ContainerUnavailable(
                f"{CONTAINER_UNAVAILABLE}: {spec.need()}; `docker pull {image}` failed: "
                f"{_said(pulled, spec.build_timeout_s)}"
            )
        return image
    context = Path(tempfile.mkdtemp(prefix="srbench-container-build-"))
    try:
        for name, data in spec.context.items():
            target = context / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(data)
        dockerfile = context / ".srbench.Dockerfile"
        dockerfile.write_text(spec.dockerfile or "", encoding="utf-8")
        flags = [f"--label={key}={value}" for key, value in {LABEL: "1", **labels}.items()]
        built = await _docker(
            client,
            ["build", "-t", image, *flags, "-f", str(dockerfile), str(context)],
            spec.build_timeout_s,
        )
    finally:
        await asyncio.shield(asyncio.to_thread(shutil.rmtree, context, True))
    if built.code != 0:
        raise ContainerUnavailable(
            f"{CONTAINER_UNAVAILABLE}: {spec.need()}; `docker build` failed: "
            f"{_said(built, spec.build_timeout_s)}"
        )
    return image


def _said(ran: _Ran, timeout_s: float) -> str:
    if ran.code is None:
        return f"timed out after {timeout_s:.0f} s"
    return " ".join((ran.stderr or ran.stdout).split())[-400:] or f"exit code {ran.code}"


def run_arguments(
    name: str, image: str, spec: ContainerSpec, labels: Mapping[str, str]
) -> list[str]:
    """``docker run`` arguments: detached, labelled, limited (memory without extra swap, CPUs,
    processes, no network unless the task allows the internet), kept alive by a shell loop."""
    args = ["run", "-d", "--name", name]
    args += [f"--label={key}={value}" for key, value in {LABEL: "1", **labels}.items()]
    args += [f"--memory={spec.memory_mb}m", f"--memory-swap={spec.memory_mb}m"]
    args += [f"--cpus={spec.cpus:g}", f"--pids-limit={spec.pids}"]
    args += ["--security-opt=no-new-privileges"]
    if not spec.allow_internet:
        args.append("--network=none")
    return [*args, "--entrypoint", "sh", image, "-c", KEEP_ALIVE]


@contextlib.asynccontextmanager
async def open_container(
    spec: ContainerSpec, *, labels: Mapping[str, str]
) -> AsyncIterator[TaskContainer]:
    """A running container for one cell, removed (``docker rm -f``) when the block ends —
    normally, by an error, a timeout or a cancellation. ``ContainerUnavailable`` when Docker
    is not usable here or the image cannot be had."""
    if spec.compose is not None and spec.image is None and spec.dockerfile is None:
        raise ContainerUnavailable(
            f"{CONTAINER_UNSUPPORTED}: {spec.need()}; multi-container (compose) tasks are not "
            "supported by pytest-srbench's container runner"
        )
    problem = await docker_problem()
    client = docker_client()
    if problem is not None or client is None:
        raise ContainerUnavailable(
            f"{CONTAINER_UNAVAILABLE}: {spec.need()}; install Docker or start its daemon; {problem}"
        )
    image = await _image(client, spec, labels)
    name = f"srbench-{uuid.uuid4().hex[:16]}"
    try:
        started = await _docker(client, run_arguments(name, image, spec, labels), 120.0)
        if started.code != 0:
            raise ContainerUnavailable(
                f"{CONTAINER_UNAVAILABLE}: `docker run` of {image} failed: {_said(started, 120.0)}"
            )
        yield TaskContainer(client, name, spec)
    finally:
        await _to_the_end(_docker(client, ["rm", "-f", name], CONTROL_TIMEOUT_S))


async def _to_the_end(step: Coroutine[Any, Any, T]) -> T:
    """Await ``step`` to its end even when the caller is cancelled (again) meanwhile; the
    cancellation goes on afterwards."""
    task = asyncio.ensure_future(step)
    cancelled = False
    while True:
        try:
            result = await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.done() and task.cancelled():
                raise
            cancelled = True
            continue
        if cancelled:
            raise asyncio.CancelledError
        return result
