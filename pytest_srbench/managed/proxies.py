"""LiteLLM's proxy in front of a llama-server (a real router with a fallback group), and
llama-cpp-python's own server (a real server that never sends usage when streaming), which
runs on the llama.cpp libraries built beside llama-server."""

from __future__ import annotations

import os
import secrets
import subprocess
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path

from pytest_srbench.managed.childwatch import remove_scratch, spawn_watched, terminate
from pytest_srbench.managed.common import (
    RealPartError,
    free_port,
    naming_log,
    wait_until_ready,
)
from pytest_srbench.managed.llama import default_threads, library_dir, server_binary
from pytest_srbench.managed.venvs import LITELLM, LLAMA_CPP_PYTHON, is_ready, venv_python

MASTER_KEY_ENV = "SRBENCH_LITELLM_KEY"
# Where llama-cpp-python loads llama.cpp from instead of its package's own lib/ folder (which
# is empty here): a folder each, read by its llama_cpp.py and mtmd_cpp.py (0.3.36).
LIBRARY_ENV = ("LLAMA_CPP_LIB_PATH", "MTMD_CPP_LIB")


def llama_cpp_python_env(libraries: Path, base: Mapping[str, str]) -> dict[str, str]:
    """``base`` with llama-cpp-python pointed at the llama.cpp libraries in ``libraries``."""
    return {**base, **dict.fromkeys(LIBRARY_ENV, str(libraries))}


@dataclass
class ManagedProcess:
    """A server process started in its own session (watching this process, so it never
    outlives it) and stopped by its process group."""

    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    port: int = 0
    log_path: Path | None = None
    scratch_dir: Path | None = field(default=None, repr=False)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def _scratch(self, name: str) -> Path:
        """The server's scratch folder (its config and log), made once, removed at stop."""
        if self.scratch_dir is None:
            self.scratch_dir = Path(tempfile.mkdtemp(prefix=f"srbench-{name}-"))
        return self.scratch_dir

    def _spawn(self, command: list[str], env: dict[str, str], name: str) -> None:
        self.port = self.port or free_port()
        folder = self._scratch(name)
        self.log_path = folder / f"{name}.log"
        with open(self.log_path, "ab") as log:
            self.process = spawn_watched(  # exits with this process, even on SIGKILL
                command,
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=folder,
                start_new_session=True,
            )

    def _terminate(self) -> None:
        if self.process is not None:
            terminate(self.process, grace_s=15, group=True)

    def stop(self) -> None:
        """Stop the server's process group and remove its scratch folder."""
        self._terminate()
        remove_scratch(self.scratch_dir)

    def _failed_start(self, error: RealPartError) -> RealPartError:
        """Stop a server that did not come up, keeping its log, which the error names."""
        self._terminate()
        return naming_log(error, self.log_path)


@dataclass
class LiteLLMProxy(ManagedProcess):
    """``litellm --config`` routing group ``smol`` to a llama-server, and a ``fallback-group``
    whose first backend is a dead port with ``smol`` as its fallback; ``extra_groups`` add
    groups served by other backends (e.g. a server that sends no streaming usage)."""

    backend_url: str = ""
    backend_model: str = "smollm2-135m"
    master_key: str = field(default_factory=lambda: "sk-srbench-" + secrets.token_hex(12))
    extra_groups: dict[str, str] = field(default_factory=dict)  # group -> another backend URL

    def config_yaml(self, dead_port: int) -> str:
        extra = "".join(
            f"""  - model_name: {group}
    litellm_params:
      model: openai/{self.backend_model}
      api_base: {url}
      api_key: none
"""
            for group, url in self.extra_groups.items()
        )
        return f"""model_list:
  - model_name: smol
    litellm_params:
      model: openai/{self.backend_model}
      api_base: {self.backend_url}
      api_key: none
{extra}  - model_name: fallback-group
    litellm_params:
      model: openai/{self.backend_model}
      api_base: http://127.0.0.1:{dead_port}/v1
      api_key: none
router_settings:
  fallbacks:
    - fallback-group: ["smol"]
litellm_settings:
  num_retries: 0
  request_timeout: 60
"""

    def start(self, timeout_s: float = 120.0) -> LiteLLMProxy:
        if not is_ready(LITELLM[0]):
            raise RealPartError("LiteLLM is not installed; run `srbench real build --litellm` once")
        python = venv_python(LITELLM[0])
        config = self._scratch("litellm") / "config.yaml"
        config.write_text(self.config_yaml(free_port()))
        env = {
            **os.environ,
            "LITELLM_MASTER_KEY": self.master_key,
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            "LITELLM_TELEMETRY": "False",
            "DISABLE_SCHEMA_UPDATE": "True",
        }
        litellm = python.parent / "litellm"
        self.port = self.port or free_port()
        command = [
            str(litellm),
            "--config",
            str(config),
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
        ]
        self._spawn(command, env, "litellm")
        try:
            wait_until_ready(
                f"http://127.0.0.1:{self.port}/health/liveliness",
                timeout_s=timeout_s,
                process=self.process,
            )
        except RealPartError as error:
            raise self._failed_start(error) from None
        return self


@dataclass
class LlamaCppPythonServer(ManagedProcess):
    """``python -m llama_cpp.server`` serving the GGUF (it ignores ``include_usage``), on the
    llama.cpp libraries of the cached llama-server build."""

    model: Path = Path()
    alias: str = "smollm2-135m"

    def start(self, timeout_s: float = 120.0) -> LlamaCppPythonServer:
        if not is_ready(LLAMA_CPP_PYTHON[0]):
            raise RealPartError(
                "llama-cpp-python is not installed; run `srbench real build --llama-cpp-python` once"
            )
        if server_binary() is None:
            raise RealPartError(
                f"llama.cpp's libraries are not built in {library_dir()}; run "
                "`srbench real build --llama-cpp-python` once"
            )
        python = venv_python(LLAMA_CPP_PYTHON[0])
        self.port = free_port()
        command = [
            str(python), "-m", "llama_cpp.server", "--model", str(self.model), "--host", "127.0.0.1",
            "--port", str(self.port), "--model_alias", self.alias, "--n_ctx", "2048",
            "--n_threads", str(default_threads()),
        ]  # fmt: skip
        self._spawn(command, llama_cpp_python_env(library_dir(), os.environ), "llama-cpp-python")
        try:
            wait_until_ready(
                f"http://127.0.0.1:{self.port}/v1/models", timeout_s=timeout_s, process=self.process
            )
        except RealPartError as error:
            raise self._failed_start(error) from None
        return self
