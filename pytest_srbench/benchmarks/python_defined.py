"""The adapter of a benchmark defined in Python (``pytest_srbench.benchmark``): its rows become
cases, one chat answer is graded by the user's function."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from pytest_srbench.benchmarks.base import (
    Adapter,
    CellContext,
    Grade,
    NotGraded,
    one_list_profiles,
    text_answer,
)
from pytest_srbench.core.models import Case, Message
from pytest_srbench.core.user_benchmarks import PythonBenchmark

ROW_FIELDS = ("id", "question", "messages", "answer", "group")


class PythonDefinedAdapter(Adapter):
    """Renders rows and grades with the definition's function."""

    definition: ClassVar[PythonBenchmark]
    rows_by_case: ClassVar[dict[str, dict[str, Any]]]  # the definition's rows by case id

    @classmethod
    def of(cls, definition: PythonBenchmark) -> Adapter:
        bound = type(
            f"{cls.__name__}[{definition.name}]",
            (cls,),
            {"benchmark": definition.name, "version": f"python:{definition.version}",
             "definition": definition,
             "rows_by_case": {f"{definition.name}/{row['id']}": row for row in definition.rows}},
        )  # fmt: skip
        adapter: Adapter = bound()
        return adapter

    def profile_counts(self, suite_meta: Mapping[str, Any]) -> dict[str, int]:
        return one_list_profiles(len(self.definition.rows))

    def stratum(self, row: Mapping[str, Any]) -> str:
        return str(row.get("group", ""))

    def render(self, row: Mapping[str, Any], seed: int) -> Case:
        if row.get("messages") is not None:
            messages = [Message.model_validate(m) for m in row["messages"]]
        else:
            messages = [Message(role="user", content=str(row["question"]))]
        return Case(
            id=f"{self.benchmark}/{row['id']}",
            benchmark=self.benchmark,
            messages=messages,
            answer=row.get("answer"),
            metadata={k: v for k, v in row.items() if k not in ROW_FIELDS},
        )

    async def evaluate(self, ctx: CellContext) -> Grade:
        reply = await ctx.call([message.as_request() for message in ctx.case.messages])
        return await self.grade_answer(ctx, reply.final_text)

    async def grade_answer(self, ctx: CellContext, answer: object) -> Grade:
        case = ctx.case
        case_id = str(case.metadata.get("repeat_of") or case.id)  # a repeat grades as its case
        row = self.rows_by_case[case_id]
        answer = text_answer(self.benchmark, answer)
        try:
            verdict = self.definition.grade(answer, row)
        except Exception as error:
            raise NotGraded(
                f"the grader of {self.benchmark!r} raised {type(error).__name__}"
            ) from error
        details: dict[str, Any] = {}
        if isinstance(verdict, tuple) and len(verdict) == 2 and isinstance(verdict[1], dict):
            verdict, details = verdict
        if not isinstance(verdict, bool):
            raise NotGraded(
                f"the grader of {self.benchmark!r} returned {type(verdict).__name__}, not a bool"
            )
        return Grade(correct=verdict, answer=answer[:2000], details=details)
