"""The whole report: macro accuracy and score scope (example 4), report model validation,
worked examples 9 and 10 end to end, the §9 null rules through the report, continuity,
the per-decision breakdown and the preview overrides (§4.3)."""

import json

import pytest

from pytest_srbench.core.calls.receipts import receipt_fields
from pytest_srbench.core.calls.sse import ChatStreamState, SseDecoder, StreamOutcome
from pytest_srbench.core.calls.usage import normalize_usage, usage_presence
from pytest_srbench.core.models import DatasetInfo, Prices, Target
from pytest_srbench.core.report.build import build_report
from pytest_srbench.core.report.model import ReportModel
from tests.core.calls.helpers import sse
from tests.core.helpers import call, case, manifest, result, run, target


def small_plan(**extra):
    cases = [
        case("mmlu-pro", "0"),
        case("mmlu-pro", "1"),
        case("gpqa-diamond", "2"),
        case("gpqa-diamond", "3"),
        case("gpqa-diamond", "4"),
    ]
    return manifest(cases, [target("t")], **extra)


def test_example_4_macro_over_a_subset():
    plan = small_plan(dataset=DatasetInfo(profile="quick", seed=1, custom_subset=True))
    correct = {"mmlu-pro/0", "gpqa-diamond/2"}
    results = [result(c.id, "t", correct=c.id in correct) for c in plan.cases]
    calls = [call(c.id, "t") for c in plan.cases]
    report = build_report(plan, run(), results, calls)
    summary = report["summary"]["targets"][0]
    assert summary["macro_accuracy"] == pytest.approx(0.4)
    assert summary["sr_bench_score"] is None
    assert (
        summary["score_scope"]
        == "selected benchmark subset; renormalized fixed weights; data of unknown origin; "
        "profile=quick; custom task subset"
    )
    ReportModel.model_validate(report)


def test_report_rows_and_cells():
    plan = small_plan()
    results = [result(c.id, "t", correct=True) for c in plan.cases[:4]]
    report = build_report(plan, run("failed"), results, [call(c.id, "t") for c in plan.cases[:4]])
    assert [row["benchmark"] for row in report["benchmarks"]] == ["gpqa-diamond", "mmlu-pro"]
    assert report["summary"]["targets"][0]["pending"] == 1
    assert report["summary"]["total_spend_usd"] is None
    assert report["cells"][-1]["status"] == "pending"
    assert report["summary"]["wall_time_s"] == pytest.approx(10.5)
    assert any("Run is incomplete" in line for line in report["limitations"])
    ReportModel.model_validate(report)


def test_failure_is_inferred_from_saved_results_when_no_event():
    plan = small_plan()
    results = [result(c.id, "t") for c in plan.cases]
    results[2] = result(
        plan.cases[2].id,
        "t",
        status="failed",
        correct=None,
        error="Target HTTP 503",
        finished_at="2026-11-30T00:00:05+00:00",
    )
    report = build_report(plan, run("failed"), results, [call(c.id, "t") for c in plan.cases])
    assert report["failure"] == {
        "case_id": plan.cases[2].id,
        "target_id": "t",
        "reason": "Target HTTP 503",
        "inferred_from_saved_results": True,
    }


def test_full_suite_complete_target_gets_a_score_and_a_recovery_child_never_does():
    from pytest_srbench.core.plan.srbench import BENCHMARK_WEIGHTS

    cases = [case(benchmark, "1") for benchmark in BENCHMARK_WEIGHTS]
    plan = manifest(cases, [target("t")])
    results = [result(c.id, "t", correct=c.benchmark != "hle") for c in cases]
    calls = [call(c.id, "t") for c in cases]
    summary = build_report(plan, run(), results, calls)["summary"]["targets"][0]
    assert summary["sr_bench_score"] == pytest.approx(0.85)
    # a plan that recorded no data origins (and one case per benchmark): never sr-bench 1.0
    assert summary["score_scope"] == (
        "macro score over data of unknown origin — not comparable with sr-bench 1.0; profile=quick"
    )
    assert summary["score_comparable"] is False
    child = manifest(cases, [target("t")], recovery={"parent_run_id": "run-x"})
    assert (
        build_report(child, run(), results, calls)["summary"]["targets"][0]["sr_bench_score"]
        is None
    )


