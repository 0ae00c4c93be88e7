"""The gate's verdicts: regression, non-inferiority, pairing, intervals, incomparable baselines."""

from __future__ import annotations

import pytest

from pytest_srbench.core.compare.design import gate_design
from pytest_srbench.core.compare.gate import evaluate_gate, holds
from pytest_srbench.core.compare.runs import compare
from pytest_srbench.core.models import Limits
from pytest_srbench.render.compare import gate_markdown
from tests.core.compare.helpers import side
from tests.core.helpers import case

MANY = [case("mmlu-pro", str(i)) for i in range(200)]
ALL = {c.id for c in MANY}
HALF = {c.id for c in MANY[:100]}
MOST = {c.id for c in MANY[:190]}


def test_holds() -> None:
    assert holds("regression", [-0.3, 0.0], 0.05)
    assert not holds("regression", [-0.3, -0.01], 0.05)
    assert holds("noninferiority", [-0.04, 0.1], 0.05)
    assert not holds("noninferiority", [-0.05, 0.1], 0.05)


def test_a_large_drop_fails_the_regression_gate() -> None:
    base = side("base", {"t": ALL}, cases=MANY)
    cand = side("cand", {"t": HALF}, cases=MANY)
    gate = evaluate_gate(base, cand, scope="macro")
    assert gate["passed"] is False
    assert gate["reason"] == "significant quality drop for t (upper bound below 0)"
    (target,) = gate["targets"]
    assert target["pairing"] == "same-target" and target["quality_delta"] == -0.5
    assert target["interval"][1] < 0
    assert gate["line"].startswith("srbench gate FAILED (regression, stratified Wald 95 %)")
    assert gate["comparison"]["comparisons"][0]["losses"] == 100


def test_no_change_passes_and_a_small_drop_is_not_a_regression() -> None:
    base = side("base", {"t": ALL}, cases=MANY)
    assert evaluate_gate(base, side("same", {"t": ALL}, cases=MANY))["passed"] is True
    slight = side("slight", {"t": {c.id for c in MANY[:199]}}, cases=MANY)
    gate = evaluate_gate(base, slight, scope="macro")
    assert gate["passed"] is True and gate["reason"] is None
    assert "t Δ -0.005" in gate["line"] and gate["line"].startswith("srbench gate PASSED")


def test_hoeffding_is_more_conservative_than_newcombe() -> None:
    base = side("base", {"t": ALL}, cases=MANY)
    cand = side("cand", {"t": MOST}, cases=MANY)  # 10 losses in 200
    newcombe = evaluate_gate(base, cand)
    hoeffding = evaluate_gate(base, cand, interval="hoeffding")
    assert newcombe["passed"] is False  # a significant drop of 5 points
    assert hoeffding["passed"] is True  # Hoeffding's ±0.19 radius cannot see it
    assert hoeffding["interval_method"] == "weighted-paired-hoeffding"


def test_noninferiority_needs_the_lower_bound_above_minus_margin() -> None:
    base = side("base", {"t": ALL}, cases=MANY)
    same = side("same", {"t": ALL}, cases=MANY)
    assert evaluate_gate(base, same, mode="noninferiority", margin=0.05)["passed"] is True
    gate = evaluate_gate(base, same, mode="noninferiority", margin=0.005, scope="macro")
    assert gate["passed"] is False
    assert "non-inferiority within 0.005 not shown for t" in gate["reason"]


def test_a_target_missing_from_the_baseline_is_paired_with_the_strongest_single() -> None:
    base = side("base", {"strong": ALL, "weak": HALF}, cases=MANY)
    cand = side("cand", {"strong": ALL, "new": ALL}, cases=MANY)
    gate = evaluate_gate(base, cand)
    pairing = {t["target_id"]: (t["baseline_target_id"], t["pairing"]) for t in gate["targets"]}
    assert pairing == {
        "strong": ("strong", "same-target"),
        "new": ("strong", "strongest-single-baseline"),
    }
    assert "new vs strong" in gate["line"]


