"""The original lending-library tau domain: tools, refusals, snapshots."""

import json

from pytest_srbench.benchmarks.tau_library import LibraryState, schemas

DB = {
    "members": {
        "M1": {"name": "A", "fines_cents": 100, "loans": []},
        "M2": {"name": "B", "fines_cents": 0, "loans": []},
    },
    "books": {
        "B1": {"title": "Salt", "author": "Marr", "copies_available": 1},
        "B2": {"title": "Harbor", "author": "Marr", "copies_available": 0},
    },
    "holds": [],
}


def test_checkout_refused_with_fines_and_database_unchanged():
    state = LibraryState(DB)
    ok, text = state.call("checkout_book", {"member_id": "M1", "book_id": "B1"})
    assert not ok and "unpaid fines" in text
    assert state.snapshot() == DB


def test_pay_then_borrow_and_holds():
    state = LibraryState(DB)
    assert state.call("pay_fine", {"member_id": "M1", "amount_cents": 100})[0]
    ok, text = state.call("checkout_book", {"member_id": "M1", "book_id": "B1"})
    assert ok and json.loads(text)["due_in_days"] == 21
    assert state.snapshot()["books"]["B1"]["copies_available"] == 0
    assert not state.call("checkout_book", {"member_id": "M2", "book_id": "B1"})[0]
    assert state.call("place_hold", {"member_id": "M2", "book_id": "B2"})[0]
    assert state.snapshot()["holds"] == [{"member_id": "M2", "book_id": "B2"}]
    assert DB["holds"] == []  # the initial database is never mutated


def test_bad_calls_are_errors_not_crashes():
    state = LibraryState(DB)
    assert state.call("no_such_tool", {}) == (False, "error: unknown tool no_such_tool")
    assert not state.call("get_member", {"member_id": "M9"})[0]
    assert not state.call("get_member", {"wrong": "arg"})[0]
    assert [s["function"]["name"] for s in schemas(["get_member", "nope"])] == ["get_member"]
