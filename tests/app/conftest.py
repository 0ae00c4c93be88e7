"""Fixtures shared by tests/app (defined in helper modules: no test module imports another)."""

from tests.app.recovery_helpers import interrupted  # noqa: F401
