"""``gc_paused``: the cyclic collector is off inside the block and as it was after it, also
when the block raises; ``fewer_collections``: its thresholds raised during a run, never
lowered, and put back after it."""

import gc

import pytest

from pytest_srbench.app.heap import RUN_THRESHOLDS, fewer_collections, gc_paused


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


@pytest.fixture
def thresholds():
    before = gc.get_threshold()
    yield
    gc.set_threshold(*before)


def test_a_run_raises_the_collectors_thresholds_and_puts_them_back(thresholds):
    gc.set_threshold(700, 10, 10)
    with pytest.raises(RuntimeError), fewer_collections():
        assert gc.get_threshold() == RUN_THRESHOLDS
        raise RuntimeError("boom")
    assert gc.get_threshold() == (700, 10, 10)


def test_higher_thresholds_stand_and_a_turned_off_collection_stays_off(thresholds):
    gc.set_threshold(100_000, 5, 500)
    with fewer_collections():
        assert gc.get_threshold() == (100_000, RUN_THRESHOLDS[1], 500)
    gc.set_threshold(0, 10, 10)
    with fewer_collections():
        assert gc.get_threshold() == (0, 10, 10)
    assert gc.get_threshold() == (0, 10, 10)


def test_garbage_cycles_made_during_a_run_are_still_collected(thresholds):
    """Automatic collection still runs inside the block, only less often."""
    import weakref

    class Node:
        pass

    with fewer_collections():
        first = Node()
        first.me = first  # a cycle: only the collector frees it
        gone = weakref.ref(first)
        del first
        for _ in range(3 * RUN_THRESHOLDS[0]):
            Node().me = [None]  # tracked allocations that stay alive a while
        kept = [[] for _ in range(RUN_THRESHOLDS[0] + 1)]  # net growth past the threshold
        assert gone() is None
        del kept
