"""Side environments for real servers whose dependencies must not mix with ours: LiteLLM's
proxy and llama-cpp-python's server. Each lives in ``<cache>/<name>-venv`` and is built once."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from pytest_srbench.managed.common import cache_root

LITELLM = ("litellm", ["litellm[proxy]==1.108.7"])
LLAMA_CPP_PYTHON = ("llama-cpp-python", ["llama-cpp-python[server]==0.3.36"])
LOCKS = Path(__file__).with_name("locks")  # pinned dependencies of each side environment


def lock_file(name: str) -> Path:
    """The constraints file a side environment installs against (``locks/<name>.txt``)."""
    return LOCKS / f"{name}.txt"


def venv_python(name: str, cache: Path | None = None) -> Path:
    return (cache or cache_root()) / f"{name}-venv" / "bin" / "python"


def is_ready(name: str, cache: Path | None = None) -> bool:
    return (venv_python(name, cache).parent.parent / ".srbench-ready").exists()


def ensure_venv(
    spec: tuple[str, list[str]], cache: Path | None = None, *, log: Callable[[str], None] = print
) -> Path:
    """Create the side environment once and install its packages; return its python."""
    name, packages = spec
    python = venv_python(name, cache)
    marker = python.parent.parent / ".srbench-ready"
    if marker.exists():
        return python
    if not python.exists():
        subprocess.run([sys.executable, "-m", "venv", str(python.parent.parent)], check=True)
    log(f"installing {' '.join(packages)} into {python.parent.parent}")
    env = {"CMAKE_BUILD_PARALLEL_LEVEL": "2", "PATH": "/usr/local/bin:/usr/bin:/bin"}
    subprocess.run(
        [str(python), "-m", "pip", "install", "--quiet", "-c", str(lock_file(name)), *packages],
        check=True,
        env={**_environ(), **env},
    )
    marker.write_text("ok\n")
    return python


def _environ() -> dict[str, str]:
    import os

    return dict(os.environ)
