"""Synthetic suites: procedurally generated items in the row format of each sr-bench benchmark.

``srbench datasets synth --profile quick|standard`` writes ``<out>/<benchmark>/`` (``suite.json``
and ``cases.jsonl``, exactly the shipped suites' format) with as many rows as the profile's
selection needs, so those profiles run offline on the built-in simulator. Every item is generated
from the seed, nothing is copied: computed answers, grid rules, programs checked by running them,
agent plans replayed before they are written. A score on them says nothing about the benchmarks.

One module per benchmark builds its rows (``mmlu_pro``, ``gpqa``, ``hle``, ``simpleqa``, ``arc``,
``livecodebench``, ``scicode``, ``terminal_bench``, ``tau``); ``writer`` assembles and writes the
suites; ``common``, ``mcq`` and ``solutions`` hold what several of them share.
"""

from __future__ import annotations

from pytest_srbench.core.plan.choices import DEFAULT_SEED
from pytest_srbench.datasets.synth.common import SynthError
from pytest_srbench.datasets.synth.solutions import run_function_solution, run_stdin_solution
from pytest_srbench.datasets.synth.writer import (
    SYNTH_BENCHMARKS,
    SYNTH_PROFILES,
    SynthSummary,
    synth_count,
    synth_files,
    synth_rows,
    write_synthetic_suites,
)

__all__ = [
    "DEFAULT_SEED",
    "SYNTH_BENCHMARKS",
    "SYNTH_PROFILES",
    "SynthError",
    "SynthSummary",
    "run_function_solution",
    "run_stdin_solution",
    "synth_count",
    "synth_files",
    "synth_rows",
    "write_synthetic_suites",
]
