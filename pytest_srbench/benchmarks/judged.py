"""Short-answer benchmarks graded by a judge model: SimpleQA Verified and HLE (text only).

One subject call, then one call to the bound judge target (role ``judge``, priced apart) with
the versioned judge prompt; a malformed verdict fails the cell, it is never guessed. A test
body's answer gets the same judge call (``grade_answer``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_srbench.benchmarks.base import Adapter, CellContext, Grade, require, text_answer
from pytest_srbench.core.calls.failures import CallFailure
from pytest_srbench.core.grading.judge import (
    JUDGE_VERSION,
    JudgeError,
    judge_messages,
    parse_verdict,
)
from pytest_srbench.core.models import Case, Message

ANSWER_INSTRUCTION = (
    "Answer with the answer only, as briefly as possible. If you do not know, say so."
)


class JudgedAdapter(Adapter):
    """Shared protocol: subject answer, then a strict JSON verdict from the judge."""

    auxiliary_roles = ("judge",)

    question_field = "problem"
    id_field = "id"
    stratum_field = "topic"

    def stratum(self, row: Mapping[str, Any]) -> str:
        return str(row.get(self.stratum_field) or "")

    def render(self, row: Mapping[str, Any], seed: int) -> Case:
        native = require(row, self.id_field, (str, int))
        question = require(row, self.question_field)
        answer = require(row, "answer", (str, int, float))
        return Case(
            id=f"{self.benchmark}/{native}",
            benchmark=self.benchmark,
            messages=[Message(role="user", content=f"{question.strip()}\n\n{ANSWER_INSTRUCTION}")],
            answer=str(answer),
            metadata={"question": question.strip(), self.stratum_field: self.stratum(row)},
        )

    async def evaluate(self, ctx: CellContext) -> Grade:
        reply = await ctx.call([message.as_request() for message in ctx.case.messages])
        return await self.grade_answer(ctx, reply.final_text)

    async def grade_answer(self, ctx: CellContext, answer: object) -> Grade:
        """The judge's verdict on ``answer`` (the subject's final text, or a test body's
        answer): one call to the bound judge (role ``judge``) with the versioned prompt."""
        case = ctx.case
        text = text_answer(case.benchmark, answer)
        judged = await ctx.call(
            judge_messages(str(case.metadata["question"]), str(case.answer), text), role="judge"
        )
        try:
            verdict = parse_verdict(judged.final_text)
        except JudgeError as error:
            raise CallFailure(f"Benchmark grading failed: {error}") from None
        return Grade(
            correct=verdict == "correct",
            answer=text,
            details={"grader_version": JUDGE_VERSION, "verdict": verdict, "answer_status": verdict},
        )

    def simulator_script(self, case: Case) -> dict[str, Any] | None:
        return {"kind": "text", "answer": case.answer}


class SimpleQaVerifiedAdapter(JudgedAdapter):
    """Rows: ``id``, ``problem``, ``answer``, optional ``topic``."""

    benchmark = "simpleqa-verified"


class HleAdapter(JudgedAdapter):
    """Rows: ``id``, ``question``, ``answer``, ``answer_type``, optional ``category`` (text only)."""

    benchmark = "hle"
    question_field = "question"
    stratum_field = "category"
