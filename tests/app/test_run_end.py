"""Ending a run: the final-status rules and settling work left in flight (real SQLite)."""

import pytest

from pytest_srbench.app.run_end import final_status, finalize_run
from pytest_srbench.store import open_store
from tests.core.helpers import case, manifest, target


@pytest.mark.parametrize(
    ("counts", "stops", "interrupted", "expected"),
    [
        ({"completed": 4}, [], False, "completed"),
        ({"completed": 3}, [], False, "failed"),  # a pending cell without a stop
        ({"completed": 3, "failed": 1}, [], False, "failed"),
        ({"completed": 3, "cancelled": 1}, [{"reason": "budget", "user": False}], False, "failed"),
        ({"completed": 2}, [{"reason": "wall-time", "user": False}], False, "cancelled"),
        ({"completed": 2, "failed": 1}, [{"reason": "ctrl-c", "user": True}], False, "cancelled"),
        ({"completed": 4}, [], True, "cancelled"),
    ],
)
def test_final_status_rules(counts, stops, interrupted, expected):
    assert final_status(counts, 4, stops, interrupted) == expected


def two_cells_one_completed(tmp_path):
    """A store with a run of two planned cells, the first completed and correct."""
    store = open_store(tmp_path / "s")
    plan = manifest([case("mmlu-pro", "1"), case("mmlu-pro", "2")], [target("t")])
    store.create_run("run-1", plan)
    with store.transaction():
        store.upsert_result(
            "run-1",
            {"case_id": "mmlu-pro/1", "target_id": "t", "status": "completed", "correct": True},
        )
    return store, plan


def test_finalize_settles_in_flight_work_as_sent_unknown_and_never_resends(tmp_path):
    store, _ = two_cells_one_completed(tmp_path)
    with store.transaction():
        store.upsert_result(
            "run-1", {"case_id": "mmlu-pro/2", "target_id": "t", "status": "running"}
        )
        store.insert_call(
            "run-1",
            {
                "id": "c1",
                "case_id": "mmlu-pro/2",
                "target_id": "t",
                "role": "subject",
                "status": "sent",
            },
        )
    report = finalize_run(store, "run-1", runner={"transport": "aiohttp"})
    assert report["status"] == "failed"
    (call,) = store.calls("run-1")
    assert call["status"] == "sent_unknown"
    rows = {r["case_id"]: r for r in store.results("run-1")}
    assert rows["mmlu-pro/2"]["status"] == "sent_unknown"
    metric = report["summary"]["targets"][0]
    assert metric["failed"] == 1 and metric["correct"] == 1 and metric["accuracy"] == 0.5
    assert (store.run_dir("run-1") / "report.json").exists()


def test_a_lost_worker_interrupts_an_unfinished_run_only():
    assert final_status({"completed": 3, "sent_unknown": 1}, 6, [], False, True) == "interrupted"
    assert final_status({"completed": 6}, 6, [], False, True) == "completed"
    assert final_status({"completed": 3}, 6, [{"user": True}], False, True) == "cancelled"
    assert final_status({"completed": 3, "failed": 1}, 6, [], False, False) == "failed"


def test_the_finalising_process_samples_its_peak_again_once_the_report_is_built(tmp_path):
    """``late_peak``: the peak is read after the report is built (the sampler runs then), it
    raises only the finalising process's entry and the run's maximum, and the report and the
    store say the same."""
    store = open_store(tmp_path / "s")
    store.create_run("run-1", manifest([case("mmlu-pro", "1")], [target("t")]))
    with store.transaction():
        store.upsert_result(
            "run-1",
            {"case_id": "mmlu-pro/1", "target_id": "t", "status": "completed", "correct": True},
        )
        store.register_process(
            "run-1", {"process_id": "h:1", "role": "single", "peak_rss_mb": 90.0}
        )
        store.register_process(
            "run-1", {"process_id": "h:2", "role": "single", "peak_rss_mb": 95.0}
        )
    sampled: list[str] = []

    def sampler() -> float:
        sampled.append(store.require_run("run-1").status)  # by then the run is settled
        return 120.0

    report = finalize_run(store, "run-1", runner={}, late_peak=("h:1", sampler))
    assert sampled == ["completed"]
    runner = report["provenance"]["runner"]
    assert runner["peak_rss_mb"] == 120.0
    assert {p["process_id"]: p["peak_rss_mb"] for p in runner["process_details"]} == {
        "h:1": 120.0,
        "h:2": 95.0,
    }
    assert store.get_runner("run-1") == runner
    assert (store.run_dir("run-1") / "report.json").read_text().count('"peak_rss_mb": 120.0') == 2


@pytest.mark.parametrize("held", [False, True])
def test_a_run_with_a_cell_never_run_ends_failed_whether_or_not_the_plan_is_held(tmp_path, held):
    """The planned cell count comes from the plan the finalising process holds (a pytest
    session) or from the stored outline; either way a cell without a result fails the run,
    and a held plan that is not the run's is not used."""
    store, plan = two_cells_one_completed(tmp_path)
    other = manifest([case("mmlu-pro", "1")], [target("t")])  # one cell: would pass
    report = finalize_run(store, "run-1", runner={}, manifest=plan if held else other)
    assert report["status"] == "failed"
