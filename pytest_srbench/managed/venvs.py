"""Side environments for real servers whose dependencies must not mix with ours: LiteLLM's
proxy and llama-cpp-python's server. Each lives in ``<cache>/<name>-venv`` and is built once."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from pytest_srbench.managed.common import cache_root, cmake_compile_args

LITELLM = ("litellm", ["litellm[proxy]==1.108.7"])
LLAMA_CPP_PYTHON = ("llama-cpp-python", ["llama-cpp-python[server]==0.3.36"])
LOCKS = Path(__file__).with_name("locks")  # pinned dependencies of each side environment


def lock_file(name: str) -> Path:
    """The constraints file a side environment installs against (``locks/<name>.txt``)."""
    return LOCKS / f"{name}.txt"


def venv_python(name: str, cache: Path | None = None) -> Path:
    return (cache or cache_root()) / f"{name}-venv" / "bin" / "python"


def build_env(name: str) -> dict[str, str]:
    """What building the environment's packages from source is given: llama-cpp-python
    compiles llama.cpp, with the flags every llama.cpp build here has (``native_compile_flags``)."""
    if name != LLAMA_CPP_PYTHON[0] or not cmake_compile_args():
        return {}
    return {"CMAKE_ARGS": " ".join(f'"{arg}"' for arg in cmake_compile_args())}


def _marker_text(name: str) -> str:
    """What the ready marker holds: the build settings the environment was made with."""
    settings = build_env(name)
    return "ok\n" + "".join(f"{key}={value}\n" for key, value in sorted(settings.items()))


def is_ready(name: str, cache: Path | None = None) -> bool:
    """Made, and with today's build settings."""
    marker = venv_python(name, cache).parent.parent / ".srbench-ready"
    try:
        return marker.read_text() == _marker_text(name)
    except OSError:
        return False


def ensure_venv(
    spec: tuple[str, list[str]], cache: Path | None = None, *, log: Callable[[str], None] = print
) -> Path:
    """Create the side environment once and install its packages; return its python."""
    name, packages = spec
    python = venv_python(name, cache)
    marker = python.parent.parent / ".srbench-ready"
    if is_ready(name, cache):
        return python
    rebuild = marker.exists()  # made with other build settings: its packages built again
    marker.unlink(missing_ok=True)
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(python.parent.parent)], check=True)
    log(f"installing {' '.join(packages)} into {python.parent.parent}")
    settings = build_env(name)
    env = {"CMAKE_BUILD_PARALLEL_LEVEL": "2", "PATH": "/usr/local/bin:/usr/bin:/bin", **settings}
    # a wheel pip built and cached earlier was built with other settings: not reused
    fresh = ["--no-cache-dir", "--force-reinstall"] if settings or rebuild else []
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", *fresh, "-c", str(lock_file(name)),
         *packages],
        check=True,
        env={**_environ(), **env},
    )  # fmt: skip
    marker.write_text(_marker_text(name))
    return python


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)
