"""The files a SciCode step's test program finds next to it in the sandbox when the suite
has SciCode's numeric targets (``assets/test_data.h5``).

- ``targets.py`` becomes ``srbench_scicode_targets.py``: ``read_targets`` reads the targets of
  one step from the HDF5 file in SciCode's released layout.
- ``compare.py`` becomes ``scicode/compare/cmp.py``: the comparison helpers the released test
  snippets import (``from scicode.compare.cmp import cmp_tuple_or_list``).

Both are this project's own code; they run only inside the sandbox (they import h5py, numpy
and scipy there: the ``scicode`` extra).
"""

from __future__ import annotations

from pathlib import Path

TARGETS_MODULE = "srbench_scicode_targets"
_HERE = Path(__file__).parent


def sandbox_files() -> dict[str, str]:
    """Relative path -> source text of every file a step's program needs beside it."""
    return {
        f"{TARGETS_MODULE}.py": (_HERE / "targets.py").read_text(encoding="utf-8"),
        "scicode/__init__.py": "",
        "scicode/compare/__init__.py": "",
        "scicode/compare/cmp.py": (_HERE / "compare.py").read_text(encoding="utf-8"),
    }
