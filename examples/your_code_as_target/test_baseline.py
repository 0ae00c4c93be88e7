"""Every target answers the same cases: the two simulated models and the rule."""

import pytest


@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa(srbench_case, srbench_target):
    reply = await srbench_target.ask(srbench_case.messages)
    return reply.final_text
