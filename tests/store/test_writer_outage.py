"""The writer keeps what the store refuses for a reason that can pass (a lock, a lost
connection, a full disk) and retries it; it gives up only after its window, loudly."""

from __future__ import annotations

import contextlib
import errno

import pytest

from pytest_srbench.store.base import StoreUnavailable
from pytest_srbench.store.writer import GroupCommitWriter, outage_window_s, unavailable
from pytest_srbench.store.writes import AppendEvent


class Flaky:
    """A store that refuses ``failures`` transactions, then takes every write."""

    def __init__(self, failures: int, error: Exception) -> None:
        self.failures = failures
        self.error = error
        self.written: list[object] = []

    @contextlib.contextmanager
    def transaction(self):
        if self.failures:
            self.failures -= 1
            raise self.error
        yield

    def write_batch(self, writes):
        self.written.extend(writes)


def test_refused_writes_are_kept_and_retried_until_the_store_takes_them():
    store = Flaky(3, StoreUnavailable("the store is locked", "locked"))
    writer = GroupCommitWriter(store)
    seen = []
    writer.on_outage = seen.append
    writer.post([AppendEvent("r", "a")])
    assert store.written == [] and writer.outage is not None
    writer.close()
    assert store.written == [AppendEvent("r", "a")] and writer.unwritten == []
    assert [o.kind for o in seen] == ["locked"] and writer.outage is None


def test_writes_are_given_up_only_after_the_window_and_kept_for_the_report(monkeypatch):
    monkeypatch.setenv("SRBENCH_STORE_OUTAGE_S", "0.3")
    store = Flaky(10**6, StoreUnavailable("lost", "connection lost"))
    writer = GroupCommitWriter(store)
    given_up = []
    writer.on_give_up = given_up.append
    writer.post([AppendEvent("r", "a")])
    writer.close()
    assert writer.unwritten == [AppendEvent("r", "a")] and len(given_up) == 1


def test_a_full_disk_is_an_outage_and_other_errors_are_not(monkeypatch):
    assert unavailable(OSError(errno.EFBIG, "File too large")).kind == "disk full"
    assert unavailable(OSError(errno.ENOSPC, "No space left")).kind == "disk full"
    assert unavailable(ValueError("bug")) is None
    monkeypatch.setenv("SRBENCH_STORE_OUTAGE_S", "soon")
    with pytest.raises(Exception, match="SRBENCH_STORE_OUTAGE_S"):
        outage_window_s()
