"""Usage reconciliation, pure part (reference/report-and-accounting.md §6): stream parsing,
per-call verification with its controlled reasons, the artifact and the corrected view."""

from __future__ import annotations

import json

import pytest

from pytest_srbench.core.canonical import digest, sha256_bytes
from pytest_srbench.core.models import Limits
from pytest_srbench.core.offline import reconcile as rc
from pytest_srbench.core.offline.reconcile import (
    EvidenceUnavailable,
    ReconcileError,
    TargetResolver,
    build_artifact,
    byte_bound,
    check_preconditions,
    effective_calls,
    parse_saved_stream,
    verify_call,
)
from pytest_srbench.core.report.build import build_report
from pytest_srbench.core.report.model import ReportModel
from tests.accounting_helpers import (
    CASE,
    buckets,
    mom_target,
    raw_usage,
    receipt,
    single_plan,
    single_target,
    sse,
)
from tests.core.helpers import result, run

BOUND = 1_048_576
OLD = buckets(80, 20, 0, 10)  # a receipt that ignored created_cache_tokens (example 12)


def saved_call(**extra):
    return receipt("call-1", "t", OLD, 0.000112, raw_usage(), **extra)


# -- parsing -------------------------------------------------------------------------------
def test_parse_joins_multiline_data_and_keeps_the_last_truthy_values():
    first = json.dumps({"model": "a", "usage": {"prompt_tokens": 1, "completion_tokens": 1}})
    stream = (
        # one event whose JSON is split over two data lines (joined with a newline)
        b'data: {"model": "b",\r\ndata:   "choices": [{"delta": {}, "finish_reason": "length"}]}\r\n\r\n'
        + b"data: " + first.encode() + b"\n\n"
        + b'data: {"model": "", "usage": null, "choices": [{"index": 1, "finish_reason": "stop"},'
        + b' {"index": 0, "finish_reason": null}]}\n\n'
        + b": a comment line\nevent: message\n\n"
        + b"data: [DONE]"  # an event left open at the end of the bytes still counts
    )  # fmt: skip
    parsed = parse_saved_stream(stream)
    assert parsed.done == 1
    assert parsed.error is False
    assert parsed.model == "a"
    assert parsed.raw_usage == {"prompt_tokens": 1, "completion_tokens": 1}
    assert parsed.finish_reason == "length"  # index 1 is ignored, a null reason does not clear


def test_parse_counts_every_done_and_flags_error_events():
    parsed = parse_saved_stream(sse(raw_usage(), done=2, extra=[{"error": {"message": "x"}}]))
    assert parsed.done == 2 and parsed.error is True
    assert parse_saved_stream(sse(raw_usage(), done=0)).done == 0


@pytest.mark.parametrize("data", [b"data: {not json}\n\n", b"data: [1, 2]\n\n", b"\xff\xfe\n\n"])
def test_parse_rejects_undecodable_streams(data):
    with pytest.raises(ValueError):
        parse_saved_stream(data)


# -- per-call verification ------------------------------------------------------------------
def test_verified_row_reprices_the_saved_stream_example_12():
    evidence = sse(raw_usage())
    row = verify_call(saved_call(), single_target(), evidence, bound=BOUND)
    assert row == {
        "call_id": "call-1",
        "original_receipt_sha256": digest(saved_call()),
        "original_usage": OLD,
        "original_cost_usd": 0.000112,
        "usage": buckets(50, 20, 30, 10),
        "cost_usd": 0.0001195,
        "verified": True,
        "stream_sha256": sha256_bytes(evidence),
    }


def test_receipt_digest_ignores_store_internal_keys():
    row = verify_call({**saved_call(), "_seq": 7}, single_target(), sse(raw_usage()), bound=BOUND)
    assert row["original_receipt_sha256"] == digest(saved_call())


@pytest.mark.parametrize(
    ("call", "evidence", "reason"),
    [
        (saved_call(status="failed"), sse(raw_usage()), rc.NOT_COMPLETED),
        (saved_call(), sse(raw_usage(), done=0), rc.DONE_COUNT),
        (saved_call(), sse(raw_usage(), done=2), rc.DONE_COUNT),
        (saved_call(), sse(raw_usage(), finish=None), rc.FINISH_MISMATCH),
        (saved_call(), sse(raw_usage(), finish="content_filter"), rc.FINISH_MISMATCH),
        (saved_call(finish_reason="length"), sse(raw_usage()), rc.FINISH_MISMATCH),
        (saved_call(), sse(raw_usage(created=31)), rc.USAGE_MISMATCH),
        (saved_call(), sse(None), rc.USAGE_MISMATCH),
        (saved_call(), sse(raw_usage(), model="other"), rc.MODEL_MISMATCH),
        (saved_call(), sse(raw_usage(), model=None), rc.MODEL_MISMATCH),
        (saved_call(), sse(raw_usage(), extra=[{"error": {"code": 1}}]), rc.ERROR_EVENT),
        (saved_call(), b'data: {"secret": "sk-123"\n\n', rc.UNVERIFIABLE),
        (saved_call(), b"\xff" * 10, rc.UNVERIFIABLE),
        (saved_call(), EvidenceUnavailable.MISSING, rc.UNVERIFIABLE),
    ],
)
def test_unverifiable_rows_carry_a_controlled_reason(call, evidence, reason):
    row = verify_call(call, single_target(), evidence, bound=BOUND)
    assert row["verified"] is False
    assert row["usage"] is None and row["cost_usd"] is None
    assert row["original_usage"] == OLD and row["original_cost_usd"] == 0.000112
    assert row["unknown_reason"] == reason
    assert ("stream_sha256" in row) is isinstance(evidence, bytes)
    assert "sk-123" not in json.dumps(row)