def test_extension_benchmark_scope_label():
    plan = manifest(
        [case("mmlu-pro", "1"), case("my-ext", "1")],
        [target("t")],
        extension_weights={"my-ext": 1.0},
    )
    report = build_report(plan, run(), [], [])
    assert report["summary"]["targets"][0]["score_scope"].startswith(
        "extension diagnostic; normalized adapter weights"
    )


# --- router-facing metrics: worked examples 9 and 10 end to end, §9 nulls, continuity,
# --- per-decision breakdown and preview overrides

PRICE_A = Prices(input=1, cached_input=0.1, cache_write=2, output=3)
PRICE_B = Prices(input=2, cached_input=0.2, cache_write=4, output=6)


def stream(raw_usage, model):
    read, write = usage_presence(raw_usage)
    usage = normalize_usage(raw_usage)
    return StreamOutcome(
        content="A",
        reasoning="",
        final_text="A",
        finish_reason="stop",
        output_complete=True,
        model=model,
        raw_usage=raw_usage,
        usage=usage,
        cache_read_reported=read,
        cache_write_reported=write,
        cache_read_usage=usage if read else None,
        tool_calls=[],
        ttft_s=0.1,
        done_count=1,
        chunk_count=3,
    )


def receipt_call(case_id, tgt, fields, **extra):
    row = {
        "id": f"call-{case_id}",
        "case_id": case_id,
        "target_id": tgt.id,
        "role": "subject",
        "status": "completed",
        "latency_s": 0.5,
        "finish_reason": "stop",
        "phase": "user_turn",
        "phase_source": "request",
        **fields,
    }
    row.update(extra)
    return row


def one_case_report(tgt, calls, results=None, **extra):
    cases = [case("mmlu-pro", "0")]
    plan = manifest(cases, [tgt], **extra)
    results = results if results is not None else [result(cases[0].id, tgt.id)]
    report = build_report(plan, run(), results, calls)
    ReportModel.model_validate(report)
    return report


def test_example_9_live_single_call_end_to_end():
    tgt = target("t", "m")
    raw = {
        "prompt_tokens": 10,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 2, "cache_creation_tokens": 1},
    }
    fields = receipt_fields(tgt, stream(raw, "m"), {})
    report = one_case_report(tgt, [receipt_call("mmlu-pro/0", tgt, fields)])
    for item in (report["summary"]["targets"][0], report["benchmarks"][0]):
        assert item["tokens"] == {
            "input_tokens": 7,
            "cached_input_tokens": 2,
            "cache_write_tokens": 1,
            "output_tokens": 3,
        }
        assert item["cost_usd"] == pytest.approx(18.2e-6)
        assert item["cache_read_call_count"] == 1
        assert item["cache_read_tokens"] == 2
        assert item["cache_read_prompt_tokens"] == 10
        assert item["cache_read_ratio"] == pytest.approx(0.2)
        assert item["continuity"]["model_switches_by_phase"] == {}
    assert report["summary"]["targets"][0]["decision_breakdown"] == []


