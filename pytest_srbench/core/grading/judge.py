"""The reference-answer judge protocol (``sr-bench-reference-judge-v1``): the judge sees the
question, the reference answer and the candidate answer as JSON and must answer with a JSON
object whose ``verdict`` is ``correct``, ``incorrect`` or ``not_attempted``. Anything else is a
grading failure — a verdict is never guessed from prose."""

from __future__ import annotations

import json
import re
from typing import Any, Literal

from pytest_srbench.core.errors import SrbenchError

JUDGE_VERSION = "sr-bench-reference-judge-v1"
JUDGE_MARKER = "You grade one answer against a reference answer."
Verdict = Literal["correct", "incorrect", "not_attempted"]
VERDICTS = ("correct", "incorrect", "not_attempted")

JUDGE_SYSTEM = (
    f"{JUDGE_MARKER} ({JUDGE_VERSION})\n"
    "The user message is a JSON object with question, reference_answer and candidate_answer.\n"
    "- correct: the candidate gives the reference answer (paraphrase, units and formatting may differ) "
    "and contradicts nothing in it;\n"
    "- incorrect: the candidate gives a different or contradictory answer;\n"
    "- not_attempted: the candidate declines, hedges without committing, or gives no answer.\n"
    'Reply with only a JSON object: {"verdict": "correct" | "incorrect" | "not_attempted"}.'
)

_FENCE = re.compile(r"^```(?:json)?\s*(.*?)\s*```$", re.DOTALL)


class JudgeError(SrbenchError, ValueError):
    """The judge's reply is not a valid verdict object."""


def judge_messages(question: str, reference: str, candidate: str) -> list[dict[str, Any]]:
    """The two messages sent to the judge target."""
    payload = {"question": question, "reference_answer": reference, "candidate_answer": candidate}
    return [
        {"role": "system", "content": JUDGE_SYSTEM},
        {"role": "user", "content": json.dumps(payload, ensure_ascii=False, sort_keys=True)},
    ]


def parse_verdict(text: str) -> Verdict:
    """Strictly parse the judge's reply (optionally wrapped in one ```json fence)."""
    body = text.strip()
    fenced = _FENCE.match(body)
    if fenced:
        body = fenced.group(1)
    try:
        value = json.loads(body)
    except ValueError:
        raise JudgeError("Judge verdict is not a JSON object (malformed judge output)") from None
    if not isinstance(value, dict) or "verdict" not in value:
        raise JudgeError("Judge verdict object lacks a 'verdict' field")
    verdict = value["verdict"]
    if verdict not in VERDICTS:
        raise JudgeError(f"Judge verdict {verdict!r} is not one of {', '.join(VERDICTS)}")
    return verdict  # type: ignore[no-any-return]
