"""An outcome slot: set once from any thread, waited for by another."""

from __future__ import annotations

import sys
import threading
import time

import pytest

from pytest_srbench.engine.slots import OutcomeSlot


def test_the_first_value_wins_and_later_ones_are_ignored() -> None:
    seen: list[OutcomeSlot[str]] = []
    slot: OutcomeSlot[str] = OutcomeSlot(seen.append)
    assert not slot.done()
    assert slot.set_result("first") is True
    assert slot.set_result("second") is False
    assert slot.done() and slot.result() == "first"
    assert seen == [slot]  # the callback ran once, for the value that counted


def test_waiting_times_out_then_receives_a_later_value() -> None:
    slot: OutcomeSlot[str] = OutcomeSlot()
    started = time.monotonic()
    with pytest.raises(TimeoutError):
        slot.result(timeout=0.05)
    assert time.monotonic() - started >= 0.04
    threading.Timer(0.05, slot.set_result, args=("late",)).start()
    assert slot.result(timeout=10) == "late"


def test_a_filled_slot_answers_at_once() -> None:
    assert OutcomeSlot.filled("kept").result(timeout=0) == "kept"


def test_every_waiter_gets_its_value_when_set_and_wait_race() -> None:
    """Many slots, each set by one thread while another waits: none is missed (a missed
    hand-over would hang until the timeout), and each value goes to its own slot."""
    switch = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)  # switch threads as often as possible
    try:
        slots: list[OutcomeSlot[int]] = [OutcomeSlot() for _ in range(3000)]

        def fill() -> None:
            for number, slot in enumerate(slots):
                slot.set_result(number)

        filler = threading.Thread(target=fill)
        filler.start()
        got = [slot.result(timeout=10) for slot in slots]
        filler.join()
    finally:
        sys.setswitchinterval(switch)
    assert got == list(range(3000))


def test_racing_setters_leave_exactly_one_value() -> None:
    calls: list[int] = []
    slot: OutcomeSlot[int] = OutcomeSlot(lambda filled: calls.append(filled.result()))
    barrier = threading.Barrier(8)

    def race(number: int) -> None:
        barrier.wait()
        slot.set_result(number)

    threads = [threading.Thread(target=race, args=(n,)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(calls) == 1 and calls[0] == slot.result()
