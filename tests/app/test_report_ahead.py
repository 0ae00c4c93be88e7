"""The report begun while a run's last cells run (real SQLite): fed any prefix of the plan in
any order of endings, it finishes into the report of the same rows read at once, byte for byte;
whatever could change a fed cell (an accounting correction, work settled at the run's end,
another plan, a failed read) sends the report back to a full read."""

from __future__ import annotations

import random
from typing import Any

import pytest

from pytest_srbench.app.report_ahead import BATCH, ReportAhead, SpareCpu
from pytest_srbench.app.reports import report_from_store
from pytest_srbench.app.run_end import finalize_run
from pytest_srbench.core.offline.reconcile import build_artifact
from pytest_srbench.core.report.build import FAILURE_OBSERVED
from pytest_srbench.render.json_report import report_json
from pytest_srbench.store.corrections import record_correction
from tests.app.helpers import RUN, from_lists, stored
from tests.core.report.random_runs import plan, rows


def reads_from(store: Any) -> list[int]:
    """The ``start`` of every read of the store's cells from now on."""
    starts: list[int] = []
    read = store.cell_rows

    def recorded(run_id: str, keys: Any, **options: Any) -> Any:
        starts.append(options.get("start", 0))
        return read(run_id, keys, **options)

    store.cell_rows = recorded
    return starts


def random_run(tmp_path: Any, seed: int, **options: Any) -> tuple[Any, Any]:
    rng = random.Random(seed)
    frozen = plan(rng, **options)
    results, calls = rows(rng, frozen)
    events = [(FAILURE_OBSERVED, {"summary": "boom"})] if seed % 3 == 0 else []
    store = stored(tmp_path, frozen, results, calls, events)
    return store, store.get_manifest(RUN)


def end_some(ahead: ReportAhead, rng: random.Random, share: float) -> int:
    """Cells of the plan end in a shuffled order, the feed stepping between them; how many of
    the plan's first cells had all ended (what the pass should have been fed)."""
    keys = list(ahead.manifest.iter_planned_keys())
    ended = [key for key in keys if rng.random() < share]
    rng.shuffle(ended)
    for key in ended:
        ahead.ended(key)
        ahead.step(rng.choice([1, 2, 128]), least=rng.choice([1, 3, 64]))
    while ahead.step(least=1):
        pass
    done = set(ended)
    return next((i for i, key in enumerate(keys) if key not in done), len(keys))


@pytest.mark.parametrize("seed", range(8))
def test_a_report_begun_early_is_the_report_of_the_rows_read_at_once(tmp_path, seed):
    store, frozen = random_run(tmp_path, seed, repeats=1 + seed % 3, preview=seed == 5)
    expected = from_lists(store)
    ahead = ReportAhead(store, RUN, frozen)
    rng = random.Random(seed)
    prefix = end_some(ahead, rng, share=rng.choice([0.5, 0.9, 1.0]))
    assert ahead.fed == prefix
    starts = reads_from(store)
    report = report_from_store(store, RUN, manifest=frozen, saved=False, ahead=ahead)
    assert starts == [prefix]  # only the cells after the fed ones are read again
    assert report_json(report) == expected
    assert ahead.take(frozen, None) is None  # taken once


def test_every_cell_fed_before_the_report_reads_only_the_rows_outside_the_plan(tmp_path):
    store, frozen = random_run(tmp_path, 1)
    ahead = ReportAhead(store, RUN, frozen)
    for key in frozen.iter_planned_keys():
        ahead.ended(key)
    while ahead.step():  # the last cell ended: what is ready is fed, however few
        pass
    assert ahead.fed == frozen.planned_count()
    starts = reads_from(store)
    report = report_from_store(store, RUN, manifest=frozen, saved=False, ahead=ahead)
    assert starts == [frozen.planned_count()]
    assert report_json(report) == from_lists(store)


def test_an_accounting_correction_sends_the_report_back_to_a_full_read(tmp_path):
    store, frozen = random_run(tmp_path, 2)
    ahead = ReportAhead(store, RUN, frozen)
    end_some(ahead, random.Random(2), share=1.0)
    assert ahead.fed > 0
    (call,) = store.calls(RUN, limit=1)
    row = {"call_id": call["id"], "original_receipt_sha256": "0" * 64, "original_usage": None,
           "original_cost_usd": None, "verified": True, "cost_usd": 0.25,
           "usage": {"input_tokens": 3, "cached_input_tokens": 0, "cache_write_tokens": 0,
                     "output_tokens": 1}}  # fmt: skip
    record_correction(store, build_artifact(RUN, frozen.plan_sha256, [row]))
    starts = reads_from(store)
    report = report_from_store(store, RUN, manifest=frozen, saved=False, ahead=ahead)
    assert starts == [0]
    assert report["provenance"]["accounting_correction"]
    assert report_json(report) == from_lists(store)


