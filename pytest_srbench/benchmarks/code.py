"""Code benchmarks graded by running the answer in the sandbox: LiveCodeBench (stdin/stdout and
functional tests), SciCode (multi-step, cumulative code per step) and the HumanEval extension."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pytest_srbench.benchmarks import scicode_support
from pytest_srbench.benchmarks.base import (
    Adapter,
    CellContext,
    Grade,
    NotGraded,
    SuiteRowError,
    require,
    text_answer,
)
from pytest_srbench.core.grading.code import (
    answer_code,
    assertion_program,
    code_prompt,
    extract_python,
    functional_passed,
    functional_program,
    outputs_match,
    targets_program,
)
from pytest_srbench.core.models import Case, Message

GRADER_VERSION = "sr-bench-sandbox-tests-v1"


def no_code() -> Grade:
    """The grade of an answer without a python code block."""
    return Grade(
        False,
        None,
        {
            "grader_version": GRADER_VERSION,
            "reason": "no_python_code_block",
            "answer_status": "unparsed",
        },
    )


class LiveCodeBenchAdapter(Adapter):
    """Rows: ``question_id``, ``question_title``, ``question_content``, ``starter_code``,
    ``difficulty``, ``tests`` [{input, output, testtype}], ``func_name`` for functional tests."""

    benchmark = "livecodebench"
    test_timeout_s = 6.0

    def stratum(self, row: Mapping[str, Any]) -> str:
        return str(row.get("difficulty") or "")

    def render(self, row: Mapping[str, Any], seed: int) -> Case:
        native = require(row, "question_id", (str, int))
        content = require(row, "question_content")
        tests = require(row, "tests", list)
        if not tests:
            raise SuiteRowError("'tests' is empty")
        kinds = set()
        for test in tests:
            if (
                not isinstance(test, dict)
                or not isinstance(test.get("input"), str)
                or not isinstance(test.get("output"), str)
            ):
                raise SuiteRowError("every test needs string 'input' and 'output'")
            kinds.add(test.get("testtype", "stdin"))
        if not kinds <= {"stdin", "functional"}:
            raise SuiteRowError(f"unknown testtype(s) {sorted(kinds - {'stdin', 'functional'})}")
        functional = "functional" in kinds
        if functional and not row.get("func_name"):
            raise SuiteRowError("functional tests need 'func_name'")
        starter = row.get("starter_code") or None
        title = row.get("question_title") or ""
        prompt = code_prompt(
            f"{title}\n\n{content}" if title else content, starter, functional=functional
        )
        return Case(
            id=f"{self.benchmark}/{native}",
            benchmark=self.benchmark,
            messages=[Message(role="user", content=prompt)],
            answer=None,
            metadata={
                "tests": tests,
                "func_name": row.get("func_name"),
                "difficulty": self.stratum(row),
                "reference_solution": row.get("reference_solution"),
                "wrong_solution": row.get("wrong_solution"),
            },
        )

    async def evaluate(self, ctx: CellContext) -> Grade:
        reply = await ctx.call([message.as_request() for message in ctx.case.messages])
        return await self.grade_code(ctx, extract_python(reply.final_text))

    async def grade_answer(self, ctx: CellContext, answer: object) -> Grade:
        """A test body's answer: a reply's text (its python blocks) or plain code."""
        return await self.grade_code(ctx, answer_code(text_answer(ctx.case.benchmark, answer)))

    async def grade_code(self, ctx: CellContext, code: str | None) -> Grade:
        """Run ``code`` against the case's tests in the sandbox (None: no code to run)."""
        case = ctx.case
        if code is None:
            return no_code()
        outcomes = []
        for index, test in enumerate(case.metadata["tests"]):
            if test.get("testtype", "stdin") == "functional":
                program = functional_program(
                    code, str(case.metadata["func_name"]), test["input"], test["output"]
                )
                run = await ctx.run_python(program, timeout_s=self.test_timeout_s)
                passed = run.ok and functional_passed(run.stdout)
            else:
                run = await ctx.run_python(code, stdin=test["input"], timeout_s=self.test_timeout_s)
                passed = run.ok and outputs_match(run.stdout, test["output"])
            outcomes.append(
                {"test": index, "passed": passed, "status": run.status, "reason": run.reason}
            )
            if not passed:
                break
        correct = len(outcomes) == len(case.metadata["tests"]) and all(
            o["passed"] for o in outcomes
        )
        return Grade(
            correct,
            None,
            {"grader_version": GRADER_VERSION, "tests": outcomes, "answer_status": "answered"},
        )

    def simulator_script(self, case: Case) -> dict[str, Any] | None:
        return {
            "kind": "code",
            "solution": case.metadata.get("reference_solution"),
            "wrong_solution": case.metadata.get("wrong_solution"),
        }


