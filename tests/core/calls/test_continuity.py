"""Continuity (§5.1, worked example 24 and the UNCONFIRMED choices of core/calls/continuity.py) and
the per-decision breakdown of a router target (core/calls/routing.py), as the report counts
them (``core.report.running``: ``ContinuityRunner`` inside ``MetricRunner``, ``DecisionRunner``)."""

import pytest

from pytest_srbench.core.stats import accuracy_interval
from tests.core.helpers import call, result
from tests.core.report.feed import fed


def requests(case_id, models, phases=None, decisions=None, **extra):
    """Subject calls of one case with the given selected models (None = unknown)."""
    rows = []
    for i, model in enumerate(models):
        row = call(case_id, "r", id=f"{case_id}-{i}", selected_model=model, **extra)
        row["phase"] = phases[i] if phases else "user_turn"
        if decisions is not None:
            row["decision"] = decisions[i]
        rows.append(row)
    return rows


def runners(results, calls, planned=None, preview=False):
    """Target "r"'s metric and decision runners over these rows; without ``planned``, every
    case with a row or a call is planned (in first-seen order)."""
    if planned is None:
        planned = list(
            dict.fromkeys([r["case_id"] for r in results] + [c["case_id"] for c in calls])
        )
    return fed(planned, list(results), calls, "r", preview=preview)


def block(calls, results=(), mode="stateless"):
    return runners(results, calls)[0].metric("r", mode)["continuity"]


def breakdown(results, calls, planned, preview=False):
    return runners(results, calls, planned, preview)[1].rows()


def test_example_24_one_task_then_a_multi_inference_task():
    calls = requests("b/1", ["A", None, "A", "B"], ["user_turn", "tool_loop"] + ["tool_loop"] * 2)
    results = [result("b/1", "r", correct=True)]
    first = block(calls, results)
    assert first["multi_request_tasks"] == 1
    assert first["model_switches"] == 1
    assert first["model_switches_per_task_max"] == 1
    assert first["model_switches_per_task_mean"] == 1.0
    assert first["unknown_model_requests"] == 1
    assert first["model_switches_by_phase"] == {"tool_loop": 1}
    assert first["switched_tasks"] == 1 and first["unswitched_tasks"] == 0
    assert first["switched_accuracy"] == 1.0 and first["unswitched_accuracy"] is None
    assert first["multi_inference_tasks"] == 0

    fused = requests("b/2", ["C"], inference_call_count=3)
    second = block(calls + fused, [*results, result("b/2", "r", correct=True)])
    assert second["multi_inference_tasks"] == 1
    for key in first:
        if key != "multi_inference_tasks":
            assert second[key] == first[key], key


def test_unknown_requests_are_skipped_and_neighbours_compared():
    assert block(requests("b/1", ["A", None, "B"]))["model_switches"] == 1
    same = block(requests("b/1", ["A", None, "A"]))
    assert same["model_switches"] == 0 and same["unknown_model_requests"] == 1
    assert same["switched_tasks"] == 0 and same["unswitched_tasks"] == 1
    assert block(requests("b/1", [None, None]))["model_switches"] == 0


def test_switch_counts_under_the_later_requests_phase_and_missing_phase_is_unknown():
    calls = requests("b/1", ["A", "B", "A"], ["user_turn", "tool_loop", "user_turn"])
    calls[2]["phase"] = None
    assert block(calls)["model_switches_by_phase"] == {"tool_loop": 1, "unknown": 1}


def test_decision_changes_skip_missing_decisions():
    unchanged = requests("b/1", ["A", "A", "A"], decisions=["math", None, "math"])
    changed = requests("b/2", ["A", "A"], decisions=["math", "code"])
    gap = requests("b/3", ["A", "A", "A"], decisions=[None, "code", None])
    assert block(unchanged)["decision_changed_tasks"] == 0
    assert block(unchanged + changed + gap)["decision_changed_tasks"] == 1
    bridged = requests("b/4", ["A", "A", "A"], decisions=["math", None, "code"])
    assert block(bridged)["decision_changed_tasks"] == 1


def test_multi_inference_task_counts_only_there():
    segments = [{"model": "a", "usage": None}, {"model": "b", "usage": None}]
    hidden = requests("b/1", ["A", None, "B"], decisions=["x", "y", "z"])
    hidden[1]["model_usage"] = segments
    hidden[1]["inference_call_count"] = None
    single_segment = requests("b/2", ["A"], model_usage=[{"model": "a", "usage": None}])
    out = block(hidden + single_segment, [result("b/1", "r"), result("b/2", "r", correct=False)])
    assert out["multi_inference_tasks"] == 1
    assert out["multi_request_tasks"] == 0
    assert out["model_switches"] == 0 and out["unknown_model_requests"] == 0
    assert out["decision_changed_tasks"] == 0
    assert out["switched_tasks"] == 0 and out["unswitched_tasks"] == 1
    assert out["unswitched_accuracy"] == 0.0