def test_the_gate_json_holds_one_delta_per_target_and_names_its_pairing() -> None:
    """Baseline: strong right on all 200 cases, weak on the first 100. The candidate's weak
    is unchanged (100 right) and new is right on all 200.
    The gate pairs weak with weak: Δ = 0.5 − 0.5 = 0. sr-bench's pairing (strongest single)
    would put weak at 0.5 − 1.0 = −0.5 beside it; the embedded comparison now holds the gate's
    rows only, each naming its pairing."""
    base = side("base", {"strong": ALL, "weak": HALF}, cases=MANY)
    cand = side("cand", {"weak": HALF, "new": ALL}, cases=MANY)
    gate = evaluate_gate(base, cand)
    comparison = gate["comparison"]
    assert comparison["pairing"] == "same-target, else strongest-single-baseline"
    rows = {row["candidate_target_id"]: row for row in comparison["comparisons"]}
    for target in gate["targets"]:
        row = rows[target["target_id"]]
        assert row["baseline_target_id"] == target["baseline_target_id"]
        assert row["pairing"] == target["pairing"]
        assert row["quality_delta"] == target["quality_delta"]
    assert rows["weak"]["quality_delta"] == 0 and rows["weak"]["pairing"] == "same-target"
    assert rows["new"]["baseline_target_id"] == "strong"
    assert rows["new"]["pairing"] == "strongest-single-baseline"
    # srbench compare keeps sr-bench's pairing and says so
    plain = compare(base, cand)
    assert plain["pairing"] == "strongest-single-baseline"
    weak = next(r for r in plain["comparisons"] if r["candidate_target_id"] == "weak")
    assert (weak["baseline_target_id"], weak["quality_delta"]) == ("strong", -0.5)


def test_an_incomparable_baseline_fails_with_the_reason() -> None:
    base = side("base", {"t": ALL}, cases=MANY)
    other = side("cand", {"t": ALL}, cases=MANY, limits=Limits(max_output_chars=16))
    gate = evaluate_gate(base, other)
    assert gate["passed"] is False and gate["targets"] == []
    assert gate["reason"] == "baseline not comparable: Cannot compare runs with different limits"
    assert "is not comparable" in gate["line"]


def test_bad_gate_settings_are_rejected() -> None:
    base = side("base", {"t": ALL}, cases=MANY)
    with pytest.raises(ValueError, match="gate mode"):
        evaluate_gate(base, base, mode="strict")
    with pytest.raises(ValueError, match="gate interval"):
        evaluate_gate(base, base, interval="bootstrap")
    with pytest.raises(ValueError, match="gate scope"):
        evaluate_gate(base, base, scope="target")


# A quick-like mix (sizes as the quick profile's, mmlu-pro cut to 200): the same model on
# both sides, except that the candidate lost 50 of mmlu-pro's 160 right answers.
SIZES = {"arc-agi-2": 12, "gpqa-diamond": 40, "hle": 40, "livecodebench": 30, "mmlu-pro": 200,
         "scicode": 3, "simpleqa-verified": 100, "tau3": 12, "terminal-bench-2.1": 3}  # fmt: skip
MIX = [case(b, str(i)) for b, n in SIZES.items() for i in range(n)]
RIGHT = {c.id for c in MIX if int(c.id.rsplit("/", 1)[1]) % 5 != 0}  # 80 % right everywhere
DROPPED = RIGHT - {f"mmlu-pro/{i}" for i in range(1, 200) if i % 5 != 0 and i <= 62}


