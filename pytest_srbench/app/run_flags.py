"""How each run option is spelled on the pytest command line: flag, help, value kind.

The options themselves (types, bounds, defaults) are ``RunOptions`` in ``app/run_options.py``;
this table is kept apart, free of pydantic, because pytest reads it to register its flags at
every start-up, srbench in use or not (importing pydantic there would add ~140 ms to every
pytest run). A test checks that the table and the model name the same options.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from pytest_srbench.core.plan.choices import PROFILES

# how the flag's text becomes a value (the plugin maps each kind to an argparse type)
ValueKind = Literal["text", "int", "positive_int", "choice", "switch", "number_pairs",
                    "preview_pairs", "setting_pairs"]  # fmt: skip
REPEATED_KINDS = ("number_pairs", "preview_pairs", "setting_pairs")


@dataclass(frozen=True)
class Flag:
    """One run option's pytest flag."""

    name: str
    help: str
    kind: ValueKind = "text"
    metavar: str | None = None
    choices: tuple[str, ...] = ()
    repeat: bool = False

    @property
    def dest(self) -> str:
        """The attribute pytest keeps the flag's value under (``config.getoption``)."""
        return self.name.lstrip("-").replace("-", "_")

    @property
    def pairs(self) -> bool:
        """Repeated ``KEY=VALUE`` pairs that make one mapping."""
        return self.kind in REPEATED_KINDS


RUN_FLAGS: dict[str, Flag] = {
    "profile": Flag("--srbench-profile", "run this benchmark profile (activates srbench)",
                    "choice", choices=PROFILES),
    "benchmarks": Flag("--srbench-benchmark", "run this benchmark (repeatable; activates srbench)",
                       metavar="NAME", repeat=True),
    "targets": Flag("--srbench-target", "target to evaluate (repeatable)", metavar="ID",
                    repeat=True),
    "limit": Flag("--srbench-limit", "at most N cases per benchmark (a custom subset)",
                  "positive_int", "N"),
    "seed": Flag("--srbench-seed", "selection and shuffling seed (default 20260918)", "int", "N"),
    "repeats": Flag("--srbench-repeats",
                    "run every cell K times, each repeat its own journaled cell (default 1)",
                    "positive_int", "K"),
    "name": Flag("--srbench-name", "a name for the run (default sr-bench)", metavar="NAME"),
    "limits": Flag("--srbench-limits",
                   "override a frozen limit, e.g. max_cost_usd=2 or idle_timeout_s=60 "
                   "(repeatable)", "number_pairs", "KEY=VALUE", repeat=True),
    "sampling": Flag("--srbench-sampling",
                     "override a sampling parameter for every target, e.g. temperature=0 "
                     "(repeatable)", "number_pairs", "KEY=VALUE", repeat=True),
    "retrieval": Flag("--srbench-retrieval",
                      "override a search setting of every retrieval target: mode=fts|vector|"
                      "hybrid, top_k=N, rrf_k=N or reranker=none|minilm-maxsim (repeatable)",
                      "setting_pairs", "KEY=VALUE", repeat=True),
    "mode": Flag("--srbench-mode",
                 "live (default): answer and grade; preview: only ask each router target where "
                 "it would route every case (no answers, accuracy null)", "choice",
                 choices=("live", "preview")),
    "preview_context": Flag("--srbench-preview-context",
                            "preview mode: session_id, conversation_id or sampling_seed sent "
                            "with every preview request (repeatable)", "preview_pairs",
                            "KEY=VALUE", repeat=True),
    "offline": Flag("--srbench-offline",
                    "allow agent benchmarks against simulated targets (they are refused by "
                    "default: an agent benchmark measures real providers)", "switch"),
    "concurrency": Flag("--srbench-concurrency", "cells in flight per process (default 16)",
                        "positive_int", "N"),
}  # fmt: skip
