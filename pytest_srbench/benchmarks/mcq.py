"""Multiple-choice benchmarks: MMLU-Pro (A–J, stratified by category) and GPQA Diamond (A–D,
choices shuffled from the run seed and the question's digest)."""

from __future__ import annotations

import random
import string
import sys
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_srbench.benchmarks.base import (
    Adapter,
    CellContext,
    Grade,
    SuiteRowError,
    require,
    text_answer,
)
from pytest_srbench.core.canonical import digest
from pytest_srbench.core.grading.mcq import (
    ACCEPTED_FORMS,
    GRADER_VERSION,
    grade_choice,
    unparsed_reason,
)
from pytest_srbench.core.models import Case, Message

INSTRUCTION = "Return only the letter of the correct answer."


def mcq_prompt(question: str, options: Sequence[str]) -> str:
    """The question, lettered options, and the answer instruction."""
    lines = [f"{string.ascii_uppercase[i]}. {option}" for i, option in enumerate(options)]
    return f"{question.strip()}\n\n" + "\n".join(lines) + f"\n\n{INSTRUCTION}"


class McqAdapter(Adapter):
    """Shared MCQ protocol: one subject call, graded by ``sr-bench-mcq-final-v2``."""

    async def evaluate(self, ctx: CellContext) -> Grade:
        case = ctx.case
        reply = await ctx.call([message.as_request() for message in case.messages])
        return await self.grade_answer(ctx, reply.final_text)

    async def grade_answer(self, ctx: CellContext, answer: object) -> Grade:
        case = ctx.case
        letters = str(case.metadata["letters"])
        text = text_answer(case.benchmark, answer)
        grade = grade_choice(text, str(case.answer), letters)
        details: dict[str, Any] = {
            "grader_version": GRADER_VERSION,
            "answer_status": grade.status,
            "strict_format": grade.strict_format,
        }
        if grade.status == "unparsed":  # the grader's reason, and what it would have read
            details["parse_reason"] = unparsed_reason(text, letters)
            details["accepted_forms"] = ACCEPTED_FORMS
        return Grade(correct=grade.correct, answer=grade.answer, details=details)

    def simulator_script(self, case: Case) -> dict[str, Any] | None:
        return {"kind": "mcq", "answer": case.answer, "letters": case.metadata["letters"]}


class MmluProAdapter(McqAdapter):
    """MMLU-Pro rows: ``question_id``, ``question``, ``options`` (up to 10), ``answer``, ``category``."""

    benchmark = "mmlu-pro"

    def stratum(self, row: Mapping[str, Any]) -> str:
        return str(row.get("category", ""))

    def render(self, row: Mapping[str, Any], seed: int) -> Case:
        native = row.get("question_id")
        if native is None:
            raise SuiteRowError("missing field 'question_id'")
        question = require(row, "question")
        options = require(row, "options", list)
        if not 2 <= len(options) <= 10 or not all(
            isinstance(o, str) and o.strip() for o in options
        ):
            raise SuiteRowError("'options' must hold 2 to 10 non-empty strings")
        letters = sys.intern(string.ascii_uppercase[: len(options)])  # one per count, not case
        answer = require(row, "answer")
        if answer not in letters:
            raise SuiteRowError(f"answer {answer!r} is not one of the option letters {letters}")
        return Case(
            id=f"{self.benchmark}/{native}",
            benchmark=self.benchmark,
            messages=[Message(role="user", content=mcq_prompt(question, options))],
            answer=answer,
            metadata={
                "letters": letters,
                "category": sys.intern(str(row.get("category", ""))),  # a few values, many rows
                "src": row.get("src"),
            },
        )


class GpqaDiamondAdapter(McqAdapter):
    """GPQA rows: ``record_id``, ``question``, ``correct_answer``, three ``incorrect_answers``."""

    benchmark = "gpqa-diamond"

    def stratum(self, row: Mapping[str, Any]) -> str:
        return str(row.get("domain", ""))

    def render(self, row: Mapping[str, Any], seed: int) -> Case:
        native = require(row, "record_id")
        question = require(row, "question")
        correct = require(row, "correct_answer")
        wrong = require(row, "incorrect_answers", list)
        if len(wrong) != 3 or not all(isinstance(w, str) and w.strip() for w in wrong):
            raise SuiteRowError("'incorrect_answers' must hold exactly 3 non-empty strings")
        identity = digest(question)[:24]
        rng = random.Random(int(digest([seed, identity]), 16))
        options = [correct, *wrong]
        rng.shuffle(options)
        answer = string.ascii_uppercase[options.index(correct)]
        return Case(
            id=f"{self.benchmark}/{native}",
            benchmark=self.benchmark,
            messages=[Message(role="user", content=mcq_prompt(question, options))],
            answer=answer,
            metadata={
                "letters": "ABCD",
                "domain": str(row.get("domain", "")),
                "question_identity": identity,
            },
        )


class MmluAdapter(McqAdapter):
    """Extension benchmark: the original MMLU test split (rows ``id``, ``question``,
    ``options`` (4), ``answer`` letter, ``subject``), graded by the same MCQ grader."""

    benchmark = "mmlu"
    version = "pytest-srbench-mmlu-v1"

    def stratum(self, row: Mapping[str, Any]) -> str:
        return str(row.get("subject", ""))

    def render(self, row: Mapping[str, Any], seed: int) -> Case:
        native = require(row, "id", (str, int))
        question = require(row, "question")
        options = require(row, "options", list)
        if len(options) != 4 or not all(isinstance(o, str) for o in options):
            raise SuiteRowError("'options' must hold 4 strings")
        answer = require(row, "answer")
        if answer not in "ABCD" or len(answer) != 1:
            raise SuiteRowError(f"answer {answer!r} is not one of A-D")
        return Case(
            id=f"{self.benchmark}/{native}",
            benchmark=self.benchmark,
            messages=[Message(role="user", content=mcq_prompt(question, options))],
            answer=answer,
            metadata={"letters": "ABCD", "subject": self.stratum(row)},
        )