def test_the_benchmark_scope_catches_a_drop_confined_to_one_benchmark() -> None:
    """mmlu-pro falls from 160/200 to 110/200 (Δ −0.25, 50 discordant cases); nothing else
    changes. Macro Δ = 0.1 · (−0.25) = −0.025.

    Macro scope (stratified Wald): mmlu-pro's second moment (50 + 1)/201 = 0.253731 adds
    0.01 · 0.253731/200 = 0.0000127; every other benchmark agrees on every case and adds its
    floor ω² · 1/((n + 1) n): scicode and terminal-bench 0.01/12 = 0.000833 each, arc-agi-2
    and tau3 0.01/156 = 0.000064 each, gpqa-diamond and hle 0.0225/1640 = 0.0000137 each,
    livecodebench 0.01/930 = 0.0000108, simpleqa 0.01/10100 = 0.000001; variance 0.001847,
    half-width 1.96 · 0.04298 = 0.08423 → [−0.1092, +0.0592]: passes.

    Benchmark scope: z = Φ⁻¹(1 − 0.05/18) = 2.7729 (Bonferroni over 9). mmlu-pro:
    −0.25 ± 2.7729 · √(0.253731/200) = −0.25 ± 0.0988 → [−0.3488, −0.1512]: FAIL."""
    base = side("base", {"t": RIGHT}, cases=MIX)
    cand = side("cand", {"t": DROPPED}, cases=MIX)
    macro = evaluate_gate(base, cand)
    assert macro["passed"] is True
    (target,) = macro["targets"]
    assert target["quality_delta"] == pytest.approx(-0.025)
    assert target["interval"] == pytest.approx([-0.1092, 0.0592], abs=1e-4)

    scoped = evaluate_gate(base, cand, scope="benchmark")
    assert scoped["passed"] is False and scoped["scope"] == "benchmark"
    assert scoped["reason"] == (
        "significant quality drop in at least one benchmark for t (upper bound below 0)"
    )
    (target,) = scoped["targets"]
    rows = {b["benchmark"]: b for b in target["benchmarks"]}
    assert [name for name, b in rows.items() if not b["passed"]] == ["mmlu-pro"]
    assert rows["mmlu-pro"]["delta"] == pytest.approx(-0.25)
    assert rows["mmlu-pro"]["interval"] == pytest.approx([-0.3488, -0.1512], abs=1e-4)
    assert scoped["line"].startswith(
        "srbench gate FAILED (regression, per benchmark, stratified Wald 95 % "
        "Bonferroni-adjusted over 9) against base: t mmlu-pro Δ -0.250 [-0.349, -0.151] FAIL"
    )
    assert scoped["design"]["confidence"] == pytest.approx(1 - 0.05 / 9)
    # the GitHub step summary: the design, then a row per benchmark
    report = {"run_id": "cand", "status": "completed", "profile": "quick"}
    summary = gate_markdown(scoped, report)
    assert "Design: design power " in summary
    assert (
        "| t | t | mmlu-pro | 200 | 0.800 | 0.550 | -0.250 | [-0.349, -0.151] | FAIL |" in summary
    )
    assert "| t | t | scicode | 3 | 0.667 | 0.667 | +0.000 |" in summary


def test_every_verdict_carries_the_designs_power() -> None:
    """The design of the 200-case mmlu-pro plan above, regression at margin 0.05:
    at discordance ½ the expected half-width is 1.96 · √((200 · ½ + 1)/(201 · 200)) = 0.09824
    and the estimate's sd √((½ − 0.05²)/200) = 0.04987, so the power to see a 0.05 drop is
    Φ((0.05 − 0.09824)/0.04987) = Φ(−0.967) = 16.7 %. At a tenth: half-width
    1.96 · √((200 · 0.1 + 1)/(201 · 200)) = 0.04480, sd √(0.0975/200) = 0.02208, power
    Φ(0.236) = 59 %."""
    base = side("base", {"t": ALL}, cases=MANY)
    gate = evaluate_gate(base, side("same", {"t": ALL}, cases=MANY), scope="macro")
    design = gate["design"]
    assert design["scope"] == "macro" and design["cases"] == 200
    worst = next(p for p in design["power"] if p["discordance"] == 0.5)
    assert worst["power"] == pytest.approx(0.167, abs=1e-3)
    assert gate["line"].endswith(
        "— design power 17 % to detect a macro drop of 0.05 if half the cases differ "
        "(59 % if a tenth do)"
    )


