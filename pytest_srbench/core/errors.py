"""The one root of every error pytest-srbench raises on purpose, and its three kinds.

Each entry point (the pytest plugin, the ``srbench`` command, the service) catches
``SrbenchError`` once and shows ``str(error)``, which is one line written for the user; any
other exception is a bug and keeps its traceback.

- ``InputError``: what the user gave is wrong (configuration, dataset, plan, selection,
  baseline, an output path). Fix the input and run again.
- ``UnavailableError``: a part the run needs cannot be started or reached (the simulator, a
  managed server, the store, a sandbox, an index). Nothing the user typed is wrong.
- ``CallFailure`` (in ``core.calls.failures``): one target call failed; the cell records it
  and counts as wrong. It reaches an entry point only where a single call is the command.
"""

from __future__ import annotations


class SrbenchError(Exception):
    """Raised on purpose by pytest-srbench; ``str()`` is one line for the user."""


class InputError(SrbenchError, ValueError):
    """The user's input is wrong; the message says which part and why."""


class UnavailableError(SrbenchError, RuntimeError):
    """A part the command needs cannot be started or reached."""


def validation_message(problem: dict[str, object]) -> str:
    """One validation problem's message without pydantic's ``Value error, `` prefix (the
    message our own validators raise is the whole sentence)."""
    return str(problem["msg"]).removeprefix("Value error, ")
