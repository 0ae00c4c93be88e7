"""Deterministic, seeded, stratified case selection for the smoke / quick / standard profiles.

Per stratum, cases are ordered by ``digest([seed, case_id])``. The global order takes the
first case of every stratum (strata sorted by name), then interleaves the remaining cases
proportionally by the key ``((i + 0.5) / len(stratum), stratum)``. ``smoke`` and ``quick``
take a prefix of that order (so smoke ⊂ quick); ``standard`` takes the block right after
the quick count, so it never overlaps quick. A shortfall is an error, never padding.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from pytest_srbench.core.canonical import pair_digest
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.plan.srbench import SR_BENCH_BENCHMARKS

SELECTION_NAME = "stratified-hash-v1"


class SelectionError(InputError):
    """A profile asks for more cases than the suite holds, or an unknown profile."""


class Shortfall(SelectionError):
    """A suite holds fewer cases than the profile selects."""

    def __init__(self, message: str, *, benchmark: str, profile: str) -> None:
        super().__init__(message)
        self.benchmark = benchmark
        self.profile = profile


def shortfalls_message(shortfalls: Sequence[Shortfall]) -> str:
    """One error for several benchmarks short of cases: each named, then one command that
    fetches every sr-bench one among them."""
    if len(shortfalls) == 1:
        return str(shortfalls[0])
    lines = [f"{len(shortfalls)} benchmarks have too few cases for this profile:"]
    lines += [f"  {str(item).split('. ', 1)[0]}" for item in shortfalls]
    fetchable = [item.benchmark for item in shortfalls if item.benchmark in SR_BENCH_BENCHMARKS]
    if fetchable:
        names = "" if set(fetchable) == SR_BENCH_BENCHMARKS else " ".join(fetchable) + " "
        lines.append(
            f"Fetch the released data: `srbench datasets fetch {names}"
            f"--profile {shortfalls[0].profile}` (see docs/suites.md)"
        )
    lines.append(
        f"Offline: write synthetic suites with `srbench datasets synth --profile "
        f"{shortfalls[0].profile}`; or use --srbench-limit / another profile"
    )
    return "\n".join(lines)


def stratified_order(
    items: Sequence[tuple[str, str]], seed: int, *, round_robin: bool = False
) -> list[str]:
    """Order ``(case_id, stratum)`` pairs; ``round_robin`` balances strata one by one."""
    strata: dict[str, list[str]] = defaultdict(list)
    for case_id, stratum in items:
        strata[stratum].append(case_id)
    for members in strata.values():
        members.sort(key=lambda case_id: pair_digest(seed, case_id))  # digest([seed, case_id])
    names = sorted(strata)
    if round_robin:
        ordered: list[str] = []
        depth = max((len(strata[name]) for name in names), default=0)
        for i in range(depth):
            ordered.extend(strata[name][i] for name in names if i < len(strata[name]))
        return ordered
    first = [strata[name][0] for name in names]
    rest = [
        ((i + 0.5) / len(strata[name]), name, case_id)
        for name in names
        for i, case_id in enumerate(strata[name])
        if i > 0
    ]
    rest.sort(key=lambda entry: (entry[0], entry[1]))
    return first + [case_id for _, _, case_id in rest]


def select_for_profile(
    ordered: Sequence[str],
    profile: str,
    counts: Mapping[str, int],
    *,
    benchmark: str,
    limit: int | None = None,
) -> list[str]:
    """Pick the profile's block of ``ordered``; ``limit`` keeps at most its first ``limit``
    (so a suite short of the whole block serves a limit its first cases reach)."""
    if profile not in counts:
        raise SelectionError(
            f"{benchmark}: it has no {profile!r} profile (its profiles: "
            f"{', '.join(p for p in ('smoke', 'quick', 'standard') if p in counts)})"
        )
    if limit is not None and limit < 1:
        raise SelectionError(f"--srbench-limit must be >= 1, got {limit}")
    wanted = counts[profile] if limit is None else min(counts[profile], limit)
    start = counts.get("quick", 0) if profile == "standard" else 0
    needed = start + wanted
    if len(ordered) < needed:
        detail = f" after the {start} quick cases" if start else ""
        if wanted < counts[profile]:
            detail += f" (--srbench-limit {limit} of its {counts[profile]})"
        real = (
            f"Fetch the released data: `srbench datasets fetch {benchmark} --profile {profile}`"
            if benchmark in SR_BENCH_BENCHMARKS
            else "Prepare the released dataset (srbench datasets prepare)"
        )
        raise Shortfall(
            f"{benchmark}: profile {profile!r} needs {wanted} cases{detail}, but the suite has "
            f"{len(ordered)} in all. {real} (see docs/suites.md), or, offline, write synthetic "
            f"suites with `srbench datasets synth --profile {profile}`, or use --srbench-limit "
            "/ another profile",
            benchmark=benchmark,
            profile=profile,
        )
    return list(ordered[start:needed])