def test_a_noninferiority_gate_no_rerun_can_pass_is_not_usable() -> None:
    """The smoke profile: the identical re-run's half-width is 1.96 · √Σ ω_b² · 1/((n_b + 1) n_b)
    = 1.96 · √(2 · 0.005 [scicode, terminal-bench: 0.01/2] + 2 · 0.001667 [arc-agi-2,
    livecodebench: 0.01/6] + 2 · 0.001125 [gpqa, hle: 0.0225/20] + 0.000833 [tau3]
    + 0.000333 [simpleqa] + 0.000048 [mmlu-pro]) = 1.96 · √0.016797 = 0.2540 ≥ 0.05."""
    names = sorted(SIZES)
    smoke = [2, 4, 4, 2, 14, 1, 5, 3, 1]
    weights = [0.1, 0.15, 0.15, 0.1, 0.1, 0.1, 0.1, 0.1, 0.1]
    design = gate_design(names, smoke, weights, mode="noninferiority", margin=0.05)
    assert design["identical_rerun_half_width"] == pytest.approx(0.2540, abs=1e-4)
    assert design["usable"] is False
    assert "can never pass at this plan's size (36 cases over 9 benchmarks)" in design["problem"]
    assert "It needs about 225 cases at this benchmark mix" in design["problem"]
    wide = gate_design(names, smoke, weights, mode="noninferiority", margin=0.3)
    assert wide["usable"] is True and wide["problem"] is None
    # a regression gate always can pass; per benchmark at one case each it can never fail
    ones = gate_design(names, [1] * 9, weights, mode="regression", margin=0.05, scope="benchmark")
    assert ones["usable"] is False and "can never fail" in ones["problem"]


# A user's session: four benchmarks of 14 cases; the candidate keeps every answer but
# mmlu-pro's, which collapses from 12/14 right to 0/14.
FOUR = ("mmlu-pro", "gpqa-diamond", "hle", "simpleqa-verified")
USER = [case(b, str(i)) for b in FOUR for i in range(14)]
USER_RIGHT = {c.id for c in USER if int(c.id.rsplit("/", 1)[1]) < 12}
COLLAPSED = {i for i in USER_RIGHT if not i.startswith("mmlu-pro/")}


def test_a_session_that_is_not_the_full_set_is_gated_per_benchmark_by_default() -> None:
    """mmlu-pro: Δ = −12/14 = −0.857 with 12 discordant cases; its floored second moment
    (12 + 1)/15 = 0.8667 gives ±2.4977 · √(0.8667/14) = ±0.621 (Bonferroni over 4):
    [−1.479, −0.236] clamped to [−1, −0.236], a failure. The other three are unchanged."""
    base = side("base", {"app": USER_RIGHT}, cases=USER)
    cand = side("cand", {"app": COLLAPSED}, cases=USER)
    gate = evaluate_gate(base, cand)
    assert gate["scope"] == "benchmark" and gate["scope_default"] is True
    assert gate["scope_reason"] == "this session is not the full sr-bench set"
    assert gate["passed"] is False
    assert gate["line"].startswith(
        "srbench gate FAILED (regression, per benchmark: this session is not the full sr-bench "
        "set; stratified Wald 95 % Bonferroni-adjusted over 4) against base: app mmlu-pro "
        "Δ -0.857 [-1.000, -0.236] FAIL"
    )
    rows = {b["benchmark"]: b for b in gate["targets"][0]["benchmarks"]}
    assert set(rows) == set(FOUR)
    assert rows["mmlu-pro"]["baseline_accuracy"] == pytest.approx(12 / 14)
    assert rows["mmlu-pro"]["candidate_accuracy"] == 0
    assert [n for n, b in rows.items() if not b["passed"]] == ["mmlu-pro"]
    # an explicit scope still wins, and says nothing of a default
    macro = evaluate_gate(base, cand, scope="macro")
    assert macro["scope"] == "macro" and macro["scope_default"] is False
    assert macro["scope_reason"] == "asked for"
    assert macro["line"].startswith("srbench gate FAILED (regression, stratified Wald 95 %)")
    # the macro verdict carries every benchmark's Δ too, at 95 % each (shown, not gated)
    shown = {b["benchmark"]: b for b in macro["targets"][0]["benchmarks"]}
    assert shown["mmlu-pro"]["delta"] == pytest.approx(-12 / 14)
    assert shown["mmlu-pro"]["interval"][1] < rows["mmlu-pro"]["interval"][1]  # narrower


