"""Oracle of the comparison's bootstrap: ``stratified_bootstrap_reference`` is the stratified
percentile bootstrap exactly as sr-bench's definition reads, a plain loop over Python's
``random.Random``. The package runs it vectorised (``core.compare.paired.stratified_bootstrap``);
``tests/core/compare/test_paired.py`` holds the two bit-identical, and ``bench/comparison.py``
times one against the other.
"""

from __future__ import annotations

import math
import random
from collections.abc import Sequence

from pytest_srbench.core.compare.paired import (
    BOOTSTRAP_HIGH_INDEX,
    BOOTSTRAP_LOW_INDEX,
    BOOTSTRAP_RESAMPLES,
    BOOTSTRAP_SEED,
    Group,
)


def stratified_bootstrap_reference(
    groups: Sequence[Group],
    weights: Sequence[float],
    *,
    seed: int = BOOTSTRAP_SEED,
    resamples: int = BOOTSTRAP_RESAMPLES,
) -> list[float]:
    """``core.compare.paired.stratified_bootstrap``'s definition, read literally: one draw of
    ``random.Random(seed)`` at a time. Slow."""
    rng = random.Random(seed)
    samples = []
    for _ in range(resamples):
        value = 0.0
        for group, weight in zip(groups, weights, strict=True):
            size = len(group)
            picked = [group[math.floor(rng.random() * size)] for _ in range(size)]
            value += sum(picked) / size * weight
        samples.append(value)
    samples.sort()
    low = round(resamples * BOOTSTRAP_LOW_INDEX / BOOTSTRAP_RESAMPLES)
    high = round(resamples * BOOTSTRAP_HIGH_INDEX / BOOTSTRAP_RESAMPLES)
    return [samples[low], samples[high]]
