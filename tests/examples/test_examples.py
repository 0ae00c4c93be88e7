"""Every example under examples/ runs as its README says, offline against the simulator."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def copy_example(pytester: pytest.Pytester, name: str) -> Path:
    shutil.copytree(EXAMPLES / name, pytester.path, dirs_exist_ok=True)
    return pytester.path


def pytest_run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--srbench-profile=smoke", *args)


def test_prompt_variants_are_compared_and_gated(pytester, monkeypatch):
    root = copy_example(pytester, "prompt_variants")
    monkeypatch.setenv("SUPPORT_BOT_PROMPT", "v1")
    main = pytest_run(pytester, "test_support_bot.py", "--srbench-json=main.json")
    assert main.ret == 0, main.stdout.str()
    monkeypatch.setenv("SUPPORT_BOT_PROMPT", "v2")
    pr = pytest_run(pytester, "test_support_bot.py", "--srbench-baseline=main.json",
                    "--srbench-json=pr.json")  # fmt: skip
    assert pr.ret == 0, pr.stdout.str()
    report = json.loads((root / "pr.json").read_text())
    assert report["gate"]["passed"] is True and report["gate"]["baseline_source"] == "main.json"
    compared = pytester.run(sys.executable, "-m", "pytest_srbench", "compare", "main.json",
                            "pr.json")  # fmt: skip
    assert compared.ret == 0, compared.stderr.str()


def test_a_rule_as_a_target_beside_the_models(pytester):
    root = copy_example(pytester, "your_code_as_target")
    both = pytest_run(pytester, "test_baseline.py", "--srbench-json=all.json")
    assert both.ret == 0, both.stdout.str()
    report = json.loads((root / "all.json").read_text())
    targets = {t["id"]: t for t in report["summary"]["targets"]}
    assert set(targets) == {"sim-large", "sim-small", "longest-option"}
    assert targets["longest-option"]["total"] == 4 and targets["longest-option"]["failed"] == 0
    assert targets["longest-option"]["cost_usd"] is None
    alone = pytest_run(pytester, "test_baseline.py", "--srbench-target", "longest-option")
    assert alone.ret == 0, alone.stdout.str()