def test_byte_bound_is_checked_before_the_stream_is_read():
    assert byte_bound(Limits(max_output_chars=10)) == 1_048_576
    assert byte_bound(Limits(max_output_chars=100_000)) == 3_000_000
    evidence = sse(raw_usage())
    over = verify_call(saved_call(), single_target(), evidence, bound=len(evidence) - 1)
    assert over["unknown_reason"] == rc.TOO_LARGE and "stream_sha256" not in over
    exact = verify_call(saved_call(), single_target(), evidence, bound=len(evidence))
    assert exact["verified"] is True
    unread = verify_call(saved_call(), single_target(), EvidenceUnavailable.TOO_LARGE, bound=1)
    assert unread["unknown_reason"] == rc.TOO_LARGE and "stream_sha256" not in unread


def test_invalid_usage_reports_the_normaliser_message():
    raw = raw_usage()
    raw["cache_creation_input_tokens"] = 31  # conflicts with created_cache_tokens 30
    row = verify_call(receipt("c", "t", None, None, raw), single_target(), sse(raw), bound=BOUND)
    assert row["unknown_reason"] == "Conflicting cache-write token usage"


def test_missing_totals_or_prices_are_incomplete():
    raw = {"completion_tokens": 3}
    row = verify_call(receipt("c", "t", None, None, raw), single_target(), sse(raw), bound=BOUND)
    assert row["unknown_reason"] == rc.INCOMPLETE_PRICING
    unpriced = verify_call(
        saved_call(model="x"), single_target(), sse(raw_usage(), model="x"), bound=BOUND
    )
    assert unpriced["unknown_reason"] == rc.INCOMPLETE_PRICING
    unresolved = verify_call(saved_call(), None, sse(raw_usage()), bound=BOUND)
    assert unresolved["unknown_reason"] == rc.INCOMPLETE_PRICING


def test_expected_response_model_must_match_the_stream():
    pinned = single_target(expected_response_model="m-2026")
    row = verify_call(saved_call(), pinned, sse(raw_usage()), bound=BOUND)
    assert row["unknown_reason"] == rc.EXPECTED_MODEL_MISMATCH
    ok = verify_call(saved_call(), single_target(expected_response_model="m"), sse(raw_usage()),
                     bound=BOUND)  # fmt: skip
    assert ok["verified"] is True


@pytest.mark.parametrize(
    ("extra", "verified"),
    [
        ({}, True),
        ({"inference_call_count": 2}, False),
        ({"inference_call_count": None}, False),
        ({"inference_call_count": True}, False),
        ({"model_usage": [{"model": "m", "usage": OLD}]}, False),
        ({"selected_model": None}, False),
        ({"selected_model": "other"}, False),
    ],
)
def test_mom_needs_a_proven_direct_call(extra, verified):
    call = receipt("c", "router", OLD, 0.000112, raw_usage(), **extra)
    row = verify_call(call, mom_target(), sse(raw_usage()), bound=BOUND)
    assert row["verified"] is verified
    if not verified:
        assert row["unknown_reason"] == rc.MOM_NOT_DIRECT
    else:
        assert row["cost_usd"] == 0.0001195


def test_auxiliary_calls_resolve_their_bound_target():
    judge = single_target("judge-1")
    plan = single_plan().model_copy(
        update={
            "auxiliary_targets": {"judge-1": judge},
            "benchmark_options": {"mmlu-pro": {"judge": "judge-1"}},
        }
    )
    resolve = TargetResolver(plan)
    assert resolve(receipt("c", "t", None, None, None)).id == "t"
    assert resolve(receipt("c", "t", None, None, None, role="judge")) == judge
    assert resolve(receipt("c", "t", None, None, None, role="simulator")) is None
    assert resolve(receipt("c", "nope", None, None, None)) is None


