"""The command-line choices stand for the registries they are kept apart from (so that the
parser loads nothing): they must name the same benchmarks."""

from pytest_srbench.core.plan.choices import (
    EXTENSION_NAMES,
    PACKAGE_NAMES,
    SR_BENCH_NAMES,
    SYNTH_PROFILES,
)
from pytest_srbench.core.plan.srbench import BENCHMARK_WEIGHTS, PROFILE_COUNTS
from pytest_srbench.datasets.formats import FORMATS
from pytest_srbench.datasets.realdata import PACKAGES
from pytest_srbench.datasets.sources import RELEASES
from pytest_srbench.datasets.synth import SYNTH_BENCHMARKS
from pytest_srbench.datasets.synth import SYNTH_PROFILES as WRITER_PROFILES


def test_choices_match_the_registries():
    assert set(SR_BENCH_NAMES) == set(BENCHMARK_WEIGHTS) == set(PROFILE_COUNTS)
    assert tuple(RELEASES) == SR_BENCH_NAMES  # fetch's order is the choices' order
    assert set(SYNTH_BENCHMARKS) == set(SR_BENCH_NAMES)
    assert sorted(FORMATS) == sorted((*SR_BENCH_NAMES, *EXTENSION_NAMES))
    assert tuple(sorted(PACKAGES)) == PACKAGE_NAMES
    assert tuple(WRITER_PROFILES) == SYNTH_PROFILES
