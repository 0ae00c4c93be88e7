"""`srbench datasets …` help and argument errors load neither the converters nor the fetch
libraries (pyarrow, huggingface_hub): each command imports them when it runs."""

import subprocess
import sys

import pytest

PROBE = """
import sys
from pytest_srbench.cli.main import main
try:
    main({args!r})
except SystemExit:
    pass
heavy = sorted(m for m in ("pyarrow", "huggingface_hub", "httpx", "pytest_srbench.datasets.formats",
                           "pytest_srbench.datasets.prepare", "pytest_srbench.datasets.fetch",
                           "pytest_srbench.datasets.realdata", "pytest_srbench.datasets.synth")
               if m in sys.modules)
print("loaded:", ",".join(heavy))
"""


@pytest.mark.parametrize(
    "args",
    [["--help"], ["datasets", "--help"], ["datasets", "fetch", "--help"],
     ["datasets", "fetch", "--profile", "nosuch"], ["datasets", "prepare", "--help"]],
)  # fmt: skip
def test_datasets_help_and_argument_errors_load_no_converter(args):
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(args=args)], capture_output=True, text=True
    )
    assert done.stdout.strip().splitlines()[-1] == "loaded:", done.stdout + done.stderr
