"""Per-target metrics as the report computes them (``core.report.running.MetricRunner``):
worked example 3 and the null-versus-zero rules of §3 and §9."""

import pytest

from tests.core.helpers import call, result
from tests.core.report.feed import metric_of


def glm_rows():
    ids = [f"mmlu-pro/{i}" for i in range(14)]
    results = [result(case_id, "glm", correct=i < 9) for i, case_id in enumerate(ids[:13])]
    results.append(result(ids[13], "glm", status="failed", correct=None, error="Target HTTP 500"))
    calls = [call(case_id, "glm", 0.002) for case_id in ids[:13]]
    calls.append(call(ids[13], "glm", None, status="failed", usage=None))
    return ids, results, calls


def test_example_3_failed_case_in_a_14_case_run():
    ids, results, calls = glm_rows()
    metric = metric_of(ids, results, calls, "glm")
    assert metric["total"] == 14
    assert metric["completed"] == 13
    assert metric["scored"] == 13
    assert metric["failed"] == 1
    assert metric["pending"] == 0
    assert metric["correct"] == 9
    assert metric["accuracy"] == 9 / 14 == 0.6428571428571429
    assert metric["complete"] is False
    assert metric["cost_usd"] is None
    assert metric["known_cost_usd"] == pytest.approx(0.026)
    assert metric["total_spend_usd"] is None
    assert metric["tokens"] is None


def test_pending_cells_count_in_denominator_and_null_out_spend():
    ids = ["b/1", "b/2", "b/3"]
    results = [result("b/1", "t"), result("b/2", "t")]
    calls = [call("b/1", "t"), call("b/2", "t")]
    metric = metric_of(ids, results, calls)
    assert metric["pending"] == 1
    assert metric["accuracy"] == pytest.approx(2 / 3)
    assert metric["cost_usd"] is None and metric["tokens"] is None and metric["call_count"] is None
    assert metric["total_spend_usd"] is None and metric["cache_neutral_cost_usd"] is None
    assert metric["known_cost_usd"] == pytest.approx(0.004)


def test_complete_run_sums_everything_and_judge_cost_is_apart():
    ids = ["b/1", "b/2"]
    results = [result(i, "t") for i in ids]
    calls = [call(i, "t", 0.01) for i in ids] + [call("b/1", "t", 0.005, role="judge", id="j1")]
    metric = metric_of(ids, results, calls)
    assert metric["complete"] is True
    assert metric["cost_usd"] == pytest.approx(0.02)
    assert metric["evaluation_cost_usd"] == pytest.approx(0.005)
    assert metric["total_spend_usd"] == pytest.approx(0.025)
    assert metric["tokens"] == {
        "input_tokens": 20,
        "cached_input_tokens": 0,
        "cache_write_tokens": 0,
        "output_tokens": 4,
    }
    assert (
        metric["request_count"] == 2
        and metric["call_count"] == 2
        and metric["evaluation_call_count"] == 1
    )


def test_unknown_judge_cost_makes_evaluation_and_total_null_but_not_subject():
    ids = ["b/1"]
    calls = [call("b/1", "t", 0.01), call("b/1", "t", None, role="judge", id="j1")]
    metric = metric_of(ids, [result("b/1", "t")], calls)
    assert metric["cost_usd"] == pytest.approx(0.01)
    assert metric["evaluation_cost_usd"] is None
    assert metric["total_spend_usd"] is None


def test_no_auxiliary_calls_means_zero_evaluation_cost():
    metric = metric_of(["b/1"], [result("b/1", "t")], [call("b/1", "t")])
    assert metric["evaluation_cost_usd"] == 0


def test_empty_target_has_null_accuracy():
    metric = metric_of([], [], [])
    assert metric["accuracy"] is None and metric["accuracy_ci95"] is None


