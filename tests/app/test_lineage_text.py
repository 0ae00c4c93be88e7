"""Lineage and accounting corrections in the text and HTML reports, not only the JSON
(docs/durability.md): a recovery child names its parent and the parent's known spend, the
parent lists its children, a corrected run says which correction it reads (hash, time,
verified and changed counts, known spend before and after). Model text stays escaped."""

from __future__ import annotations

from pytest_srbench.app.lifecycle import open_swept_store
from pytest_srbench.app.reconcile import reconcile_usage
from pytest_srbench.app.recovery import create_child, plan_for
from pytest_srbench.app.reports import report_from_store
from pytest_srbench.render.html import render_run_html
from pytest_srbench.render.terminal import render_summary
from pytest_srbench.store.opening import open_store
from tests.accounting_helpers import buckets, raw_usage, receipt, single_plan, sse, store_run


def test_a_recovery_child_names_its_parent_and_the_parent_lists_it(interrupted):
    store, parent = interrupted
    open_swept_store(store.root)
    plan = plan_for(store, parent)
    spend = plan["parent_snapshot"]["known_spend_usd"]
    child, _ = create_child(store, parent, plan, idempotency_key="lineage")
    cells = len(store.get_manifest(child.id).recovery["selected_cells"])

    child_report = report_from_store(store, child.id)
    text = "\n".join(render_summary(child_report))
    assert f"lineage: Recovery subset of run {parent} ({cells} cells; undispatched cells)" in text
    assert f"The parent's known spend ${spend:.6f} is its own" in text
    html = render_run_html(child_report)
    assert 'id="lineage"' in html
    assert f"Recovery subset of run {parent}" in html and f"${spend:.6f}" in html

    parent_report = report_from_store(store, parent)
    text = "\n".join(render_summary(parent_report))
    assert (
        f"lineage: Recovery children (1): {child.id} (queued, undispatched, {cells} cells)" in text
    )
    assert f"Recovery children (1): {child.id}" in render_run_html(parent_report)


def test_a_corrected_run_says_which_correction_it_reads(tmp_path):
    store = open_store(tmp_path / "s")
    old = buckets(80, 20, 0, 10)
    store_run(store, "run-c", single_plan(),
              [(receipt("call-1", "t", old, 0.000112, raw_usage()), sse(raw_usage()))])  # fmt: skip
    assert not any(line.startswith("lineage:") for line in render_summary(
        report_from_store(store, "run-c")))  # fmt: skip
    artifact = reconcile_usage(store, "run-c")
    report = report_from_store(store, "run-c")
    expected = (
        f"Accounting correction {artifact['id']} (evidence sha256 "
        f"{artifact['evidence_sha256'][:16]}, {artifact['created_at']}): 1 calls verified, "
        "1 changed, 0 unverifiable; known spend $0.000112 before, $0.000120 after."
    )
    assert f"lineage: {expected}" in "\n".join(render_summary(report))
    assert expected in render_run_html(report)