def test_another_plan_or_a_failed_read_sends_the_report_back_to_a_full_read(tmp_path):
    store, frozen = random_run(tmp_path, 4)
    ahead = ReportAhead(store, RUN, frozen)
    end_some(ahead, random.Random(4), share=1.0)
    starts = reads_from(store)
    other = store.get_manifest(RUN)  # equal, but not the plan the pass was begun with
    report = report_from_store(store, RUN, manifest=other, saved=False, ahead=ahead)
    assert starts == [0] and report_json(report) == from_lists(store)

    ahead = ReportAhead(store, RUN, frozen)
    read = store.cell_rows

    def broken(*args: Any, **options: Any) -> Any:
        raise OSError("disk I/O error")

    store.cell_rows = broken
    ahead.ended(next(frozen.iter_planned_keys()))
    assert ahead.step(least=1) == 0 and not ahead.usable  # given up, not raised into the run
    store.cell_rows = read
    starts = reads_from(store)
    report = report_from_store(store, RUN, manifest=frozen, saved=False, ahead=ahead)
    assert starts == [0] and report_json(report) == from_lists(store)


def test_work_settled_at_the_end_of_the_run_gives_the_early_report_up(tmp_path):
    """A call left in flight is settled as sent_unknown when the run ends: the cell it belongs
    to may have been fed, so the report reads every cell again and shows the settled call."""
    store, frozen = random_run(tmp_path, 6)
    case_id, target_id = next(frozen.iter_planned_keys())
    store.set_run_status(RUN, "running")
    with store.transaction():
        store.insert_call(RUN, {"id": "in-flight", "case_id": case_id, "target_id": target_id,
                                "role": "subject", "status": "sent"})  # fmt: skip
    ahead = ReportAhead(store, RUN, frozen)
    end_some(ahead, random.Random(6), share=1.0)
    assert ahead.fed > 0
    starts = reads_from(store)
    report = finalize_run(store, RUN, runner={"transport": "aiohttp"}, manifest=frozen, ahead=ahead)
    assert starts == [0] and not ahead.usable
    settled = next(c for c in store.calls(RUN) if c["id"] == "in-flight")
    assert settled["status"] == "sent_unknown"
    rebuilt = report_from_store(store, RUN, manifest=frozen, saved=False)
    assert report_json(report) == report_json(rebuilt)


def test_a_run_ended_with_nothing_to_settle_keeps_the_early_report(tmp_path):
    store, frozen = random_run(tmp_path, 7)
    with store.transaction():  # what the random rows leave in flight is settled beforehand
        for call in store.calls(RUN, active=True):
            for key in ("_seq", "bytes_received", "last_activity_at"):
                call.pop(key, None)
            store.update_call(call["id"], {**call, "status": "failed"})
        for row in store.results(RUN):
            if row["status"] == "running":
                store.upsert_result(RUN, {**row, "status": "failed", "error": "stopped"})
    store.set_run_status(RUN, "running")
    ahead = ReportAhead(store, RUN, frozen)
    end_some(ahead, random.Random(7), share=0.8)
    fed = ahead.fed
    starts = reads_from(store)
    report = finalize_run(store, RUN, runner={"transport": "aiohttp"}, manifest=frozen, ahead=ahead)
    assert starts == [fed]
    rebuilt = report_from_store(store, RUN, manifest=frozen, saved=False)
    assert report_json(report) == report_json(rebuilt)


def test_a_step_reads_once_a_batch_is_ready_or_the_plan_has_ended(tmp_path):
    store, frozen = random_run(tmp_path, 3)
    keys = list(frozen.iter_planned_keys())
    assert 1 < len(keys) < BATCH
    ahead = ReportAhead(store, RUN, frozen)
    for key in keys[:-1]:
        ahead.ended(key)
    assert ahead.step() == 0  # fewer than a batch, and the plan goes on
    assert ahead.step(least=len(keys) - 1) == len(keys) - 1
    ahead.ended(keys[-1])
    assert ahead.step() == 1 and ahead.fed == len(keys)


class Clocks:
    """A wall clock and a process CPU clock that the test moves."""

    def __init__(self) -> None:
        self.wall = 0.0
        self.cpu = 0.0

    def spend(self, wall: float, cpu: float) -> None:
        self.wall += wall
        self.cpu += cpu


def test_spare_cpu_is_what_the_process_left_of_one_core_over_its_last_window():
    clocks = Clocks()
    spare = SpareCpu(window=0.25, most=0.6, wall=lambda: clocks.wall, cpu=lambda: clocks.cpu)
    assert not spare()  # nothing measured yet
    clocks.spend(0.1, 0.0)
    assert not spare()  # the first window has not passed
    clocks.spend(0.2, 0.05)
    assert spare()  # 0.05 s of CPU in 0.3 s
    clocks.spend(0.1, 0.1)
    assert spare()  # the answer of the last whole window holds within the next
    clocks.spend(0.2, 0.2)
    assert not spare()  # 0.3 s of CPU in 0.3 s: a busy core
    clocks.spend(0.5, 0.29)
    assert spare()


def test_a_process_without_cpu_to_spare_leaves_the_report_to_the_end(tmp_path):
    store, frozen = random_run(tmp_path, 5)
    busy = [True]
    ahead = ReportAhead(store, RUN, frozen, spare=lambda: not busy[0])
    for key in frozen.iter_planned_keys():
        ahead.ended(key)
    assert ahead.step(least=1) == 0 and ahead.fed == 0 and ahead.usable
    busy[0] = False
    assert ahead.step(least=1) > 0
    while ahead.step(least=1):
        pass
    assert ahead.fed == frozen.planned_count()
    report = report_from_store(store, RUN, manifest=frozen, saved=False, ahead=ahead)
    assert report_json(report) == from_lists(store)