TARGETS_ASSET = "assets/test_data.h5"
NEEDS_EXTRA = (
    "SciCode's numeric targets ({asset}) are read with h5py, which is not installed: "
    "pip install 'pytest-srbench[scicode]' (h5py, scipy)"
)


def _targets_readable() -> bool:
    try:
        import h5py  # noqa: F401
        import scipy.sparse  # noqa: F401
    except ImportError:
        return False
    return True


class SciCodeAdapter(Adapter):
    """Rows: ``problem_id``, ``problem_description``, ``required_dependencies``, ``sub_steps``
    (each: ``step_number``, ``step_description``, ``function_header``, ``tests``).

    When the suite lists ``assets/test_data.h5`` (SciCode's released numeric targets), each
    step's tests run with ``target`` bound to that test's value read from the file inside the
    sandbox, as SciCode's own harness does; without it the tests run as they are."""

    benchmark = "scicode"
    reference_metadata = frozenset({"reference_steps"})
    test_timeout_s = 60.0

    def render(self, row: Mapping[str, Any], seed: int) -> Case:
        native = require(row, "problem_id", (str, int))
        description = require(row, "problem_description")
        steps = require(row, "sub_steps", list)
        if not steps:
            raise SuiteRowError("'sub_steps' is empty")
        for step in steps:
            if (
                not isinstance(step, dict)
                or not step.get("step_description")
                or not step.get("function_header")
            ):
                raise SuiteRowError("every sub-step needs 'step_description' and 'function_header'")
            if not isinstance(step.get("tests", []), list):
                raise SuiteRowError("sub-step 'tests' must be a list of code snippets")
        return Case(
            id=f"{self.benchmark}/{native}",
            benchmark=self.benchmark,
            messages=[
                Message(
                    role="user",
                    content=f"{description.strip()}\n\n{self._step_prompt(steps[0], 1, len(steps))}",
                )
            ],
            answer=None,
            metadata={
                "problem_description": description.strip(),
                "dependencies": str(row.get("required_dependencies") or ""),
                "sub_steps": steps,
                "reference_steps": row.get("reference_steps"),
            },
        )

    @staticmethod
    def _step_prompt(step: Mapping[str, Any], number: int, total: int) -> str:
        tail = f"\n{step['return_line']}" if step.get("return_line") else ""
        return (
            f"Sub-step {number} of {total}: {step['step_description'].strip()}\n\n"
            f"Implement:\n```python\n{step['function_header'].rstrip()}\n    ...{tail}\n```\n"
            "Use the functions you wrote in earlier sub-steps. Answer with one ```python code block."
        )

    async def evaluate(self, ctx: CellContext) -> Grade:
        case = ctx.case
        steps = case.metadata["sub_steps"]
        targets = self._targets(ctx)  # (refused before any call when it cannot be read)
        messages: list[dict[str, Any]] = [m.as_request() for m in case.messages]
        codes: list[str | None] = []
        for number, step in enumerate(steps, start=1):
            if number > 1:
                messages.append(
                    {"role": "user", "content": self._step_prompt(step, number, len(steps))}
                )
            reply = await ctx.call(messages)
            messages.append({"role": "assistant", "content": reply.content})
            codes.append(extract_python(reply.final_text))
        return await self.grade_steps(ctx, codes, targets)

    async def grade_answer(self, ctx: CellContext, answer: object) -> Grade:
        """A test body's answer: one text for the whole problem (a reply with python blocks,
        or plain code), or a list holding one such text per sub-step, in order (the
        conversation the protocol has: each step's code added to the earlier steps')."""
        case = ctx.case
        steps = case.metadata["sub_steps"]
        targets = self._targets(ctx)
        if isinstance(answer, list | tuple):
            if len(answer) != len(steps):
                raise NotGraded(
                    f"benchmark {case.benchmark!r}: the test body returned {len(answer)} step "
                    f"answers for {len(steps)} sub-steps (return one text per sub-step, or one "
                    "text for the whole problem)"
                )
            texts = [text_answer(case.benchmark, item) for item in answer]
            codes = [answer_code(text) for text in texts]
        else:
            code = answer_code(text_answer(case.benchmark, answer))
            codes = [code] + [None if code is None else ""] * (len(steps) - 1)
        return await self.grade_steps(ctx, codes, targets)

    def _targets(self, ctx: CellContext) -> tuple[dict[str, str], Path] | None:
        """The suite's numeric targets (its reference and local path), if it lists them."""
        reference = ctx.suite_asset(TARGETS_ASSET)
        if reference is None:
            return None
        if not _targets_readable():
            raise NotGraded(NEEDS_EXTRA.format(asset=TARGETS_ASSET))
        return reference, ctx.asset_path(reference)

    async def grade_steps(
        self,
        ctx: CellContext,
        codes: list[str | None],
        targets: tuple[dict[str, str], Path] | None,
    ) -> Grade:
        """Run each sub-step's tests on the dependencies plus the code written up to it
        (``codes``: one per sub-step; None: that step's answer held no code)."""
        case = ctx.case
        steps = case.metadata["sub_steps"]
        dependencies = case.metadata["dependencies"]
        written: list[str] = []
        outcomes = []
        for number, (step, code) in enumerate(zip(steps, codes, strict=True), start=1):
            if code is None:
                outcomes.append({"step": number, "passed": False, "reason": "no_python_code_block"})
                continue
            if code:
                written.append(code)
            source = dependencies + "\n\n" + "\n\n".join(written)
            tests = [str(test) for test in step.get("tests", [])]
            if targets is not None and tests:
                path = targets[1]
                program = targets_program(
                    source,
                    tests,
                    str(path),
                    str(step.get("step_number") or f"{case.id.split('/', 1)[1]}.{number}"),
                    scicode_support.TARGETS_MODULE,
                )
                run = await ctx.run_python(
                    program,
                    timeout_s=self.test_timeout_s,
                    files=scicode_support.sandbox_files(),
                    read_only=[path.parent],
                )
            else:
                run = await ctx.run_python(
                    assertion_program(source, tests), timeout_s=self.test_timeout_s
                )
            outcome: dict[str, Any] = {
                "step": number, "passed": run.ok, "status": run.status, "reason": run.reason,
            }  # fmt: skip
            if not run.ok and run.stderr:
                outcome["stderr_tail"] = run.stderr[-300:]
            outcomes.append(outcome)
        correct = all(outcome["passed"] for outcome in outcomes)
        details: dict[str, Any] = {
            "grader_version": GRADER_VERSION,
            "steps": outcomes,
            "answer_status": "answered",
        }
        if targets is not None:
            details["targets"] = targets[0]
        return Grade(correct, None, details)

    def simulator_script(self, case: Case) -> dict[str, Any] | None:
        return {"kind": "steps", "steps": case.metadata.get("reference_steps") or []}


