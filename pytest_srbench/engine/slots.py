"""A cell's outcome slot: the engine's thread fills it once, the item that runs the cell waits
for it.

It does for the engine what ``concurrent.futures.Future`` did, in about 100 bytes: a Future
carries a condition, a re-entrant lock, a deque and two lists (1.6 kB), and a run creates one
per planned cell before the first one starts (160 MB at 100,000 cells). A slot makes its
event only when someone waits before it is filled; one lock, shared by every slot, keeps
"first result wins" and the hand-over to a waiter exact across threads.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Generic, TypeVar

T = TypeVar("T")

_FILLING = threading.Lock()


class OutcomeSlot(Generic[T]):
    """Holds one value, set once from any thread (later values are ignored)."""

    __slots__ = ("_on_set", "_value", "_waiter")

    def __init__(self, on_set: Callable[[OutcomeSlot[T]], None] | None = None) -> None:
        self._value: T | None = None
        self._waiter: threading.Event | None = None
        self._on_set = on_set  # called once, in the thread that set the value

    @classmethod
    def filled(cls, value: T) -> OutcomeSlot[T]:
        slot: OutcomeSlot[T] = cls()
        slot._value = value
        return slot

    def done(self) -> bool:
        return self._value is not None

    def set_result(self, value: T) -> bool:
        """Fill the slot; False (and nothing changes) when it was already filled."""
        with _FILLING:
            if self._value is not None:
                return False
            self._value = value
            waiter = self._waiter
        if waiter is not None:
            waiter.set()
        if self._on_set is not None:
            self._on_set(self)
        return True

    def result(self, timeout: float | None = None) -> T:
        """The value, waiting up to ``timeout`` seconds for it (``TimeoutError`` after)."""
        value = self._value
        if value is not None:
            return value
        with _FILLING:
            if self._value is None and self._waiter is None:
                self._waiter = threading.Event()
            waiter = self._waiter
        if waiter is not None:
            waiter.wait(timeout)
        value = self._value
        if value is None:
            raise TimeoutError(f"no outcome within {timeout} s")
        return value
