"""Conservative cost reservations before each priced call (reference/run-lifecycle.md §7.3)."""

from __future__ import annotations

from dataclasses import dataclass

from pytest_srbench.core.calls.failures import CallFailure
from pytest_srbench.core.calls.usage import is_known_cost
from pytest_srbench.core.models import Target


def reservation_usd(
    target: Target, body_bytes: int, message_count: int, max_output_chars: int, output_cap: int
) -> float:
    """An upper bound on one call's cost, from its request size and output cap."""
    if not target.prices:
        raise CallFailure(f"Call has no frozen prices (target {target.id})")
    calls = target.max_inference_calls if target.kind == "mom" and target.max_inference_calls else 1
    input_bound = body_bytes + 64 * message_count + 256 + (calls - 1) * max_output_chars * 4
    prices = list(target.prices.values())
    max_input = max(max(p.input, p.cached_input, p.cache_write) for p in prices)
    max_output = max(p.output for p in prices)
    return calls * (input_bound * max_input + output_cap * max_output) / 1_000_000


@dataclass
class Budget:
    """Spent and reserved USD against a cap; one per process (a worker enforces its share)."""

    cap_usd: float
    spent_usd: float = 0.0
    reserved_usd: float = 0.0

    def reserve(self, amount: float) -> None:
        """Reserve ``amount`` or refuse the call before any request or call row exists."""
        committed = self.spent_usd + self.reserved_usd
        if committed >= self.cap_usd or committed + amount > self.cap_usd:
            raise CallFailure(
                "Insufficient cost budget for a bounded call reservation "
                f"(committed {committed:.6f} + reservation {amount:.6f} > max_cost_usd {self.cap_usd:.6f})"
            )
        self.reserved_usd += amount

    def settle(self, amount: float, cost: object) -> None:
        """Release a reservation once the call's cost is known; unknown cost keeps it."""
        if is_known_cost(cost):
            self.spent_usd += float(cost)  # type: ignore[arg-type]
            self.reserved_usd = max(0.0, self.reserved_usd - amount)
