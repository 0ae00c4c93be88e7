"""Keep this package's own modules out of pytest's assertion rewriting.

pytest marks every top-level package of a distribution with a ``pytest11`` entry point for
assertion rewriting (``Config._mark_plugins_for_rewrite``), so each module of pytest-srbench
would load through its ``AssertionRewritingHook``: parsed, rewritten and compiled again on every
start when the rewritten bytecode cannot be cached (``PYTHONDONTWRITEBYTECODE=1``, common in CI
and containers; +0.5 s CPU per start, issue 48). The package's ``assert`` statements are
internal invariants, not checks a user reads; a user's test files and conftests are still
rewritten as always (by their names, not by this mark).

pytest offers no public way to unmark a name: this reaches into the hook's ``_must_rewrite``
set and ``_marked_for_rewrite_cache`` dict, each read with ``getattr`` and left alone when
pytest changes them (then the package is merely rewritten, as before);
``tests/plugin/test_entry.py`` fails if they change.
"""

from __future__ import annotations

import sys
from typing import Any

PACKAGE = "pytest_srbench"


def unmark(hook: Any, package: str = PACKAGE) -> bool:
    """Remove ``package`` from an assertion-rewriting hook's marked names; True when done."""
    marked = getattr(hook, "_must_rewrite", None)
    cache = getattr(hook, "_marked_for_rewrite_cache", None)
    if not isinstance(marked, set) or not isinstance(cache, dict):
        return False
    marked.discard(package)
    cache.clear()  # names already looked up are decided again, without the mark
    return True


def unmark_installed_hooks(package: str = PACKAGE) -> bool:
    """Unmark ``package`` in the rewriting hook pytest installed (``sys.meta_path``), before
    the rest of the package is imported; True when a hook was found and changed."""
    done = False
    for finder in sys.meta_path:
        if type(finder).__name__ == "AssertionRewritingHook":
            done = unmark(finder, package) or done
    return done
