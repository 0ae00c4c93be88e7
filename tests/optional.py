"""The one policy for the optional parts of the test environment: the package's extras
(``embeddings``, ``scicode``, ``fetch``, ``postgres``), Debian's packages (PostgreSQL, sshd) and
the real parts (llama.cpp's server and model, LiteLLM, llama-cpp-python). Where a part is
missing its tests skip and say why, except under ``CI`` (``.ci/run`` sets it and installs
every part): there a missing part fails them."""

from __future__ import annotations

import importlib
import os
from types import ModuleType
from typing import NoReturn

import pytest


def parts_required() -> bool:
    """Whether every optional part must be there (``CI`` is set, as ``.ci/run`` sets it)."""
    return bool(os.environ.get("CI"))


def part_missing(reason: str) -> NoReturn:
    """Skip (a developer's machine without the part), or fail under ``CI``. Called while a
    test module is imported, it skips or fails the whole module."""
    __tracebackhide__ = True  # the skip is reported where the part is needed
    if parts_required():
        pytest.fail(f"{reason} (required under CI)", pytrace=False)
    pytest.skip(reason, allow_module_level=True)


def import_extra(module: str, extra: str) -> ModuleType:
    """``module``, which the package's ``extra`` installs; where it is not installed, the test
    (or, at import time, the test module) skips saying so, or fails under ``CI``."""
    __tracebackhide__ = True
    try:
        return importlib.import_module(module)
    except ImportError as error:
        part_missing(
            f"{module} is not installed ({error}): it comes with the '{extra}' extra, "
            f"`pip install -e '.[{extra}]'` (scripts/test installs every extra)"
        )
