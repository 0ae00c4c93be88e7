"""The shard spec and each shard's share of a plan (pure)."""

from __future__ import annotations

from collections import Counter

import pytest

from pytest_srbench.core.errors import InputError
from pytest_srbench.core.shards import ShardSpec, parse_shard, shard_share


@pytest.mark.parametrize("text", ["0/3", "4/3", "a/b", "3", "1/0", "-1/2", "1/2/3", ""])
def test_a_bad_shard_names_the_accepted_form(text):
    with pytest.raises(InputError, match=r"expected K/N with whole numbers 1 ≤ K ≤ N"):
        parse_shard(text)


def test_a_shard_spec_reads_k_of_n():
    assert parse_shard(" 2/4 ") == ShardSpec(2, 4) and ShardSpec(2, 4).label == "2/4"


def test_the_shares_partition_the_plan_balanced_per_benchmark_and_target():
    # case-major: one target per shard if cells were dealt by plain position
    cases = [f"m{i}" for i in range(7)] + [f"g{i}" for i in range(3)]
    benchmarks = {c: "mmlu" if c.startswith("m") else "gpqa" for c in cases}
    cells = [(c, t) for c in cases for t in ("a", "b")]
    shares = [shard_share(cells, benchmarks, ShardSpec(k, 2)) for k in (1, 2)]
    assert sorted(shares[0] + shares[1]) == sorted(cells)
    assert not set(shares[0]) & set(shares[1])
    for share in shares:
        assert share == [cell for cell in cells if cell in share]  # plan order kept
        groups = Counter((benchmarks[c], t) for c, t in share)
        assert groups[("mmlu", "a")] in (3, 4) and groups[("gpqa", "b")] in (1, 2)
    assert abs(len(shares[0]) - len(shares[1])) <= 1
    assert shard_share(cells, benchmarks, ShardSpec(1, 1)) == cells
