"""A fork server for the pytest sessions the suite starts: each one a real, separate process.

The suite starts some 500 pytest sessions as subprocesses (``pytester.runpytest_subprocess``).
Most of what each costs is the interpreter importing pytest, aiohttp, pydantic and the standard
library again (0.5 s of CPU of a median 0.7 s, measured over a whole suite run). The server
imports those third-party and standard modules once, then forks for every session; the child
takes the caller's working directory, environment, arguments and standard streams and runs
``python -m pytest`` as a fresh interpreter would. Nothing of pytest-srbench, of the tests or
of the session's own folder is imported before the fork, so the package under test is imported
by each session as in a user's process.

Run as a script (never as ``tests.zygote``: a ``tests`` package imported before the fork would
shadow the one a test project has):

    python tests/zygote.py serve SOCKET       the server (tests/conftest.py starts one per worker)
    python tests/zygote.py run SOCKET ARGS…   one ``python -m pytest ARGS…`` through it

The ``run`` client stands in for the session's process: it passes its standard streams on,
forwards the signals a test sends it (SIGINT, SIGTERM, …) and exits as the session did (a
session killed by a signal makes the client kill itself with the same one). If the client is
killed (SIGKILL), the server kills the session at once. ``SRBENCH_TEST_ZYGOTE=0`` turns the
server off: every session then starts a fresh interpreter.
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import signal
import socket
import struct
import sys

_LENGTH = struct.Struct("!I")
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1)

# What a pytest-srbench session imports from outside the package (listed from a smoke session's
# sys.modules): loaded once in the server, shared by every session it forks.
PRELOAD = (
    "pytest",
    "_pytest.pytester",
    "_pytest.capture",
    "_pytest.junitxml",
    "_pytest.terminal",
    "_pytest.python",
    "_pytest.fixtures",
    "_pytest.assertion.rewrite",
    "_pytest.debugging",
    "execnet",
    "pluggy",
    "iniconfig",
    "pygments",
    "aiohttp",
    "aiohttp.web",
    "pydantic",
    "pydantic_core",
    "annotated_types",
    "typing_extensions",
    "typing_inspection",
    "jinja2",
    "markupsafe",
    "orjson",
    "yarl",
    "multidict",
    "frozenlist",
    "propcache",
    "aiosignal",
    "aiohappyeyeballs",
    "attr",
    "idna",
    "asyncio",
    "sqlite3",
    "ssl",
    "email.message",
    "email.utils",
    "http.client",
    "urllib.request",
    "concurrent.futures",
    "decimal",
    "fractions",
    "statistics",
    "uuid",
    "zoneinfo",
    "tomllib",
    "csv",
    "difflib",
    "pdb",
    "unittest",
    "xml.etree.ElementTree",
    "zipfile",
    "logging",
    "argparse",
    "subprocess",
    "tempfile",
    "secrets",
    "hmac",
    "platform",
    "ctypes",
)


def _send(sock: socket.socket, payload: bytes, fds: list[int] | None = None) -> None:
    data = _LENGTH.pack(len(payload)) + payload
    if fds:
        sent = socket.send_fds(sock, [data], fds)
        data = data[sent:]
    if data:
        sock.sendall(data)


def _receive(sock: socket.socket, *, max_fds: int = 0) -> tuple[bytes, list[int]]:
    """One length-prefixed message (and the descriptors sent with its first bytes); b"" at EOF."""
    buffer = b""
    fds: list[int] = []
    if max_fds:
        first, fds, _flags, _address = socket.recv_fds(sock, 65536, max_fds)
        buffer = first
    while len(buffer) < _LENGTH.size:
        chunk = sock.recv(65536)
        if not chunk:
            return b"", fds
        buffer += chunk
    (length,) = _LENGTH.unpack_from(buffer)
    while len(buffer) < _LENGTH.size + length:
        chunk = sock.recv(65536)
        if not chunk:
            return b"", fds
        buffer += chunk
    return buffer[_LENGTH.size : _LENGTH.size + length], fds


# -- the client: stands in for ``python -m pytest ARGS…`` ------------------------------------
def run_client(socket_path: str, args: list[str]) -> None:
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(socket_path)
    request = {"args": args, "cwd": os.getcwd(), "env": dict(os.environ)}
    _send(sock, json.dumps(request).encode(), [0, 1, 2])
    message, _ = _receive(sock)
    pid = int(message)
    for number in _FORWARDED:
        signal.signal(number, lambda received, _frame: os.kill(pid, received))
    message, _ = _receive(sock)  # the session's wait status (a forwarded signal retries: PEP 475)
    if not message:
        sys.exit(f"zygote: the server went away while session {pid} ran")
    status = int(message)
    if os.WIFSIGNALED(status):
        number = os.WTERMSIG(status)
        signal.signal(number, signal.SIG_DFL)
        os.kill(os.getpid(), number)
    sys.exit(os.waitstatus_to_exitcode(status))


# -- the server -------------------------------------------------------------------------------
def serve(socket_path: str) -> None:
    import importlib

    for name in PRELOAD:
        with contextlib.suppress(ImportError):
            importlib.import_module(name)
    base_path = [entry for entry in sys.path[1:] if entry]  # not this script's folder
    pythonpath = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    base_path = [entry for entry in base_path if entry not in pythonpath]

    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    listener.bind(socket_path)
    listener.listen(64)
    wake_read, wake_write = os.pipe()
    os.set_blocking(wake_write, False)
    os.set_blocking(wake_read, False)
    signal.set_wakeup_fd(wake_write)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    selector = selectors.DefaultSelector()
    selector.register(listener, selectors.EVENT_READ, "listen")
    selector.register(wake_read, selectors.EVENT_READ, "wake")
    sessions: dict[int, socket.socket] = {}  # pid -> the client's connection
    parent = os.getppid()
    print("ready", flush=True)
    try:
        while os.getppid() == parent:  # the test worker that started it is gone: stop
            for key, _events in selector.select(timeout=1.0):
                if key.data == "listen":
                    connection, _ = listener.accept()
                    message, fds = _receive(connection, max_fds=3)
                    if not message or len(fds) != 3:
                        connection.close()
                        for fd in fds:
                            os.close(fd)
                        continue
                    request = json.loads(message)
                    pid = os.fork()
                    if pid == 0:
                        os.close(wake_read)
                        os.close(wake_write)
                        selector.close()
                        listener.close()
                        connection.close()
                        for other in sessions.values():
                            other.close()
                        _session(request, fds, base_path)  # never returns
                    for fd in fds:
                        os.close(fd)
                    sessions[pid] = connection
                    selector.register(connection, selectors.EVENT_READ, pid)
                    _send(connection, str(pid).encode())
                elif key.data == "wake":
                    try:
                        while os.read(wake_read, 512):
                            pass
                    except BlockingIOError:
                        pass
                    _reap(sessions, selector)
                else:  # a client's connection: it only ever closes (the client was killed)
                    pid = key.data
                    if not key.fileobj.recv(1):  # type: ignore[union-attr]
                        selector.unregister(key.fileobj)
                        with contextlib.suppress(ProcessLookupError):
                            os.kill(pid, signal.SIGKILL)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(socket_path)


def _reap(sessions: dict[int, socket.socket], selector: selectors.BaseSelector) -> None:
    while sessions:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return
        if pid == 0:
            return
        connection = sessions.pop(pid, None)
        if connection is None:
            continue
        with contextlib.suppress(KeyError, ValueError):
            selector.unregister(connection)
        with contextlib.suppress(OSError):
            _send(connection, str(status).encode())
        connection.close()


def _session(request: dict, fds: list[int], base_path: list[str]) -> None:
    """In the forked child: become ``python -m pytest ARGS`` started in the caller's folder,
    with its environment and streams, then exit as that interpreter would."""
    import atexit
    import importlib
    import runpy
    import tempfile
    import threading
    import traceback

    signal.set_wakeup_fd(-1)
    for number in (signal.SIGCHLD, signal.SIGTERM, signal.SIGHUP, signal.SIGQUIT, signal.SIGUSR1):
        signal.signal(number, signal.SIG_DFL)
    signal.signal(signal.SIGINT, signal.default_int_handler)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    pythonpath = [p for p in request["env"].get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.path[:] = [os.getcwd(), *pythonpath, *base_path]
    sys.path_importer_cache.clear()
    importlib.invalidate_caches()
    sys.dont_write_bytecode = bool(request["env"].get("PYTHONDONTWRITEBYTECODE"))
    tempfile.tempdir = None  # found again from TMPDIR, as at a start
    sys.argv[:] = ["-m", *request["args"]]
    code: object = 0
    try:
        runpy.run_module("pytest", run_name="__main__", alter_sys=True)
    except SystemExit as exc:
        code = exc.code
    except KeyboardInterrupt:
        _finish()
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    except BaseException:
        traceback.print_exc()
        code = 1
    threading._shutdown()  # type: ignore[attr-defined]  (as the interpreter does at exit)
    atexit._run_exitfuncs()
    if code is None:
        code = 0
    elif not isinstance(code, int):
        print(code, file=sys.stderr)
        code = 1
    _finish()
    os._exit(code)


def _finish() -> None:
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(OSError, ValueError):
            stream.flush()


if __name__ == "__main__":
    command, path, *rest = sys.argv[1:]
    if command == "serve":
        serve(path)
    elif command == "run":
        run_client(path, rest)
    else:
        sys.exit(f"unknown command {command!r}")
