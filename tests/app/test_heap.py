"""``gc_paused``: the cyclic collector is off inside the block and as it was after it, also
when the block raises."""

import gc

import pytest

from pytest_srbench.app.heap import gc_paused


def test_the_collector_is_off_inside_and_as_it_was_after():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():  # nested: the inner block leaves it off
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_a_block_that_raises_still_hands_the_collector_back():
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_already_off_stays_off():
    gc.disable()
    try:
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()
