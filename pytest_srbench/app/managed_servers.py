"""Managed llama-server targets of a run, sized from its plan before anything runs.

For each managed target a short-lived probe server (one small slot) reports the model's
trained context, the plan's longest first requests in the model's own tokens (the few longest
of each benchmark by characters) and one slot's prompt and generation throughput. The plan's
sizing (``core/plan/serving.py``) then chooses the slots and the context of each, or refuses
the run naming the case that cannot fit or the time limit that is too short; only then is the
real server started. Multi-turn benchmarks (scicode, tau3, terminal-bench) grow their
conversation past the first request: give them room with ``[tool.srbench.targets.server]
context``.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from pytest_srbench.app.config import ManagedServerConfig
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.models import Case, Limits
from pytest_srbench.core.plan.serving import (
    DoesNotFit,
    PromptSize,
    ServerSize,
    Throughput,
    default_slots,
    first_token_s,
    size_server,
    time_problem,
)
from pytest_srbench.managed.llama import (
    LlamaServer,
    default_threads,
    llama_server,
    measure_throughput,
    prompt_tokens,
    trained_context,
)

LONGEST_PER_BENCHMARK = 3  # prompts counted in tokens per benchmark (the longest by characters)
PROBE_CONTEXT = 1024


class ServerRefused(InputError):
    """The plan cannot run on this managed server as configured; the message says what to change."""


@dataclass
class ManagedStart:
    """A started managed server and how it was sized."""

    server: LlamaServer
    size: ServerSize
    speed: Throughput | None

    def note(self, target_id: str) -> str:
        """One line for the terminal: what was chosen and measured."""
        size = self.size
        parts = [
            f"llama-server for {target_id}: {size.slots} slot(s) × {size.context_per_slot} "
            f"tokens ({'configured' if size.chosen == 'configured' else 'from the ' + size.chosen})"
        ]
        if size.longest is not None:
            parts.append(f"longest prompt {size.longest.case_id} {size.longest.tokens} tokens")
        if self.speed is not None:
            parts.append(
                f"measured {self.speed.prompt_per_s:.0f} prompt / "
                f"{self.speed.generated_per_s:.0f} generated tokens/s per slot"
            )
            if size.longest is not None:
                parts.append(f"slowest first token ≈ {first_token_s(size, self.speed):.0f} s")
        return "; ".join(parts)


def longest_cases(cases: Sequence[Case], per_benchmark: int = LONGEST_PER_BENCHMARK) -> list[Case]:
    """The few longest cases of each benchmark by the characters of their first request."""
    by_benchmark: dict[str, list[tuple[int, Case]]] = {}
    for case in cases:
        size = sum(len(str(message.content)) for message in case.messages)
        by_benchmark.setdefault(case.benchmark, []).append((size, case))
    chosen = []
    for ranked in by_benchmark.values():
        ranked.sort(key=lambda pair: (-pair[0], pair[1].id))
        chosen += [case for _, case in ranked[:per_benchmark]]
    return chosen


def start_for_plan(
    target_id: str,
    alias: str,
    settings: ManagedServerConfig | None,
    cases: Sequence[Case] | None,
    *,
    max_tokens: int,
    limits: Limits,
    concurrency: int,
    log_dir: Path,
) -> ManagedStart:
    """Measure on a probe server, size (or refuse, :class:`ServerRefused`), then start the
    target's server. ``cases``: the plan's cases for this target (None when not known yet)."""
    settings = settings or ManagedServerConfig()
    threads = settings.threads or default_threads()
    slots = settings.slots or default_slots(concurrency)
    probe = llama_server(
        alias, log_dir=log_dir / "probe", threads=threads, context=PROBE_CONTEXT, slots=1
    ).start()
    try:
        longest: PromptSize | None = None
        for case in longest_cases(cases or []):
            tokens = prompt_tokens(probe, [message.model_dump() for message in case.messages])
            if longest is None or tokens > longest.tokens:
                longest = PromptSize(case.id, tokens)
        try:  # a case that cannot fit is refused before the (slower) throughput probe
            size = size_server(
                target_id=target_id, longest=longest, max_tokens=max_tokens, slots=slots,
                trained_context=trained_context(probe), configured_context=settings.context,
            )  # fmt: skip
        except DoesNotFit as error:
            raise ServerRefused(str(error)) from None
        speed = Throughput(*measure_throughput(probe)) if longest is not None else None
    finally:
        probe.stop()
    problem = time_problem(target_id, size, speed, limits) if speed is not None else None
    if problem is not None:
        raise ServerRefused(problem)
    server = llama_server(
        alias, log_dir=log_dir, threads=threads, context=size.context_per_slot, slots=size.slots,
        past_trained_context=size.chosen == "configured",
    ).start()  # fmt: skip
    return ManagedStart(server, size, speed)
