"""The commands the product prints for a person to run, spelled so that a shell runs them as
printed: every option in ``--opt=VALUE`` form (pytest settles its rootdir before it knows
srbench's options, and would take a spaced value for a test path), each word quoted where a
shell would split it, and the store named whenever it is not the default one.
"""

from __future__ import annotations

import shlex


def pytest_recover_command(
    plan: str, run_key: str, *, store: str | None = None, acknowledge_new_attempt: bool = False
) -> str:
    """``pytest`` running a reviewed recovery child."""
    words = ["pytest", f"--srbench-recover={plan}", f"--srbench-run-key={run_key}"]
    if store:
        words.append(f"--srbench-store={store}")
    if acknowledge_new_attempt:
        words.append("--srbench-acknowledge-new-attempt")
    return shlex.join(words)


def srbench_command(store: str | None, *words: str) -> str:
    """An ``srbench`` command on ``store`` (None: the default store, ``.srbench``)."""
    return shlex.join(["srbench", *([f"--store={store}"] if store else []), *words])