# -- preconditions, artifact, effective view -------------------------------------------------
def test_preconditions_use_the_exact_messages():
    for status in ("queued", "running"):
        with pytest.raises(
            ReconcileError, match=r"^Usage reconciliation requires a terminal live run$"
        ):
            check_preconditions(status, "live", 3)
    with pytest.raises(ReconcileError, match="terminal live"):
        check_preconditions("completed", "preview", 3)
    with pytest.raises(ReconcileError, match=r"^Run has no saved calls to reconcile$"):
        check_preconditions("failed", "live", 0)
    for status in ("completed", "failed", "cancelled", "interrupted"):
        check_preconditions(status, "live", 1)


def _rows():
    verified = verify_call(saved_call(), single_target(), sse(raw_usage()), bound=BOUND)
    same = verify_call(
        receipt("call-2", "t", buckets(50, 20, 30, 10), 0.0001195, raw_usage()),
        single_target(),
        sse(raw_usage()),
        bound=BOUND,
    )
    lost = verify_call(
        receipt("call-3", "t", OLD, 0.000112, raw_usage()),
        single_target(),
        EvidenceUnavailable.MISSING,
        bound=BOUND,
    )
    return [verified, same, lost]


def test_artifact_counts_spends_and_identity():
    rows = _rows()
    artifact = build_artifact("run-1", "plan-abc", rows)
    evidence = digest(
        {"version": "sr-bench-accounting-v1", "plan_sha256": "plan-abc", "calls": rows}
    )
    assert artifact == {
        "id": "accounting-" + evidence[:24],
        "version": "sr-bench-accounting-v1",
        "run_id": "run-1",
        "evidence_sha256": evidence,
        "plan_sha256": "plan-abc",
        "qualified": False,
        "verified_call_count": 2,
        "unverifiable_call_count": 1,
        "corrected_call_count": 1,
        "original_known_spend_usd": pytest.approx(0.000112 + 0.0001195 + 0.000112),
        "corrected_known_spend_usd": pytest.approx(0.0001195 * 2),
        "original_receipts_preserved": True,
        "model_requests": 0,
        "calls": rows,
    }
    assert build_artifact("run-1", "plan-abc", _rows()) == artifact  # deterministic
    assert build_artifact("run-1", "plan-other", rows)["id"] != artifact["id"]
    qualified = build_artifact("run-1", "plan-abc", rows[:2])
    assert qualified["qualified"] is True and qualified["unverifiable_call_count"] == 0


def test_effective_calls_replace_usage_and_cost_of_every_call():
    originals = [
        saved_call(),
        receipt("call-2", "t", OLD, 0.000112, raw_usage()),
        receipt("call-3", "t", OLD, 0.000112, raw_usage(), role="judge"),
        receipt("call-4", "t", OLD, 0.000112, raw_usage()),  # no row in the correction
    ]
    snapshot = json.dumps(originals, sort_keys=True)
    rows = [
        verify_call(originals[0], single_target(), sse(raw_usage()), bound=BOUND),
        verify_call(originals[1], single_target(), sse(raw_usage(), done=0), bound=BOUND),
        verify_call(originals[2], single_target(), sse(raw_usage()), bound=BOUND),
    ]
    correction = build_artifact("run-1", "p", rows)
    view = effective_calls(originals, correction)
    assert json.dumps(originals, sort_keys=True) == snapshot  # originals untouched
    assert [c["accounting_correction_id"] for c in view] == [correction["id"]] * 4
    assert [c["cost_complete"] for c in view] == [True, False, True, False]
    assert view[0]["usage"] == buckets(50, 20, 30, 10) and view[0]["cost_usd"] == 0.0001195
    assert view[1]["usage"] is None and view[1]["cost_usd"] is None
    assert view[2]["role"] == "judge" and view[2]["cost_usd"] == 0.0001195
    assert view[3]["usage"] is None and view[3]["cost_usd"] is None
    assert view[0]["raw_usage"] == originals[0]["raw_usage"]  # everything else is kept
    assert effective_calls(originals, None) == originals


def test_report_reads_calls_through_the_correction():
    plan = single_plan()
    calls = [saved_call()]
    results = [result(CASE.id, "t")]
    plain = build_report(plan, run(), results, calls)
    assert plain["provenance"]["accounting_correction"] is None
    assert plain["summary"]["targets"][0]["cost_usd"] == 0.000112
    assert not any("accounting correction" in line for line in plain["limitations"])
    rows = [verify_call(calls[0], single_target(), sse(raw_usage()), bound=BOUND)]
    correction = {**build_artifact("run-test", plan.plan_sha256, rows), "created_at": "now"}
    report = build_report(plan, run(), results, calls, correction=correction)
    ReportModel.model_validate(report)
    metric = report["summary"]["targets"][0]
    assert metric["cost_usd"] == 0.0001195 and metric["tokens"]["cache_write_tokens"] == 30
    assert report["summary"]["total_spend_usd"] == 0.0001195
    provenance = report["provenance"]["accounting_correction"]
    assert provenance == {k: v for k, v in correction.items() if k != "calls"}
    assert any(correction["id"] in line for line in report["limitations"])
    assert calls[0]["cost_usd"] == 0.000112  # the caller's rows are not modified
