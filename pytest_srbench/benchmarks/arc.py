"""ARC-AGI-2: infer a grid transformation from training pairs; the answer is a JSON list of
output grids, correct only on an exact match."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from pytest_srbench.benchmarks.base import (
    Adapter,
    CellContext,
    Grade,
    SuiteRowError,
    require,
    text_answer,
)
from pytest_srbench.core.grading.grids import grade_grids, grid_prompt, is_grid
from pytest_srbench.core.models import Case, Message

GRADER_VERSION = "sr-bench-grid-exact-v1"


def grids_text(grids: list[Any]) -> str:
    """Returned grids as the JSON text the grid parser reads ("" when they are not JSON)."""
    try:
        return json.dumps(grids)
    except (TypeError, ValueError):
        return ""


class ArcAgi2Adapter(Adapter):
    """Rows: ``id``, ``train`` [{input, output}], ``test`` [{input, output}]."""

    benchmark = "arc-agi-2"

    def render(self, row: Mapping[str, Any], seed: int) -> Case:
        native = require(row, "id")
        train = require(row, "train", list)
        tests = require(row, "test", list)
        for name, pairs in (("train", train), ("test", tests)):
            if not pairs:
                raise SuiteRowError(f"{name!r} holds no pairs")
            for pair in pairs:
                if (
                    not isinstance(pair, dict)
                    or not is_grid(pair.get("input"))
                    or not is_grid(pair.get("output"))
                ):
                    raise SuiteRowError(
                        f"every {name} pair needs an input and an output grid (ints 0-9)"
                    )
        prompt = grid_prompt(
            [{"input": pair["input"], "output": pair["output"]} for pair in train],
            [pair["input"] for pair in tests],
        )
        return Case(
            id=f"{self.benchmark}/{native}",
            benchmark=self.benchmark,
            messages=[Message(role="user", content=prompt)],
            answer=[pair["output"] for pair in tests],
            metadata={"output_format": "grids", "tests": len(tests)},
        )

    async def evaluate(self, ctx: CellContext) -> Grade:
        reply = await ctx.call([message.as_request() for message in ctx.case.messages])
        return await self.grade_answer(ctx, reply.final_text)

    async def grade_answer(self, ctx: CellContext, answer: object) -> Grade:
        """Grade the answer text by the grid parser; a test body may also return the grids
        themselves (one grid, or a list of grids: one per test input)."""
        case = ctx.case
        text = (
            grids_text(answer) if isinstance(answer, list) else text_answer(case.benchmark, answer)
        )
        correct, valid, parsed = grade_grids(text, case.answer)
        return Grade(
            correct=correct,
            answer=parsed,
            details={
                "grader_version": GRADER_VERSION,
                "valid_grid": valid,
                "answer_status": "answered" if valid else "unparsed",
            },
        )

    def simulator_script(self, case: Case) -> dict[str, Any] | None:
        return {"kind": "grid", "answer": case.answer}