def test_a_later_usage_event_without_cache_fields_keeps_the_cache_read_observation():
    """Seed divergence (results guide): the real stream parser, the receipt and the report.

    Usage events in order: {prompt 10, completion 3, cached 2} then {prompt 10, completion 3}.
    The last event prices the call: tokens 10 / 0 / 0 / 3, cost (10·1 + 3·3) / 1e6 = 19e-6.
    The cache-read metrics read the kept observation: cached 2, prompt 8 + 2 + 0 = 10,
    ratio 2 / 10 = 0.2 (the product computed 0 / 10 = 0.0 from the last event)."""
    cached = {
        "prompt_tokens": 10,
        "completion_tokens": 3,
        "prompt_tokens_details": {"cached_tokens": 2},
    }
    plain = {"prompt_tokens": 10, "completion_tokens": 3}
    data = sse(
        {"model": "m", "choices": [{"index": 0, "delta": {"content": "A"}}]},
        {"model": "m", "choices": [], "usage": cached},
        {"model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"model": "m", "choices": [], "usage": plain},
        b"[DONE]",
    )
    state = ChatStreamState(clock=lambda: 0.0, started=0.0)
    for payload in SseDecoder().feed(data):
        state.feed_payload(payload)
    tgt = target("t", "m")
    fields = receipt_fields(tgt, state.outcome(), {})
    report = one_case_report(tgt, [receipt_call("mmlu-pro/0", tgt, fields)])
    for item in (report["summary"]["targets"][0], report["benchmarks"][0]):
        assert item["tokens"] == {
            "input_tokens": 10,
            "cached_input_tokens": 0,
            "cache_write_tokens": 0,
            "output_tokens": 3,
        }
        assert item["cost_usd"] == pytest.approx(19e-6)
        assert item["cache_read_call_count"] == 1
        assert item["cache_read_tokens"] == 2
        assert item["cache_read_prompt_tokens"] == 10
        assert item["cache_read_ratio"] == pytest.approx(0.2)


def test_anthropic_style_stream_usage_with_a_warm_cache_end_to_end():
    """Seed divergence: an OpenAI-format stream whose usage has Anthropic's fields, read by the
    real stream parser, priced on the receipt and summed by the report.

    input 5 (fresh) + cache read 100 + cache creation 20 = prompt 125; output 10.
    Buckets 5 / 100 / 20 / 10. Cost at {1, 0.1, 2, 3}: (5 + 10 + 40 + 30) / 1e6 = 85e-6.
    Cache-neutral: (125·1 + 10·3) / 1e6 = 155e-6. Cache-read ratio 100 / 125 = 0.8.
    sr-bench's reading failed the call: 5 - 100 - 20 < 0 ("Invalid token usage buckets")."""
    usage = {
        "input_tokens": 5,
        "output_tokens": 10,
        "cache_read_input_tokens": 100,
        "cache_creation_input_tokens": 20,
    }
    data = sse(
        {"model": "m", "choices": [{"index": 0, "delta": {"content": "A"}}]},
        {"model": "m", "choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
        {"model": "m", "choices": [], "usage": usage},
        b"[DONE]",
    )
    state = ChatStreamState(clock=lambda: 0.0, started=0.0)
    for payload in SseDecoder().feed(data):
        state.feed_payload(payload)
    tgt = target("t", "m")
    fields = receipt_fields(tgt, state.outcome(), {})
    report = one_case_report(tgt, [receipt_call("mmlu-pro/0", tgt, fields)])
    item = report["summary"]["targets"][0]
    assert item["tokens"] == {
        "input_tokens": 5,
        "cached_input_tokens": 100,
        "cache_write_tokens": 20,
        "output_tokens": 10,
    }
    assert item["cost_usd"] == pytest.approx(85e-6)
    assert item["cache_neutral_cost_usd"] == pytest.approx(155e-6)
    assert item["cache_read_ratio"] == pytest.approx(0.8)


def mom_target(**extra):
    return Target(
        id="router",
        kind="mom",
        model="auto",
        base_url="http://127.0.0.1:9/v1",
        prices={"a": PRICE_A, "b": PRICE_B},
        max_inference_calls=4,
        config_hash="cfg-1",
        **extra,
    )


def mom_headers(complete=True):
    child = {"prompt_tokens": 10, "cached_input_tokens": 2, "cache_write_tokens": 1}
    receipt = {
        "version": 1,
        "complete": complete,
        "calls": [
            {"model": "a", **child, "completion_tokens": 3},
            {"model": "b", **child, "completion_tokens": 3},
        ],
    }
    return {
        "x-vsr-model-usage": json.dumps(receipt),
        "x-vsr-selected-model": "b",
        "x-vsr-selected-decision": "math",
        "x-vsr-config-hash": "cfg-1",
    }


def test_example_10_mom_receipt_two_children_end_to_end():
    tgt = mom_target()
    outcome = stream({"prompt_tokens": 20, "completion_tokens": 6}, "b")
    fields = receipt_fields(tgt, outcome, mom_headers())
    assert fields["cost_usd"] == pytest.approx(54.6e-6)
    assert fields["usage"]["input_tokens"] == 14
    assert fields["inference_call_count"] == 2
    assert fields["cache_read_reported"] is None and fields["cache_write_reported"] is None
    for segment in fields["model_usage"]:
        assert segment["cache_read_reported"] is None and segment["cache_write_reported"] is None
    report = one_case_report(tgt, [receipt_call("mmlu-pro/0", tgt, fields)])
    summary = report["summary"]["targets"][0]
    assert summary["cost_usd"] == pytest.approx(54.6e-6)
    assert summary["tokens"] == {
        "input_tokens": 14,
        "cached_input_tokens": 4,
        "cache_write_tokens": 2,
        "output_tokens": 6,
    }
    assert summary["call_count"] == 2 and summary["request_count"] == 1
    # all prompt tokens at the fresh-input rate: a (10·1 + 3·3) + b (10·2 + 3·6)
    assert summary["cache_neutral_cost_usd"] == pytest.approx(57e-6)
    assert summary["cache_read_call_count"] == 0 and summary["cache_read_ratio"] is None
    assert summary["continuity"]["multi_inference_tasks"] == 1
    assert summary["continuity"]["model_switches_per_task_mean"] is None
    [row] = summary["decision_breakdown"]
    assert row["decision"] == "math" and row["cases"] == 1 and row["accuracy"] == 1.0
    assert row["cost_usd"] == pytest.approx(54.6e-6) and row["selected_models"] == {"b": 1}


def test_example_10_incomplete_mom_receipt_is_unknown_not_partial():
    tgt = mom_target()
    outcome = stream({"prompt_tokens": 20, "completion_tokens": 6}, "b")
    fields = receipt_fields(tgt, outcome, mom_headers(complete=False))
    assert fields["cost_usd"] is None and fields["usage"] is None
    report = one_case_report(tgt, [receipt_call("mmlu-pro/0", tgt, fields)])
    for item in (report["summary"]["targets"][0], report["benchmarks"][0]):
        assert item["cost_usd"] is None and item["tokens"] is None
        assert item["cache_neutral_cost_usd"] is None and item["total_spend_usd"] is None
        assert item["known_cost_usd"] == 0 and item["call_count"] == 2
        assert item["accuracy"] == 1.0
    assert report["summary"]["total_spend_usd"] is None


def test_null_rule_missing_price_nulls_cost_but_keeps_tokens():
    tgt = target("t", "m")
    raw = {"prompt_tokens": 10, "completion_tokens": 3}
    fields = receipt_fields(tgt, stream(raw, "unpriced-model"), {})
    assert fields["cost_usd"] is None
    report = one_case_report(tgt, [receipt_call("mmlu-pro/0", tgt, fields)])
    summary = report["summary"]["targets"][0]
    assert summary["cost_usd"] is None and summary["cost_complete"] is False
    assert summary["cache_neutral_cost_usd"] is None
    assert summary["total_spend_usd"] is None and report["summary"]["total_spend_usd"] is None
    assert summary["known_cost_usd"] == 0
    assert summary["tokens"]["input_tokens"] == 10 and summary["call_count"] == 1


def test_null_rule_missing_usage_and_unknown_call_count():
    tgt = target("t")
    calls = [call("mmlu-pro/0", "t", None, usage=None, inference_call_count=None)]
    summary = one_case_report(tgt, calls)["summary"]["targets"][0]
    assert summary["tokens"] is None and summary["cost_usd"] is None
    assert summary["call_count"] is None and summary["cache_neutral_cost_usd"] is None
    assert summary["total_spend_usd"] is None and summary["known_cost_usd"] == 0
    assert summary["request_count"] == 1 and summary["accuracy"] == 1.0


def test_null_rule_planned_case_without_receipt_nulls_target_and_its_benchmark_row_only():
    plan = small_plan()
    missing = "gpqa-diamond/4"
    results = [result(c.id, "t") for c in plan.cases if c.id != missing]
    calls = [call(c.id, "t", 0.002, id=c.id) for c in plan.cases if c.id != missing]
    report = build_report(plan, run(), results, calls)
    ReportModel.model_validate(report)
    summary = report["summary"]["targets"][0]
    gpqa, mmlu = report["benchmarks"]
    for item in (summary, gpqa):
        for key in (
            "cost_usd",
            "tokens",
            "call_count",
            "cache_neutral_cost_usd",
            "total_spend_usd",
        ):
            assert item[key] is None, key
    assert summary["known_cost_usd"] == pytest.approx(0.008)
    assert summary["accuracy"] == pytest.approx(4 / 5) and gpqa["accuracy"] == pytest.approx(2 / 3)
    assert mmlu["cost_usd"] == pytest.approx(0.004) and mmlu["call_count"] == 2
    assert mmlu["total_spend_usd"] == pytest.approx(0.004)
    assert report["summary"]["total_spend_usd"] is None


def test_continuity_on_targets_and_benchmark_rows_excludes_auxiliary_calls():
    plan = small_plan()
    ids = ["mmlu-pro/0", "mmlu-pro/1"]
    calls = []
    for case_id in ids:
        calls += [
            call(case_id, "t", id=f"{case_id}-1"),
            call(case_id, "t", role="judge", id=f"{case_id}-j", selected_model="judge"),
            call(case_id, "t", role="simulator", id=f"{case_id}-s", selected_model="sim"),
            call(case_id, "t", id=f"{case_id}-2"),
        ]
    report = build_report(plan, run("failed"), [result(i, "t") for i in ids], calls)
    ReportModel.model_validate(report)
    summary = report["summary"]["targets"][0]
    mmlu = next(row for row in report["benchmarks"] if row["benchmark"] == "mmlu-pro")
    for item in (summary, mmlu):
        assert item["continuity"]["multi_request_tasks"] == 2
        assert item["continuity"]["model_switches"] == 0
        assert item["continuity"]["session_mode"] == "stateless"
    gpqa = next(row for row in report["benchmarks"] if row["benchmark"] == "gpqa-diamond")
    assert gpqa["continuity"]["multi_request_tasks"] == 0
    assert summary["selection_statuses"] is None and summary["selection_reasons"] is None


def test_session_mode_comes_from_the_target():
    plan = manifest([case("mmlu-pro", "0")], [target("t", session_mode="session_aware")])
    report = build_report(plan, run(), [result("mmlu-pro/0", "t")], [call("mmlu-pro/0", "t")])
    assert report["summary"]["targets"][0]["continuity"]["session_mode"] == "session_aware"
    assert report["benchmarks"][0]["continuity"]["session_mode"] == "session_aware"
    assert not any(line.startswith("Preview run") for line in report["limitations"])


def preview_result(case_id, decision, model, status="ok"):
    routing = {
        "selected_model": model,
        "selection_status": status,
        "selection_reason": "keyword_match",
        "decision_result": {"decision_name": decision},
    }
    return result(case_id, "router", correct=None, details={"routing": routing})


def test_preview_report_overrides_routing_and_nulls_accuracy():
    cases = [case("mmlu-pro", "0"), case("mmlu-pro", "1"), case("gpqa-diamond", "2")]
    tgt = mom_target(session_mode="session_aware", simulated=True)
    plan = manifest(cases, [tgt]).model_copy(update={"mode": "preview"})
    results = [
        preview_result("mmlu-pro/0", "math", "a"),
        preview_result("mmlu-pro/1", "math", "b", status="fallback"),
        preview_result("gpqa-diamond/2", "science", "b"),
    ]
    calls = [
        call(c.id, "router", 0.0, id=c.id, selected_model="stale", decision="stale") for c in cases
    ]
    report = build_report(plan, run(), results, calls)
    ReportModel.model_validate(report)
    summary = report["summary"]["targets"][0]
    for key in ("accuracy", "accuracy_ci95", "correct", "macro_accuracy", "sr_bench_score"):
        assert summary[key] is None, key
    assert summary["selection_statuses"] == {"ok": 2, "fallback": 1}
    assert summary["selection_reasons"] == {"keyword_match": 3}
    assert summary["selected_models"] == {"a": 1, "b": 2}
    assert summary["decisions"] == {"math": 2, "science": 1}
    assert summary["continuity"]["session_mode"] == "stateless"
    assert summary["continuity"]["unswitched_tasks"] == 3
    assert summary["continuity"]["unswitched_accuracy"] is None
    assert [(r["decision"], r["cases"], r["accuracy"]) for r in summary["decision_breakdown"]] == [
        ("math", 2, None),
        ("science", 1, None),
    ]
    gpqa, mmlu = report["benchmarks"]
    assert mmlu["decisions"] == {"math": 2} and mmlu["selected_models"] == {"a": 1, "b": 1}
    assert gpqa["selection_statuses"] == {"ok": 1}
    for row in (gpqa, mmlu):
        assert row["accuracy"] is None and row["correct"] is None
        assert row["accuracy_ci95"] is None
        assert row["continuity"]["session_mode"] == "stateless"
        assert row["continuity"]["unswitched_accuracy"] is None
    assert (
        "Preview run: routing decisions only; no answers were generated, so accuracy is null by "
        "design." in report["limitations"]
    )
    assert report["frontier"]["points"] == []
    assert [p["target_id"] for p in report["frontier"]["unplaced"]] == ["router"]
