"""reconcile_usage over a real SqliteStore with real evidence packs: worked examples 11, 12 and
13 of reference/report-and-accounting.md §10, acceptance item 17 of run-lifecycle §16, the
command, and one real pytest run reconciled end to end."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_srbench.app.reconcile import reconcile_usage
from pytest_srbench.app.reports import report_from_store
from pytest_srbench.cli.main import main as srbench_main
from pytest_srbench.core.compare.runs import RunSide, compare
from pytest_srbench.core.offline import reconcile as rc
from pytest_srbench.core.offline.reconcile import ReconcileError
from pytest_srbench.store import StoreError, open_store
from pytest_srbench.store.corrections import latest_correction
from pytest_srbench.store.liveness import this_process
from tests.accounting_helpers import (
    buckets,
    mom_plan,
    raw_call_rows,
    raw_usage,
    receipt,
    single_plan,
    sse,
    store_run,
)

OLD = buckets(80, 20, 0, 10)


def accounting_events(store, run_id: str) -> list[dict]:
    return [e["data"] for e in store.events(run_id, kinds=("accounting_reconciled",))]


def test_example_12_artifact_is_appended_once_and_reports_read_it(tmp_path):
    store = open_store(tmp_path / "s")
    store_run(
        store,
        "run-12",
        single_plan(),
        [(receipt("call-1", "t", OLD, 0.000112, raw_usage()), sse(raw_usage()))],
    )
    before = raw_call_rows(store, "run-12")
    original_report = report_from_store(store, "run-12")
    assert original_report["summary"]["targets"][0]["cost_usd"] == 0.000112

    artifact = reconcile_usage(store, "run-12")
    assert artifact["qualified"] is True
    assert artifact["verified_call_count"] == 1
    assert artifact["unverifiable_call_count"] == 0
    assert artifact["corrected_call_count"] == 1
    assert artifact["original_known_spend_usd"] == 0.000112
    assert artifact["corrected_known_spend_usd"] == 0.0001195
    assert artifact["original_receipts_preserved"] is True and artifact["model_requests"] == 0
    assert artifact["version"] == "sr-bench-accounting-v1"
    assert artifact["id"] == "accounting-" + artifact["evidence_sha256"][:24]
    assert artifact["created_at"]
    (row,) = artifact["calls"]
    assert row["usage"] == buckets(50, 20, 30, 10) and row["original_usage"] == OLD

    again = reconcile_usage(store, "run-12")
    assert again == artifact  # identical, created_at included
    assert len(accounting_events(store, "run-12")) == 1

    report = report_from_store(store, "run-12")
    metric = report["summary"]["targets"][0]
    assert metric["cost_usd"] == 0.0001195
    assert metric["tokens"]["cache_write_tokens"] == 30
    assert report["summary"]["total_spend_usd"] == 0.0001195
    assert report["provenance"]["accounting_correction"]["id"] == artifact["id"]
    assert "calls" not in report["provenance"]["accounting_correction"]
    # the original receipt is unchanged, byte for byte
    assert raw_call_rows(store, "run-12") == before
    assert store.calls("run-12")[0]["usage"] == OLD
    assert store.calls("run-12")[0]["cost_usd"] == 0.000112


def _mom_two_calls():
    usage = buckets(50, 20, 30, 10)
    call = receipt(
        "call-1",
        "router",
        usage,
        0.0001195,
        raw_usage(),
        inference_call_count=2,
        model_usage=[{"model": "m", "selected_model": "m", "usage": usage}],
    )
    return mom_plan(), call, sse(raw_usage())


@pytest.mark.parametrize("variant", ["missing", "created-31", "no-done", "mom-two-calls"])
def test_example_13_unverifiable_calls_become_unknown(tmp_path, variant):
    store = open_store(tmp_path / "s")
    plan, target_id = single_plan(), "t"
    call = receipt("call-1", "t", buckets(50, 20, 30, 10), 0.0001195, raw_usage())
    evidence = sse(raw_usage())
    expected = rc.UNVERIFIABLE
    if variant == "created-31":
        evidence, expected = sse(raw_usage(created=31)), rc.USAGE_MISMATCH
    elif variant == "no-done":
        evidence, expected = sse(raw_usage(), done=0), rc.DONE_COUNT
    elif variant == "mom-two-calls":
        (plan, call, evidence), target_id = _mom_two_calls(), "router"
        expected = rc.MOM_NOT_DIRECT
    store_run(store, "run-13", plan, [(call, evidence)])
    if variant == "missing":
        for pack in (tmp_path / "s" / "runs" / "run-13" / "evidence").iterdir():
            pack.unlink()
    before = raw_call_rows(store, "run-13")
    assert report_from_store(store, "run-13")["summary"]["targets"][0]["cost_usd"] is not None

    artifact = reconcile_usage(store, "run-13")
    assert artifact["qualified"] is False
    assert artifact["unverifiable_call_count"] == 1 and artifact["verified_call_count"] == 0
    assert artifact["corrected_known_spend_usd"] == 0
    (row,) = artifact["calls"]
    assert row["unknown_reason"] == expected
    assert ("stream_sha256" in row) is (variant != "missing")

    metric = report_from_store(store, "run-13")["summary"]["targets"][0]
    assert metric["id"] == target_id
    assert metric["cost_usd"] is None
    assert metric["tokens"] is None
    assert metric["cost_complete"] is False
    assert raw_call_rows(store, "run-13") == before


def test_example_11_reconcile_then_compare(tmp_path):
    store = open_store(tmp_path / "s")
    # baseline receipt priced before created_cache_tokens was understood: all 100 as input
    base_raw = raw_usage(cached=0, created=30)
    store_run(
        store,
        "run-base",
        single_plan("base"),
        [(receipt("call-b", "base", buckets(100, 0, 0, 10), 0.00013, base_raw), sse(base_raw))],
    )
    cand_raw = raw_usage(cached=80, created=0)
    cand_call = receipt("call-c", "router", buckets(20, 80, 0, 10), 0.000058, cand_raw)
    store_run(store, "run-cand", mom_plan("router"), [(cand_call, sse(cand_raw))])

    before = compare(
        RunSide.from_report(report_from_store(store, "run-base")),
        RunSide.from_report(report_from_store(store, "run-cand")),
    )["comparisons"][0]
    assert before["subject_cost_saving_percent"] == pytest.approx(100 * (1 - 58 / 130))

    base = reconcile_usage(store, "run-base")
    cand = reconcile_usage(store, "run-cand")
    assert base["qualified"] and base["corrected_call_count"] == 1
    assert cand["qualified"] and cand["corrected_call_count"] == 0  # direct MoM, verified
    base_report = report_from_store(store, "run-base")
    cand_report = report_from_store(store, "run-cand")
    assert base_report["summary"]["targets"][0]["cost_usd"] == 0.0001375
    assert cand_report["summary"]["targets"][0]["cost_usd"] == 0.000058

    result = compare(RunSide.from_report(base_report), RunSide.from_report(cand_report))
    row = result["comparisons"][0]
    assert row["subject_cost_saving_percent"] == 57.81818181818181
    assert row["baseline_total_cost_usd"] == row["baseline_subject_cost_usd"] == 0.0001375
    assert row["candidate_total_cost_usd"] == row["candidate_subject_cost_usd"] == 0.000058
    assert row["total_cost_saving_percent"] == row["subject_cost_saving_percent"]
    assert row["cache_neutral_baseline_cost_usd"] == pytest.approx(0.00013)
    assert row["cache_neutral_candidate_cost_usd"] == pytest.approx(0.00013)
    assert row["cache_neutral_cost_saving_percent"] == 0


def test_acceptance_17_rejections_and_one_correction_per_evidence(tmp_path):
    store = open_store(tmp_path / "s")
    call = receipt("call-1", "t", OLD, 0.000112, raw_usage())
    store_run(store, "run-live", single_plan(), [(call, sse(raw_usage()))], status="running")
    with pytest.raises(ReconcileError, match="terminal live"):
        reconcile_usage(store, "run-live")
    preview = single_plan().model_copy(update={"mode": "preview", "plan_sha256": "preview-plan"})
    store_run(store, "run-preview", preview, [(call | {"id": "call-p"}, sse(raw_usage()))])
    with pytest.raises(ReconcileError, match="terminal live"):
        reconcile_usage(store, "run-preview")
    store_run(store, "run-empty", single_plan(), [], status="failed")
    with pytest.raises(ReconcileError, match=r"^Run has no saved calls to reconcile$"):
        reconcile_usage(store, "run-empty")
    with pytest.raises(StoreError, match="no run 'run-nope'"):
        reconcile_usage(store, "run-nope")
    for run_id in ("run-live", "run-preview", "run-empty"):
        assert latest_correction(store, run_id) is None
        assert accounting_events(store, run_id) == []

    store.set_run_status("run-live", "interrupted")
    first = reconcile_usage(store, "run-live")
    second = reconcile_usage(store, "run-live")
    assert first["id"] == second["id"] and first == second
    assert accounting_events(store, "run-live") == [
        {"id": first["id"], "evidence_sha256": first["evidence_sha256"], "model_requests": 0}
    ]

    # new evidence (the pack bytes changed in place) appends a new, effective version
    (pack,) = (tmp_path / "s" / "runs" / "run-live" / "evidence").iterdir()
    pack.write_bytes(
        pack.read_bytes().replace(b'"created_cache_tokens": 30', b'"created_cache_tokens": 31')
    )
    third = reconcile_usage(store, "run-live")
    assert third["id"] != first["id"] and third["qualified"] is False
    assert third["calls"][0]["unknown_reason"] == rc.USAGE_MISMATCH
    assert latest_correction(store, "run-live") == third
    assert [e["id"] for e in accounting_events(store, "run-live")] == [first["id"], third["id"]]


def _cli(tmp_path: Path, *argv: str) -> int:
    """The ``srbench`` command in this process (its one error mapping included)."""
    return srbench_main(["--store", str(tmp_path / "s"), *argv])


def test_reconcile_usage_command(tmp_path, capsys):
    store = open_store(tmp_path / "s")
    call = receipt("call-1", "t", OLD, 0.000112, raw_usage())
    store_run(store, "run-ok", single_plan(), [(call, sse(raw_usage()))])
    store_run(store, "run-busy", single_plan(), [(call | {"id": "c2"}, sse(raw_usage()))],
              status="running")  # fmt: skip
    store.set_owner("run-busy", this_process())  # alive: the sweep leaves it running

    assert _cli(tmp_path, "reconcile-usage", "run-ok") == 0
    text = capsys.readouterr().out
    assert "qualified: yes" in text and "1 verified, 0 unverifiable, 1 corrected" in text
    assert "model requests: 0" in text

    assert _cli(tmp_path, "reconcile-usage", "run-ok", "--format", "json") == 0
    printed = json.loads(capsys.readouterr().out)
    assert printed == latest_correction(store, "run-ok")

    assert _cli(tmp_path, "reconcile-usage", "run-busy") == 2
    err = capsys.readouterr().err
    assert err == "srbench reconcile-usage: Usage reconciliation requires a terminal live run\n"
    assert _cli(tmp_path, "reconcile-usage", "run-nope") == 2
    assert "srbench reconcile-usage: no run 'run-nope'" in capsys.readouterr().err

    assert srbench_main(["--store", str(tmp_path / "none"), "reconcile-usage", "x"]) == 2
    assert "srbench reconcile-usage: no store at" in capsys.readouterr().err


@pytest.mark.slow
def test_a_real_run_reconciles_to_its_own_receipts(pytester):
    done = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro",
        "--srbench-benchmark=simpleqa-verified", "--srbench-json=report.json",
    )  # fmt: skip
    assert done.ret == 0, done.stdout.str()
    run_id = json.loads((pytester.path / "report.json").read_text())["run_id"]
    store = open_store(pytester.path / ".srbench")
    tables = ("calls", "results", "runs")
    before = {t: [tuple(r) for r in store.db.execute(f"SELECT * FROM {t}")] for t in tables}
    plain = report_from_store(store, run_id)

    artifact = reconcile_usage(store, run_id)
    roles = {c["role"] for c in store.calls(run_id)}
    assert roles == {"subject", "judge"}
    assert artifact["qualified"] is True, [r.get("unknown_reason") for r in artifact["calls"]]
    assert artifact["verified_call_count"] == store.count_calls(run_id) > 0
    assert artifact["corrected_call_count"] == 0  # the live parser and the reconciler agree
    assert artifact["corrected_known_spend_usd"] == pytest.approx(
        artifact["original_known_spend_usd"]
    )
    after = {t: [tuple(r) for r in store.db.execute(f"SELECT * FROM {t}")] for t in tables}
    assert after == before  # call, result and run rows byte-identical

    corrected = report_from_store(store, run_id)
    for a, b in zip(plain["summary"]["targets"], corrected["summary"]["targets"], strict=True):
        assert a["cost_usd"] == b["cost_usd"] and a["tokens"] == b["tokens"]
    assert corrected["provenance"]["accounting_correction"]["id"] == artifact["id"]
