"""The README's sample report is what README command 1 prints today (issue 49: its plan hash,
its columns and its intervals had drifted from the product's output).

The sample is shortened: a line with ``…`` matches any line whose parts around each ``…`` are
there in order, a line that is only ``…`` stands for lines left out. Run ids, times, costs and
spend change from run to run and are compared as placeholders; the plan hash, accuracies,
intervals, counts and every column are compared as they are."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.docs.running import environment

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[2]
SAMPLE_START = "a report like this (shortened):"

VARYING = [
    (re.compile(r"run-[0-9a-f]+…?"), "run-ID"),
    (re.compile(r"\$[0-9]+\.[0-9]+"), "$X"),
    (re.compile(r"\b[0-9]+\.[0-9]+s\b"), "Ts"),
    (re.compile(r"\b[0-9]+ (correct|wrong)\b"), r"N \1"),
]


def readme_sample() -> list[str]:
    text = (REPO / "README.md").read_text(encoding="utf-8")
    after = text[text.index(SAMPLE_START) :]
    block = after[after.index("```text\n") + len("```text\n") :]
    return block[: block.index("```")].splitlines()


def normalized(line: str) -> str:
    for pattern, placeholder in VARYING:
        line = pattern.sub(placeholder, line)
    return re.sub(r"[ =]+", " ", line).strip()


def matches(sample: str, line: str) -> bool:
    parts = [re.escape(part.strip()) for part in normalized(sample).split("…")]
    return re.fullmatch(".*?".join(parts), normalized(line)) is not None


def test_the_readme_sample_is_what_command_one_prints(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--srbench-profile=smoke",
         f"--srbench-store={tmp_path / 'store'}", "examples/sr_bench"],
        cwd=REPO, env=environment(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    output = done.stdout.splitlines()
    start = next(i for i, line in enumerate(output) if "srbench report" in line)
    printed = output[start:]
    position = 0
    for sample in readme_sample():
        if sample.strip() == "…":
            continue
        found = next(
            (i for i in range(position, len(printed)) if matches(sample, printed[i])), None
        )
        assert found is not None, (
            f"README sample line not printed (in order) by command 1:\n  {sample}\n"
            "today's report:\n" + "\n".join(printed)
        )
        position = found + 1
