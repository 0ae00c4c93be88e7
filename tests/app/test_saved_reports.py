"""A finished run's report is saved and served again only while nothing it was built from has
changed: served byte for byte as rebuilt, rebuilt after a correction, a status change, a new
result, a new runner record or other code, and after a torn save; never saved while the run
can still change or on a read-only store."""

from __future__ import annotations

import json
import random
from pathlib import Path

from pytest_srbench.app import saved_reports
from pytest_srbench.app.reports import report_from_store
from pytest_srbench.app.run_end import write_run_report
from pytest_srbench.app.saved_reports import FOLDER, report_key
from pytest_srbench.core.offline.reconcile import build_artifact
from pytest_srbench.render.json_report import SavedReport, report_json
from pytest_srbench.store import open_store
from pytest_srbench.store.corrections import record_correction
from tests.app.helpers import RUN, from_lists, stored
from tests.core.report.random_runs import plan, rows
from tests.zygote_server import new_session_command


def finished(tmp_path: Path, seed: int = 11):
    rng = random.Random(seed)
    frozen = plan(rng, repeats=2)
    results, calls = rows(rng, frozen)
    return stored(tmp_path, frozen, results, calls), frozen, calls


def rebuilt(store) -> str:
    return report_json(report_from_store(store, RUN, saved=False))


def test_the_saved_report_is_served_as_built_until_something_changes(tmp_path):
    store, _, _ = finished(tmp_path)
    first = report_from_store(store, RUN)  # built, then saved
    assert not isinstance(first, SavedReport)
    assert (store.run_dir(RUN) / FOLDER / "key").read_text() == report_key(store, RUN)
    again = report_from_store(store, RUN)
    assert isinstance(again, SavedReport)
    assert report_json(again) == report_json(first) == from_lists(store)
    assert list(again["cells"]) == list(first["cells"])
    assert again["cells"][3] == first["cells"][3] and len(again["cells"]) == len(first["cells"])


def test_a_correction_a_status_a_result_or_a_runner_record_invalidates_it(tmp_path):
    store, frozen, calls = finished(tmp_path)
    report_from_store(store, RUN)
    call = next(c for c in calls if c.get("role") == "subject")
    row = {"call_id": call["id"], "original_receipt_sha256": "0" * 64, "original_usage": None,
           "original_cost_usd": None, "verified": True, "cost_usd": 0.125,
           "usage": {"input_tokens": 7, "cached_input_tokens": 0, "cache_write_tokens": 0,
                     "output_tokens": 2}}  # fmt: skip
    changes = [
        lambda: record_correction(store, build_artifact(RUN, frozen.plan_sha256, [row])),
        lambda: store.set_run_status(RUN, "cancelled", "stopped by hand"),
        lambda: store.upsert_result(
            RUN, {"case_id": "extra/1", "target_id": "t-x", "status": "completed"}
        ),
        lambda: store.set_runner(RUN, {"peak_rss_mb": 123.0}),
    ]
    for change in changes:
        with store.transaction():
            change()
        served = report_from_store(store, RUN)
        assert not isinstance(served, SavedReport)  # rebuilt from the rows
        assert report_json(served) == rebuilt(store) == from_lists(store)
        assert isinstance(report_from_store(store, RUN), SavedReport)  # and saved again


def test_other_code_rebuilds_it(tmp_path, monkeypatch):
    store, _, _ = finished(tmp_path)
    report_from_store(store, RUN)
    monkeypatch.setattr(saved_reports, "code_fingerprint", lambda: "another version")
    assert not isinstance(report_from_store(store, RUN), SavedReport)


def test_a_torn_or_damaged_save_is_rebuilt(tmp_path):
    store, _, _ = finished(tmp_path)
    expected = report_json(report_from_store(store, RUN))
    folder = store.run_dir(RUN) / FOLDER
    cells = folder / "cells.bin"
    cells.write_bytes(cells.read_bytes()[:-10])  # offsets no longer describe the file
    served = report_from_store(store, RUN)
    assert not isinstance(served, SavedReport) and report_json(served) == expected
    (folder / "summary.json").write_text("{not json")
    served = report_from_store(store, RUN)
    assert not isinstance(served, SavedReport) and report_json(served) == expected


