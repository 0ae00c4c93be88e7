"""Runs sharded across invocations: the ``K/N`` shard spec and each shard's deterministic
share of a frozen plan (pure: no store, no processes)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pytest_srbench.core.errors import InputError

SHARD_FORM = "K/N with whole numbers 1 ≤ K ≤ N (e.g. 2/4)"


@dataclass(frozen=True)
class ShardSpec:
    """Shard ``index`` (1-based) of ``count`` shards."""

    index: int
    count: int

    @property
    def label(self) -> str:
        return f"{self.index}/{self.count}"


def parse_shard(text: str, *, source: str = "--srbench-shard") -> ShardSpec:
    """``"K/N"`` as a spec; anything else is an ``InputError`` naming the accepted form."""
    k, sep, n = text.strip().partition("/")
    if sep and k.strip().isdecimal() and n.strip().isdecimal():
        index, count = int(k), int(n)
        if 1 <= index <= count:
            return ShardSpec(index, count)
    raise InputError(f"{source} {text!r}: expected {SHARD_FORM}")


def shard_share(
    cells: Sequence[tuple[str, str]], benchmarks: Mapping[str, str], spec: ShardSpec
) -> list[tuple[str, str]]:
    """The cells of ``spec``'s shard, in plan order.

    Within each (benchmark, target) group the cells are dealt round-robin in plan order, each
    group starting one shard further than the one before, so every shard gets an equal share
    (±1) of every benchmark and target and the remainders spread over the shards. ``benchmarks``
    maps case id -> benchmark. The same plan always gives the same shares, and the shares of
    1..N partition the plan."""
    groups: dict[tuple[str, str], int] = {}  # group -> cells dealt so far
    offsets: dict[tuple[str, str], int] = {}  # group -> its first shard
    share = []
    for case_id, target_id in cells:
        group = (benchmarks[case_id], target_id)
        if group not in offsets:
            offsets[group] = len(offsets)
        dealt = groups.get(group, 0)
        groups[group] = dealt + 1
        if (dealt + offsets[group]) % spec.count == spec.index - 1:
            share.append((case_id, target_id))
    return share
