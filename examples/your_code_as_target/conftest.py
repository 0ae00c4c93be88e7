"""A rule-based answerer declared as a benchmark target: your own code, no model at all."""

from __future__ import annotations

import re

import pytest

import pytest_srbench


class LongestOption:
    """A classic baseline for multiple choice: pick the longest option."""

    def __call__(self, messages: list[dict]) -> str:
        prompt = messages[-1]["content"]
        options = re.findall(r"^([A-J])\. (.*)$", prompt, flags=re.MULTILINE)
        if not options:
            return ""
        letter, _ = max(options, key=lambda option: len(option[1]))
        return letter


@pytest_srbench.target("longest-option", model="longest-option-rule")
@pytest.fixture(scope="session")
def longest_option() -> LongestOption:
    return LongestOption()