class HumanEvalAdapter(Adapter):
    """Extension benchmark rows: ``task_id``, ``prompt``, ``entry_point``, ``test``."""

    benchmark = "humaneval"
    test_timeout_s = 10.0

    def render(self, row: Mapping[str, Any], seed: int) -> Case:
        native = str(require(row, "task_id", (str, int)))
        prompt = require(row, "prompt")
        entry = require(row, "entry_point")
        test = require(row, "test")
        text = (
            "Complete this Python function. Answer with one ```python code block that holds the "
            f"whole function (imports included).\n\n```python\n{prompt}```"
        )
        return Case(
            id=f"{self.benchmark}/{native}",
            benchmark=self.benchmark,
            messages=[Message(role="user", content=text)],
            answer=None,
            metadata={
                "prompt": prompt,
                "entry_point": entry,
                "test": test,
                "reference_solution": row.get("canonical_solution"),
            },
        )

    async def evaluate(self, ctx: CellContext) -> Grade:
        reply = await ctx.call([message.as_request() for message in ctx.case.messages])
        return await self.grade_code(ctx, extract_python(reply.final_text))

    async def grade_answer(self, ctx: CellContext, answer: object) -> Grade:
        """A test body's answer: a reply's text (its python blocks) or plain code."""
        return await self.grade_code(ctx, answer_code(text_answer(ctx.case.benchmark, answer)))

    async def grade_code(self, ctx: CellContext, code: str | None) -> Grade:
        """Run ``code`` with the task's tests in the sandbox (None: no code to run)."""
        case = ctx.case
        if code is None:
            return no_code()
        program = f"{code}\n\n{case.metadata['test']}\n\ncheck({case.metadata['entry_point']})\n"
        run = await ctx.run_python(program, timeout_s=self.test_timeout_s)
        return Grade(
            run.ok,
            None,
            {
                "grader_version": GRADER_VERSION,
                "status": run.status,
                "reason": run.reason,
                "answer_status": "answered",
            },
        )

    def simulator_script(self, case: Case) -> dict[str, Any] | None:
        solution = case.metadata.get("reference_solution")
        full = (case.metadata["prompt"] + solution) if solution else None
        return {"kind": "code", "solution": full}