def test_no_tasks_gives_null_mean_and_max_and_empty_phase_dict():
    out = block([call("b/1", "r", role="judge")], [result("b/1", "r")], mode="session_aware")
    assert out == {
        "session_mode": "session_aware",
        "multi_request_tasks": 0,
        "model_switches": 0,
        "model_switches_per_task_mean": None,
        "model_switches_per_task_max": None,
        "model_switches_by_phase": {},
        "unknown_model_requests": 0,
        "multi_inference_tasks": 0,
        "decision_changed_tasks": 0,
        "switched_tasks": 0,
        "unswitched_tasks": 0,
        "switched_accuracy": None,
        "unswitched_accuracy": None,
    }
    only_fused = block(requests("b/1", ["A"], inference_call_count=2))
    assert only_fused["model_switches_per_task_mean"] is None
    assert only_fused["model_switches_per_task_max"] is None


def test_mean_over_tasks_in_the_switch_statistics_and_failures_count_as_incorrect():
    calls = [
        *requests("b/1", ["A", "B", "A"]),
        call("b/1", "r", role="judge", id="j", selected_model="J"),
        *requests("b/2", ["A"]),
        *requests("b/3", ["A", "B"]),
    ]
    results = [
        result("b/1", "r", correct=True),
        result("b/2", "r", correct=True),
        result("b/3", "r", status="failed", correct=True),
    ]
    out = block(calls, results)
    assert out["model_switches"] == 3
    assert out["model_switches_per_task_mean"] == 1.0
    assert out["model_switches_per_task_max"] == 2
    assert out["multi_request_tasks"] == 2
    assert out["switched_tasks"] == 2 and out["switched_accuracy"] == 0.5
    assert out["unswitched_tasks"] == 1 and out["unswitched_accuracy"] == 1.0


def routed(case_id, decision, model, cost=0.002, **extra):
    return call(
        case_id,
        "r",
        cost,
        id=f"{case_id}-{decision}",
        decision=decision,
        selected_model=model,
        **extra,
    )


def test_decision_breakdown_groups_cases_by_their_last_decision():
    calls = [
        routed("b/1", "math", "big"),
        routed("b/1", "code", "coder"),
        routed("b/1", None, "small"),
        routed("b/2", "code", "coder", cost=0.001),
        routed("b/3", "math", "big", cost=None),
        routed("b/4", None, "small"),
        call("b/2", "r", 0.5, role="judge", id="j", decision="ignored"),
    ]
    results = [
        result("b/1", "r", correct=True),
        result("b/2", "r", correct=False),
        result("b/3", "r", correct=True),
        result("b/4", "r", status="failed", correct=None),
    ]
    rows = breakdown(results, calls, [f"b/{i}" for i in range(1, 6)])
    assert [(r["decision"], r["label"], r["cases"]) for r in rows] == [
        ("code", "code", 2),
        (None, "unknown", 2),
        ("math", "math", 1),
    ]
    code, unknown, math = rows
    assert code["completed"] == 2 and code["correct"] == 1 and code["accuracy"] == 0.5
    assert code["accuracy_ci95"] == accuracy_interval(1, 2)
    assert code["cost_usd"] == pytest.approx(0.007)
    assert code["selected_models"] == {"big": 1, "coder": 2, "small": 1}
    # b/4 failed and one planned case has neither row nor call: both count as wrong, no cost
    assert unknown["completed"] == 0 and unknown["correct"] == 0 and unknown["accuracy"] == 0
    assert unknown["cost_usd"] is None and unknown["known_cost_usd"] == pytest.approx(0.002)
    assert math["cost_usd"] is None and math["known_cost_usd"] == 0
    assert math["accuracy"] == 1.0


def test_decision_breakdown_is_empty_without_any_decision():
    assert breakdown([result("b/1", "r")], [call("b/1", "r")], ["b/1"]) == []
    assert breakdown([], [], []) == []


def test_decision_breakdown_ties_sort_by_decision_and_unknown_last():
    calls = [routed("b/1", "z", "m"), routed("b/2", "a", "m"), routed("b/3", None, "m")]
    rows = breakdown([result(f"b/{i}", "r") for i in (1, 2, 3)], calls, ["b/1", "b/2", "b/3"])
    assert [r["label"] for r in rows] == ["a", "z", "unknown"]


def preview_row(case_id, decision, model, status="ok", reason="keyword"):
    routing = {
        "selected_model": model,
        "selection_status": status,
        "selection_reason": reason,
        "decision_result": {"decision_name": decision} if decision else None,
    }
    return result(case_id, "r", correct=None, details={"routing": routing})


def test_preview_breakdown_and_distributions_read_the_routing_details():
    results = [
        preview_row("b/1", "math", "big"),
        preview_row("b/2", "math", "small", reason=""),
        preview_row("b/3", None, None, status="fallback"),
        result("b/4", "r", correct=None),
    ]
    calls = [call(f"b/{i}", "r", 0.0, decision="live-only", selected_model="x") for i in (1, 2, 3)]
    metric, decisions = runners(results, calls, preview=True)
    rows = decisions.rows()
    assert [(r["label"], r["cases"]) for r in rows] == [("math", 2), ("unknown", 2)]
    math = rows[0]
    assert math["correct"] is None and math["accuracy"] is None and math["accuracy_ci95"] is None
    assert math["selected_models"] == {"big": 1, "small": 1}
    assert math["cost_usd"] == 0.0 and math["completed"] == 2
    assert rows[1]["cost_usd"] is None  # b/4 has no receipt
    assert metric.preview_distributions() == {
        "selection_statuses": {"ok": 2, "fallback": 1},
        "selection_reasons": {"keyword": 2},
        "selected_models": {"big": 1, "small": 1},
        "decisions": {"math": 2},
    }