def test_the_full_sr_bench_set_keeps_the_macro_default() -> None:
    base = side("base", {"t": RIGHT}, cases=MIX)
    gate = evaluate_gate(base, side("cand", {"t": DROPPED}, cases=MIX))
    assert gate["scope"] == "macro" and gate["scope_default"] is True
    assert gate["scope_reason"] == "this session is the full sr-bench set"
    assert gate["line"].startswith(
        "srbench gate PASSED (regression, macro: this session is the full sr-bench set; "
        "stratified Wald 95 %)"
    )
    assert len(gate["targets"][0]["benchmarks"]) == 9


def test_an_added_benchmark_is_reported_and_the_common_part_gated() -> None:
    """The baseline has three of the four benchmarks; the candidate adds simpleqa-verified and
    collapses on mmlu-pro: the gate reads the three it shares and names the fourth."""
    shared = [c for c in USER if not c.id.startswith("simpleqa-verified/")]
    base = side("base", {"app": USER_RIGHT & {c.id for c in shared}}, cases=shared)
    same = side("same", {"app": USER_RIGHT}, cases=USER)
    gate = evaluate_gate(base, same)
    assert gate["added_benchmarks"] == ["simpleqa-verified"]
    assert gate["removed_benchmarks"] == []
    assert gate["passed"] is True, gate["line"]
    assert [b["benchmark"] for b in gate["targets"][0]["benchmarks"]] == [
        "gpqa-diamond", "hle", "mmlu-pro"
    ]  # fmt: skip
    assert "— added (not gated): simpleqa-verified" in gate["line"]
    assert gate["comparison"]["comparisons"][0]["paired_cases"] == 42
    worse = evaluate_gate(base, side("worse", {"app": COLLAPSED}, cases=USER))
    assert worse["passed"] is False and "mmlu-pro Δ -0.857" in worse["line"]
    # the other way round: a benchmark the candidate dropped is removed, not gated
    back = evaluate_gate(same, base)
    assert back["removed_benchmarks"] == ["simpleqa-verified"] and back["passed"] is True
    assert "removed (not gated): simpleqa-verified" in back["line"]
    report = {"run_id": "same", "status": "completed", "profile": "quick"}
    assert "Added (not gated): simpleqa-verified" in gate_markdown(gate, report)


def test_no_benchmark_in_common_fails_clearly() -> None:
    mmlu = [c for c in USER if c.id.startswith("mmlu-pro/")]
    hle = [c for c in USER if c.id.startswith("hle/")]
    base = side("base", {"app": {c.id for c in mmlu}}, cases=mmlu)
    cand = side("cand", {"app": {c.id for c in hle}}, cases=hle)
    gate = evaluate_gate(base, cand)
    assert gate["passed"] is False and gate["targets"] == []
    assert gate["reason"] == (
        "baseline not comparable: no benchmark in common with the baseline base: it has "
        "mmlu-pro, this run hle"
    )
    assert gate["added_benchmarks"] == ["hle"] and gate["removed_benchmarks"] == ["mmlu-pro"]


def test_the_per_benchmark_lines_stay_in_columns_for_long_names() -> None:
    from pytest_srbench.render.compare import gate_terminal_lines

    long_name = "sim-large~a-rather-long-prompt-variant"
    gpqa = [case("gpqa-diamond", str(i)) for i in range(50)]
    both = MANY + gpqa
    correct = {c.id for c in both}
    base = side("base", {"t": correct, long_name: correct}, cases=both)
    cand = side("cand", {"t": correct, long_name: correct}, cases=both)
    gate = evaluate_gate(base, cand, scope="benchmark")
    rows = [line for line in gate_terminal_lines(gate) if "→" in line]
    assert len(rows) == 4
    assert len({line.index("→") for line in rows}) == 1, rows  # one column for every row
    assert all(line.split()[0] in ("t", long_name) for line in rows)
