"""Sizing a managed server from the plan: the context per slot holds the longest prompt plus
max_tokens, a case that cannot fit is refused naming it, and time limits too short for the
measured throughput are refused with the preset that fixes them."""

from __future__ import annotations

import pytest

from pytest_srbench.app.config import ConfigError, SrbenchConfig
from pytest_srbench.core.models import LIMIT_PRESETS, Limits
from pytest_srbench.core.plan.serving import (
    DoesNotFit,
    PromptSize,
    ServerSize,
    Throughput,
    default_slots,
    first_token_s,
    size_server,
    time_problem,
)

ARC = PromptSize("arc-agi-2/0934a4d8", 1950)


def test_the_context_holds_the_longest_prompt_plus_max_tokens_in_every_slot():
    size = size_server(target_id="t", longest=ARC, max_tokens=64, slots=4, trained_context=8192)
    assert size.context_per_slot == 2048  # 1950 + 16 + 64 = 2030, rounded up to 256s
    assert size.total_context == 8192 and size.chosen == "plan"
    small = size_server(
        target_id="t", longest=PromptSize("m/1", 40), max_tokens=8, slots=1, trained_context=8192
    )
    assert small.context_per_slot == 512  # never below the floor


def test_a_case_past_the_trained_context_is_refused_naming_it_and_the_setting():
    with pytest.raises(DoesNotFit) as refused:
        size_server(target_id="smol", longest=PromptSize("arc-agi-2/x", 16000), max_tokens=64,
                    slots=2, trained_context=8192)  # fmt: skip
    message = str(refused.value)
    assert "case arc-agi-2/x needs 16080 tokens" in message and "trained context of 8192" in message
    assert "[tool.srbench.targets.server] context = 16128" in message


def test_a_configured_context_goes_past_the_trained_one_but_must_hold_the_case():
    size = size_server(target_id="t", longest=PromptSize("a/1", 16000), max_tokens=64, slots=1,
                       trained_context=8192, configured_context=20000)  # fmt: skip
    assert size.context_per_slot == 20000 and size.chosen == "configured"
    with pytest.raises(DoesNotFit, match="more than the configured context of 4096"):
        size_server(target_id="t", longest=PromptSize("a/1", 4090), max_tokens=64, slots=1,
                    trained_context=8192, configured_context=4096)  # fmt: skip


def test_without_a_plan_every_slot_gets_the_trained_context():
    size = size_server(target_id="t", longest=None, max_tokens=64, slots=4, trained_context=8192)
    assert size.context_per_slot == 8192 and size.chosen == "model"
    with pytest.raises(DoesNotFit, match="max_tokens 9000"):
        size_server(target_id="t", longest=None, max_tokens=9000, slots=4, trained_context=8192)


def test_slots_follow_the_concurrency_up_to_four():
    assert [default_slots(n) for n in (1, 2, 4, 16)] == [1, 2, 4, 4]


def test_time_limits_too_short_for_the_measured_throughput_are_refused():
    size = ServerSize(4, 2048, ARC, 64, "plan")
    speed = Throughput(prompt_per_s=130.0, generated_per_s=40.0)
    # four prompts of 1,950 tokens at 130 tokens/s, slowed by their length (1 + 1950/4096)
    assert first_token_s(size, speed) == pytest.approx(4 * 1950 * (1 + 1950 / 4096) / 130)
    problem = time_problem("smol", size, speed, Limits())
    assert problem is not None
    assert "idle_timeout_s 30" in problem and "at least 133 s" in problem
    assert "total_timeout_s" not in problem  # 180 s covers 133 s
    assert 'preset = "slow_server"' in problem and "arc-agi-2/0934a4d8" in problem
    assert "raise idle_timeout_s in [tool.srbench.limits]" in problem and "slots = 1" in problem
    slow = SrbenchConfig.model_validate({"limits": {"preset": "slow_server"}}).frozen_limits()
    assert time_problem("smol", size, speed, slow) is None


def test_a_refusal_under_the_slow_server_preset_does_not_suggest_it_again():
    """A 16,359-token ARC prompt on one slot at 71 prompt tokens/s needs more than the preset
    gives: the refusal says to raise the limits, not to set the preset already in force."""
    size = ServerSize(1, 20480, PromptSize("arc-agi-2/981571dc", 16359), 64, "configured")
    speed = Throughput(prompt_per_s=71.0, generated_per_s=20.0)
    slow = SrbenchConfig.model_validate({"limits": {"preset": "slow_server"}}).frozen_limits()
    problem = time_problem("smol", size, speed, slow)
    assert problem is not None
    assert "idle_timeout_s 600 and total_timeout_s 1200 must be at least" in problem
    assert "slow_server" not in problem and "slots = 1" not in problem  # in force; one slot
    assert problem.endswith("raise idle_timeout_s and total_timeout_s in [tool.srbench.limits]")
    short = ServerSize(1, 2048, PromptSize("mmlu/1", 1000), 64, "plan")
    assert time_problem("smol", short, speed, Limits()) is None  # 9.6 s × 1.5 < 30 s


def test_the_slow_server_preset_is_overridden_by_explicit_limits_and_checked():
    config = SrbenchConfig.model_validate(
        {"limits": {"preset": "slow_server", "idle_timeout_s": 300}}
    )
    limits = config.frozen_limits()
    assert limits.idle_timeout_s == 300
    assert limits.total_timeout_s == LIMIT_PRESETS["slow_server"]["total_timeout_s"]
    with pytest.raises(ValueError, match="unknown limits preset 'fast'; choose one of slow_server"):
        SrbenchConfig.model_validate({"limits": {"preset": "fast"}})
    with pytest.raises(ConfigError):  # a run override still obeys the limits' own rules
        config.frozen_limits({"idle_timeout_s": 5000})