def test_selected_models_and_pending_selection_example_23():
    calls = [
        call("b/1", "t", status="sent", model="alias", selected_model=None, id="c1"),
        call("b/1", "t", model="actual-backend", selected_model=None, id="c2"),
        call(
            "b/1", "t", status="failed", model=None, selected_model="acknowledged-backend", id="c3"
        ),
    ]
    metric = metric_of(["b/1"], [result("b/1", "t")], calls)
    assert metric["selected_models"] == {"actual-backend": 1, "acknowledged-backend": 1}
    assert metric["pending_selection_count"] == 1


def test_cache_read_metrics_count_only_reported_calls():
    reported = call(
        "b/1",
        "t",
        cache_read_reported=True,
        usage={
            "input_tokens": 7,
            "cached_input_tokens": 2,
            "cache_write_tokens": 1,
            "output_tokens": 3,
        },
    )
    silent = call("b/2", "t", id="c2")
    metric = metric_of(["b/1", "b/2"], [result("b/1", "t"), result("b/2", "t")], [reported, silent])
    assert metric["cache_read_call_count"] == 1
    assert metric["cache_read_tokens"] == 2
    assert metric["cache_read_prompt_tokens"] == 10
    assert metric["cache_read_ratio"] == pytest.approx(0.2)


def test_cache_read_ratio_reads_the_kept_observation_not_the_last_usage_event():
    """A stream reported cached 2 of prompt 10, then a last usage event without cache fields
    (prompt 10, cached 0). The call is priced by the last event, but the cache-read metrics
    read the kept observation: ratio = 2 / (8 + 2 + 0) = 0.2 (the product read 0 / 10 = 0.0).
    An older receipt without ``cache_read_usage`` falls back to its usage; an unknown usage
    (an unverified correction) keeps the ratio unknown."""
    last = {
        "input_tokens": 10,
        "cached_input_tokens": 0,
        "cache_write_tokens": 0,
        "output_tokens": 3,
    }
    kept = {
        "input_tokens": 8,
        "cached_input_tokens": 2,
        "cache_write_tokens": 0,
        "output_tokens": 3,
    }
    streamed = call("b/1", "t", cache_read_reported=True, usage=last, cache_read_usage=kept)
    metric = metric_of(["b/1"], [result("b/1", "t")], [streamed])
    assert metric["tokens"] == last
    assert (metric["cache_read_tokens"], metric["cache_read_prompt_tokens"]) == (2, 10)
    assert metric["cache_read_ratio"] == pytest.approx(0.2)

    older = call("b/1", "t", cache_read_reported=True, usage=kept)
    metric = metric_of(["b/1"], [result("b/1", "t")], [older])
    assert metric["cache_read_ratio"] == pytest.approx(0.2)  # 2 / 10 from its usage

    unverified = call("b/1", "t", cache_read_reported=True, usage=None, cache_read_usage=kept)
    metric = metric_of(["b/1"], [result("b/1", "t")], [unverified])
    assert metric["cache_read_call_count"] == 1 and metric["cache_read_ratio"] is None


def test_output_diagnostics():
    results = [
        result("b/1", "t", details={"strict_format": True}),
        result(
            "b/2",
            "t",
            correct=False,
            details={"strict_format": False, "quality_failure": "output_limit"},
        ),
    ]
    calls = [
        call("b/1", "t"),
        call("b/2", "t", finish_reason="length", id="c2"),
        call("b/2", "t", finish_reason=None, id="c3"),
    ]
    diagnostics = metric_of(["b/1", "b/2", "b/3"], results, calls)["output_diagnostics"]
    assert diagnostics["output_limit_cases"] == 1
    assert diagnostics["strict_format"] == {
        "checked_cases": 2,
        "failed_cases": 1,
        "unassessed_cases": 1,
    }
    assert diagnostics["subject_calls"] == {
        "total": 3,
        "finish_reasons": {"length": 1, "stop": 1},
        "unknown_finish_reason": 1,
    }
