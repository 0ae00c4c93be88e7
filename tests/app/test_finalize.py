"""Ending a run: the final-status rules and settling work left in flight (real SQLite)."""

import pytest

from pytest_srbench.app.finalize import final_status, finalize_run
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


def test_finalize_settles_in_flight_work_as_sent_unknown_and_never_resends(tmp_path):
    store = open_store(tmp_path / "s")
    plan = manifest([case("mmlu-pro", "1"), case("mmlu-pro", "2")], [target("t")])
    store.create_run("run-1", plan)
    with store.transaction():
        store.upsert_result(
            "run-1",
            {"case_id": "mmlu-pro/1", "target_id": "t", "status": "completed", "correct": True},
        )
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
