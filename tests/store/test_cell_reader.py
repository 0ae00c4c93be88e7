"""``Store.cell_rows``: a run's cells in planned order with their result row and calls, then
the rows outside the plan, read a page at a time from one snapshot, also from a read-only
store — the same on both backends."""

from __future__ import annotations

from pytest_srbench.store import open_store
from tests.core.helpers import call, case, manifest, result, target

RUN = "run-cells"


def store_with_rows(location):
    cases = [case("mmlu-pro", str(i)) for i in (3, 1, 2)]  # planned order is not sorted order
    frozen = manifest(cases, [target("b"), target("a")])
    store = open_store(location)
    store.create_run(RUN, frozen)
    with store.transaction():
        store.insert_call(RUN, call("mmlu-pro/2", "a", id="c1"))
        store.insert_call(RUN, call("mmlu-pro/3", "b", id="c2"))
        store.insert_call(RUN, call("mmlu-pro/2", "a", id="c3", role="judge"))
        store.insert_call(RUN, call("mmlu-pro/9", "a", id="c4"))  # outside the plan
        store.insert_call(RUN, call("mmlu-pro/1", "z", id="c5"))  # a target outside the plan
        store.upsert_result(RUN, result("mmlu-pro/2", "a"))
        store.upsert_result(RUN, result("mmlu-pro/3", "b", status="failed", correct=None))
        store.upsert_result(RUN, result("mmlu-pro/8", "b"))  # outside the plan
    return store, frozen


def summary(cells):
    return [
        (c.case_id, c.target_id, c.planned, c.result and c.result["status"], c.result_rank,
         [(rank, row["id"]) for rank, row in c.calls])
        for c in cells
    ]  # fmt: skip


def test_cells_come_in_planned_order_then_the_rows_outside_the_plan(store_location):
    store, frozen = store_with_rows(store_location)
    expected = [
        ("mmlu-pro/3", "b", True, "failed", ("mmlu-pro/3", "b"), [(2, "c2")]),
        ("mmlu-pro/3", "a", True, None, ("mmlu-pro/3", "a"), []),
        ("mmlu-pro/1", "b", True, None, ("mmlu-pro/1", "b"), []),
        ("mmlu-pro/1", "a", True, None, ("mmlu-pro/1", "a"), []),
        ("mmlu-pro/2", "b", True, None, ("mmlu-pro/2", "b"), []),
        ("mmlu-pro/2", "a", True, "completed", ("mmlu-pro/2", "a"), [(1, "c1"), (3, "c3")]),
        ("mmlu-pro/8", "b", False, "completed", ("mmlu-pro/8", "b"), []),
        ("mmlu-pro/9", "a", False, None, None, [(4, "c4")]),
        ("mmlu-pro/1", "z", False, None, None, [(5, "c5")]),
    ]
    for page in (1, 2, 500):
        assert summary(store.cell_rows(RUN, frozen.planned_keys(), page=page)) == expected


def test_a_later_part_of_the_plan_and_a_slice_of_it_without_the_rows_outside(store_location):
    store, frozen = store_with_rows(store_location)
    keys = list(frozen.planned_keys())
    whole = summary(store.cell_rows(RUN, keys))
    for start in (0, 1, 4, 5, 6):
        for page in (1, 2, 500):
            # the cells before start still belong to the plan: none of them comes as outside
            assert summary(store.cell_rows(RUN, keys, page=page, start=start)) == whole[start:]
    for first, last in ((0, 2), (2, 5), (5, 6)):
        piece = store.cell_rows(RUN, keys[first:last], outside=False, page=2)
        assert summary(piece) == whole[first:last]
    assert summary(store.cell_rows(RUN, keys, start=6, outside=False)) == []


def test_a_read_only_store_is_read_the_same(store_location):
    store, frozen = store_with_rows(store_location)
    expected = summary(store.cell_rows(RUN, frozen.planned_keys()))
    store.close()
    reader = open_store(store_location, read_only=True)
    assert summary(reader.cell_rows(RUN, frozen.planned_keys(), page=2)) == expected
    assert summary(reader.cell_rows(RUN, frozen.planned_keys())) == expected  # tables dropped


def test_rows_written_while_the_cells_are_read_are_not_seen(store_location):
    store, frozen = store_with_rows(store_location)
    writer = open_store(store_location)
    cells = store.cell_rows(RUN, frozen.planned_keys(), page=1)
    first = next(cells)
    with writer.transaction():  # another connection, as another process would
        writer.upsert_result(RUN, result("mmlu-pro/1", "b"))
        writer.insert_call(RUN, call("mmlu-pro/1", "a", id="c9"))
        writer.update_call("c1", call("mmlu-pro/2", "a", 9.0, id="c1"))  # read on the last page
    rest = list(cells)
    assert [row["cost_usd"] for c in rest for _, row in c.calls if row["id"] == "c1"] == [0.002]
    assert first.case_id == "mmlu-pro/3"
    new = [c for c in rest if c.case_id == "mmlu-pro/1" and c.target_id in ("a", "b")]
    assert len(new) == 2 and all(c.result is None and not c.calls for c in new)
    later = {(c.case_id, c.target_id): c for c in store.cell_rows(RUN, frozen.planned_keys())}
    assert later[("mmlu-pro/1", "b")].result is not None


def test_a_sqlite_journal_without_the_index_by_cell_is_read_the_same(tmp_path):
    """A store last written by an older version has no ``calls_cell`` index (a read-only one
    is never upgraded): its calls are read by scanning the run's journal instead."""
    store, frozen = store_with_rows(tmp_path / "s")
    keys = list(frozen.planned_keys())
    expected = {
        (start, outside, page): summary(store.cell_rows(RUN, keys, start=start, outside=outside, page=page))
        for start in (0, 2, 6) for outside in (True, False) for page in (1, 500)
    }  # fmt: skip
    store.db.execute("DROP INDEX calls_cell")
    for (start, outside, page), cells in expected.items():
        assert summary(store.cell_rows(RUN, keys, start=start, outside=outside, page=page)) == cells
    store.close()
    reader = open_store(tmp_path / "s", read_only=True)
    assert summary(reader.cell_rows(RUN, keys, page=2)) == expected[(0, True, 500)]
    assert (
        reader.db.execute("SELECT 1 FROM sqlite_master WHERE name = 'calls_cell'").fetchone()
        is None
    )
