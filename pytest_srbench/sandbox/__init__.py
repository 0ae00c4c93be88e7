"""A sandbox for model-generated code: one isolated, resource-limited process group per run.

See docs/sandbox.md for what is isolated on which machine.
"""

from pytest_srbench.sandbox.runner import (
    SandboxError,
    SandboxLimits,
    SandboxResult,
    isolation_report,
    run_python,
    run_python_sync,
    run_shell,
    run_shell_sync,
)

__all__ = [
    "SandboxError",
    "SandboxLimits",
    "SandboxResult",
    "isolation_report",
    "run_python",
    "run_python_sync",
    "run_shell",
    "run_shell_sync",
]
