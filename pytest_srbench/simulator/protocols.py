"""How the simulator answers each benchmark protocol: letters, grids, short answers, judge
verdicts, code, multi-step code, shell agents, and both sides of a tau conversation.

Whether a model gets a case right is one deterministic draw per (model, case): a wrong model
stays wrong for every step of a multi-step case.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from pytest_srbench.simulator.profiles import SimModel, unit

JUDGE_MARKER = "You grade one answer against a reference answer."
DONT_KNOW = ("don't know", "do not know", "not sure", "cannot answer")


@dataclass
class Reply:
    """Text and tool calls of one simulated assistant turn."""

    text: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)


def _assistant_turns(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")


def _tool_results(messages: list[dict[str, Any]]) -> int:
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "tool")


def right(model: SimModel, key: str) -> bool:
    return unit(model.name, key, "correct") < model.accuracy


def _norm(text: str) -> str:
    return " ".join("".join(ch.lower() if ch.isalnum() else " " for ch in text).split())


def judge_reply(model: SimModel, messages: list[dict[str, Any]]) -> Reply | None:
    """A verdict when the request is a judge prompt (recognised by its system marker)."""
    system = next((m.get("content") for m in messages if m.get("role") == "system"), "")
    if not isinstance(system, str) or JUDGE_MARKER not in system:
        return None
    user = next((m.get("content") for m in messages if m.get("role") == "user"), "{}")
    try:
        payload = json.loads(user if isinstance(user, str) else "{}")
        reference, candidate = str(payload["reference_answer"]), str(payload["candidate_answer"])
    except (ValueError, KeyError, TypeError):
        return Reply('{"verdict": "incorrect"}')
    if any(phrase in candidate.lower() for phrase in DONT_KNOW):
        verdict = "not_attempted"
    elif _norm(reference) and (
        _norm(candidate) == _norm(reference) or _norm(reference) in _norm(candidate)
    ):
        verdict = "correct"
    else:
        verdict = "incorrect"
    if model.judge_format == "prose":
        return Reply(f"I think the candidate's answer is {verdict.replace('_', ' ')}.")
    body = json.dumps({"verdict": verdict})
    return Reply(f"```json\n{body}\n```" if model.judge_format == "fenced" else body)


def distractor(answer: str) -> str:
    """A confident wrong answer: numbers off by one, letters shifted by one."""
    stripped = answer.strip()
    if stripped.lstrip("-").isdigit():
        return str(int(stripped) + 1)
    shifted = "".join(
        chr((ord(ch) - base + 1) % 26 + base) if ch.isascii() and ch.isalpha() else ch
        for ch in stripped
        for base in [ord("a") if ch.islower() else ord("A")]
    )
    return shifted if _norm(shifted) != _norm(stripped) else stripped + " (not)"


def _wrong_grid(answer: list[Any]) -> list[Any]:
    grids = json.loads(json.dumps(answer))
    grids[0][0][0] = (grids[0][0][0] + 1) % 10
    return grids  # type: ignore[no-any-return]


def _tool_call(index: int, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return {"id": f"call_{index}", "name": name, "arguments": json.dumps(arguments, sort_keys=True)}


def scripted_reply(
    model: SimModel, key: str, script: dict[str, Any], messages: list[dict[str, Any]]
) -> Reply | None:
    """The reply a script asks for (None for kinds handled elsewhere, such as MCQ)."""
    kind = script.get("kind")
    good = right(model, key)
    if kind == "grid":
        answer = script["answer"]
        return Reply(json.dumps(answer if good else _wrong_grid(answer), separators=(",", ":")))
    if kind == "text":
        if unit(model.name, key, "unparsed") < model.unparsed_rate:
            return Reply("I don't know.")
        answer = str(script["answer"])
        return Reply(answer if good else distractor(answer))
    if kind == "code":
        solution = script.get("solution") if good else script.get("wrong_solution")
        code = solution or "raise SystemExit('no solution')"
        return Reply(f"Here is my solution.\n\n```python\n{code.rstrip()}\n```")
    if kind == "steps":
        steps = list(script.get("steps") or [])
        index = _assistant_turns(messages)
        if index >= len(steps):
            return Reply("```python\npass\n```")
        code = steps[index]
        if not good and index == len(steps) - 1:
            code = code.replace("return ", "return None and ", 1) if "return " in code else "pass"
        return Reply(f"```python\n{code.rstrip()}\n```")
    if kind == "terminal":
        commands = list(script.get("commands") or [])
        if not good and commands:
            commands = commands[:-1]
        done = _tool_results(messages)
        if done < len(commands):
            return Reply("", [_tool_call(done, "run_shell", {"command": commands[done]})])
        return Reply("Done.")
    if kind == "tau-user":
        turns = list(script.get("turns") or ["###STOP###"])
        index = _assistant_turns(messages)
        return Reply(turns[index] if index < len(turns) else "###STOP###")
    if kind == "tau-agent":
        plan = list(script.get("plan") or [])
        if not good:
            tool_steps = [i for i, step in enumerate(plan) if step.get("tool_calls")]
            if tool_steps:
                plan.pop(tool_steps[-1])
        first_user = next(
            (i for i, m in enumerate(messages) if isinstance(m, dict) and m.get("role") == "user"),
            len(messages),
        )
        index = _assistant_turns(messages[first_user:])  # the agent's own greeting is no step
        if index >= len(plan):
            return Reply("Is there anything else I can help you with?")
        step = plan[index]
        if step.get("tool_calls"):
            calls = [
                _tool_call(index * 10 + position, call["name"], dict(call.get("arguments") or {}))
                for position, call in enumerate(step["tool_calls"])
            ]
            return Reply("", calls)
        return Reply(str(step.get("say", "")))
    return None
