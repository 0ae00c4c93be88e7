"""A support bot whose system prompt is being changed: is the new prompt at least as good?

The prompt version comes from ``SUPPORT_BOT_PROMPT`` (``v1`` or ``v2``) so that CI can run the
main branch's and the pull request's versions over the same frozen plan and gate on the
paired difference.
"""

from __future__ import annotations

import os

import pytest

PROMPTS = {
    "v1": "Answer the multiple-choice question with the letter only.",
    "v2": "You are a careful domain expert. Read every option, then reply with one letter.",
}


class SupportBot:
    """The application under test: a system prompt, one model call, a tidy answer."""

    def __init__(self, prompt: str) -> None:
        self.prompt = prompt

    async def answer(self, messages: list[dict], target) -> str:
        reply = await target.ask([{"role": "system", "content": self.prompt}, *messages])
        return reply.final_text.strip()


@pytest.fixture(scope="session")
def bot() -> SupportBot:
    return SupportBot(PROMPTS[os.environ.get("SUPPORT_BOT_PROMPT", "v1")])


@pytest.mark.srbench("mmlu-pro")
async def test_support_bot(srbench_case, srbench_target, bot):
    return await bot.answer(srbench_case.messages, srbench_target)
