"""Side environments for real servers whose dependencies must not mix with ours: LiteLLM's
proxy and llama-cpp-python's server. Each lives in ``<cache>/<name>-venv`` and is built once.

llama-cpp-python is installed from the sdist ``sdist.py`` keeps (the one llama-server was
compiled from) with its own llama.cpp build turned off (``-DLLAMA_BUILD=OFF``): its package
then holds no library, and its server loads the ones built beside llama-server
(``proxies.LlamaCppPythonServer`` points it at them). llama.cpp is compiled once, not twice.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from pathlib import Path

from pytest_srbench.managed import sdist
from pytest_srbench.managed.common import cache_root, run_step

LITELLM = ("litellm", ["litellm[proxy]==1.108.7"])
LLAMA_CPP_PYTHON = ("llama-cpp-python", [f"llama-cpp-python[server]=={sdist.VERSION}"])
LOCKS = Path(__file__).with_name("locks")  # pinned dependencies of each side environment
READY = ".srbench-ready"  # in the environment's folder: made, with the settings it holds


def lock_file(name: str) -> Path:
    """The constraints file a side environment installs against (``locks/<name>.txt``)."""
    return LOCKS / f"{name}.txt"


def venv_python(name: str, cache: Path | None = None) -> Path:
    return (cache or cache_root()) / f"{name}-venv" / "bin" / "python"


def build_env(name: str) -> dict[str, str]:
    """What building the environment's packages from source is given: llama-cpp-python's build
    is told not to compile llama.cpp (its CMakeLists.txt's ``LLAMA_BUILD`` option)."""
    return {"CMAKE_ARGS": "-DLLAMA_BUILD=OFF"} if name == LLAMA_CPP_PYTHON[0] else {}


def _marker_text(name: str) -> str:
    """What the ready marker holds: the build settings the environment was made with. An
    environment made with others (llama-cpp-python compiling its own llama.cpp, before) is
    made again, once."""
    settings = build_env(name)
    return "ok\n" + "".join(f"{key}={value}\n" for key, value in sorted(settings.items()))


def is_ready(name: str, cache: Path | None = None) -> bool:
    """Made, and with today's build settings."""
    marker = venv_python(name, cache).parent.parent / READY
    try:
        return marker.read_text() == _marker_text(name)
    except OSError:
        return False


def requirements(
    spec: tuple[str, list[str]], cache: Path | None = None, log: Callable[[str], None] = print
) -> list[str]:
    """What pip installs: the spec's packages, llama-cpp-python's from the sdist file in the
    cache (downloaded and checked first if need be), so that pip neither looks it up nor
    downloads it again."""
    name, packages = spec
    if name != LLAMA_CPP_PYTHON[0]:
        return packages
    archive = sdist.fetch_sdist(cache, log=log)
    return [f"llama-cpp-python[server] @ {archive.resolve().as_uri()}"]


def ensure_venv(
    spec: tuple[str, list[str]], cache: Path | None = None, *, log: Callable[[str], None] = print
) -> Path:
    """Create the side environment once and install its packages; return its python."""
    name, _packages = spec
    python = venv_python(name, cache)
    marker = python.parent.parent / READY
    if is_ready(name, cache):
        return python
    rebuild = marker.exists()  # made with other build settings: its packages built again
    marker.unlink(missing_ok=True)
    if not python.exists():
        run_step(
            [sys.executable, "-m", "venv", str(python.parent.parent)], f"creating the {name} venv"
        )
    packages = requirements(spec, cache, log)
    log(f"installing {' '.join(packages)} into {python.parent.parent}")
    settings = build_env(name)
    env = {"CMAKE_BUILD_PARALLEL_LEVEL": "2", "PATH": "/usr/local/bin:/usr/bin:/bin", **settings}
    # a wheel pip built and cached earlier was built with other settings: not reused
    fresh = ["--no-cache-dir", "--force-reinstall"] if settings or rebuild else []
    run_step(
        [str(python), "-m", "pip", "install", "--quiet", *fresh, "-c", str(lock_file(name)),
         *packages],
        f"installing {name} into {python.parent.parent}",
        env={**os.environ, **env},
    )  # fmt: skip
    marker.write_text(_marker_text(name))
    return python