def test_a_run_that_can_still_change_is_never_saved(tmp_path):
    store, _, _ = finished(tmp_path)
    store.set_run_status(RUN, "running")
    assert report_key(store, RUN) is None
    report_from_store(store, RUN)
    assert not (store.run_dir(RUN) / FOLDER).exists()


def test_a_read_only_store_serves_a_saved_report_and_saves_none(tmp_path):
    store, _, _ = finished(tmp_path)
    expected = rebuilt(store)
    reader = open_store(store.root, read_only=True)
    assert report_json(report_from_store(reader, RUN)) == expected
    assert not (store.run_dir(RUN) / FOLDER).exists()
    report_from_store(store, RUN)  # saved by a writer
    assert isinstance(report_from_store(reader, RUN), SavedReport)


def test_a_field_set_on_a_saved_report_is_written(tmp_path):
    """The session's gate is set on the report it finalized: the file then carries it."""
    store, _, _ = finished(tmp_path)
    report_from_store(store, RUN)
    report = report_from_store(store, RUN)
    assert isinstance(report, SavedReport)
    report["gate"] = None
    report["provenance"] = {**report["provenance"], "note": "x"}
    write_run_report(store, RUN, report, tmp_path / "out.json")
    assert '"note": "x"' in (tmp_path / "out.json").read_text()


def test_the_end_of_run_report_is_the_report_rebuilt_from_the_store_byte_for_byte(tmp_path):
    """The session builds its report from the plan it holds; ``srbench report`` from the plan
    read back (canonical JSON, keys sorted): free-form fields (sampling, suites) agree."""
    import subprocess

    (tmp_path / "pyproject.toml").write_text(
        "[tool.srbench.sampling]\ntop_p = 1.0\nmax_tokens = 256\n", encoding="utf-8"
    )
    done = subprocess.run(
        [*new_session_command(), "-p", "no:cacheprovider", "-q", "-p", "no:xdist",
         "--srbench-profile=smoke", "--srbench-limit=2", "--srbench-benchmark=mmlu-pro",
         "--srbench-json=end.json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    end = (tmp_path / "end.json").read_text()
    run_id = json.loads(end)["run_id"]
    store = open_store(tmp_path / ".srbench")
    assert isinstance(report_from_store(store, run_id), SavedReport)  # saved at the end
    assert rebuilt_for(store, run_id) == end


def rebuilt_for(store, run_id: str) -> str:
    return report_json(report_from_store(store, run_id, saved=False))


def test_the_summary_of_a_plan_read_case_by_case_is_the_summary_of_its_list():
    """``summary.json`` written a batch of cases at a time reads back as the summary would
    have been written whole, whatever else the summary and the plan hold."""
    from pytest_srbench.app.saved_reports import summary_json_pieces
    from pytest_srbench.core.report.build import PlannedCases
    from tests.render.helpers import planned

    for count in (0, 1, 1000, 2345):
        cases = PlannedCases(planned(count))
        for plan_rest, rest in (({}, {}), ({"seed": 7}, {"run_id": "r", "x": [1.5, None]})):
            summary = {"plan": {**plan_rest, "cases": cases}, **rest}
            written = b"".join(summary_json_pieces(summary))
            assert json.loads(written) == {"plan": {**plan_rest, "cases": list(cases)}, **rest}


def test_a_summary_that_spells_the_splice_marker_is_written_the_plain_way():
    from pytest_srbench.app.saved_reports import summary_json_pieces
    from pytest_srbench.core.canonical import SPLICED_LIST
    from pytest_srbench.core.report.build import PlannedCases
    from tests.render.helpers import planned

    cases = PlannedCases(planned(5))
    summary = {"run_id": SPLICED_LIST, "plan": {"cases": cases}}
    written = b"".join(summary_json_pieces(summary))
    assert json.loads(written) == {"run_id": SPLICED_LIST, "plan": {"cases": list(cases)}}
