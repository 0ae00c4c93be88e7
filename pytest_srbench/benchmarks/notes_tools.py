"""The agent benchmarks' tools over the shipped notes corpus: ``search_notes`` (full-text
search of the corpus index), ``read_note`` and ``create_task``.

``create_task`` writes, so it needs the case's explicit approval (``approved_tools``);
approvals are never automatic — an unapproved call returns ``permission_denied`` and counts
as a failed tool result.

``NotesToolbox`` hands the same tools to the user's own agent loop (a benchmark written as a
pytest test): their schemas, a call that runs and records, and the ``AgentRun`` to return."""

from __future__ import annotations

import copy
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cache
from typing import Any, Protocol

from pytest_srbench.benchmarks.agent_tools import decode_arguments, function_tool
from pytest_srbench.core.agent_run import AgentRun, ToolCall

TOOLS = [
    function_tool(
        "search_notes",
        "Full-text search over the team's notes. Returns the best matching blocks with their "
        "note_id and block_id.",
        {"query": {"type": "string"}, "top_k": {"type": "integer", "minimum": 1, "maximum": 10}},
        ["query"],
    ),
    function_tool(
        "read_note",
        "Read one note in full: its title and every block with its block_id.",
        {"note_id": {"type": "string"}},
        ["note_id"],
    ),
    function_tool(
        "create_task",
        "Create a task in the team's tracker. Needs the user's approval.",
        {"title": {"type": "string"}, "due": {"type": "string"}},
        ["title"],
    ),
]
TOOL_NAMES = frozenset(tool["function"]["name"] for tool in TOOLS)


@cache
def _notes() -> dict[str, dict[str, Any]]:
    from pytest_srbench.notes.index import load_corpus

    return {note["note_id"]: note for note in load_corpus()["notes"]}


@cache
def _index() -> Any:
    from pytest_srbench.notes.embedding import load_embedder
    from pytest_srbench.notes.index import cached_index

    embedder, _ = load_embedder("hashing")  # full-text search needs no model
    return cached_index(None, embedder)


@dataclass
class NotesWorkspace:
    """The tool state of one agent case: approvals, and what the tools did."""

    approved: frozenset[str]
    created_tasks: list[dict[str, Any]] = field(default_factory=list)

    def call(self, name: str, arguments: Mapping[str, Any] | None) -> tuple[bool, bool, str]:
        """Run one tool call: (valid call, result ok, result text for the model)."""
        if name not in TOOL_NAMES:
            return False, False, json.dumps({"error": f"unknown tool {name!r}"})
        if arguments is None:
            return False, False, json.dumps({"error": "arguments are not a JSON object"})
        try:
            if name == "search_notes":
                return True, True, self._search(arguments)
            if name == "read_note":
                return self._read(arguments)
            return self._create_task(arguments)
        except (TypeError, ValueError) as error:
            return False, False, json.dumps({"error": f"invalid arguments: {error}"})

    def _search(self, arguments: Mapping[str, Any]) -> str:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            raise ValueError("query must be a non-empty string")
        top_k = arguments.get("top_k", 5)
        if isinstance(top_k, bool) or not isinstance(top_k, int) or not 1 <= top_k <= 10:
            raise ValueError("top_k must be an integer in 1..10")
        found = _index().search(query, "fts", top_k=top_k)
        hits = [
            {"note_id": r["note_id"], "block_id": r["block_id"], "title": r.get("title"),
             "text": r.get("text")}
            for r in found["results"]
        ]  # fmt: skip
        return json.dumps({"results": hits})

    def _read(self, arguments: Mapping[str, Any]) -> tuple[bool, bool, str]:
        note_id = arguments.get("note_id")
        if not isinstance(note_id, str):
            raise ValueError("note_id must be a string")
        note = _notes().get(note_id.strip())
        if note is None:
            return True, False, json.dumps({"error": f"no note {note_id!r}"})
        return (
            True,
            True,
            json.dumps(
                {"note_id": note["note_id"], "title": note["title"], "blocks": note["blocks"]}
            ),
        )

    def _create_task(self, arguments: Mapping[str, Any]) -> tuple[bool, bool, str]:
        title = arguments.get("title")
        if not isinstance(title, str) or not title.strip():
            raise ValueError("title must be a non-empty string")
        if "create_task" not in self.approved:
            return True, False, json.dumps(
                {"error": "permission_denied: create_task needs the user's approval, and "
                          "approvals are never automatic"}
            )  # fmt: skip
        task = {"task_id": f"T-{len(self.created_tasks) + 1}", "title": title.strip(),
                "due": arguments.get("due")}  # fmt: skip
        self.created_tasks.append(task)
        return True, True, json.dumps({"created": task})


class HasMetadata(Protocol):
    """A case as a test body sees it (``srbench_case``) or as the engine holds it."""

    @property
    def metadata(self) -> Mapping[str, Any]: ...


def case_workspace(case: HasMetadata) -> NotesWorkspace:
    """A fresh workspace with the case's approvals (``approved_tools``), and nothing else."""
    return NotesWorkspace(approved=frozenset(case.metadata.get("approved_tools") or ()))


@dataclass
class NotesToolbox:
    """The notes tools of one agent case for the user's own agent loop.

    ``schemas`` go with the model call (``srbench_target.ask(messages, tools=box.schemas)``),
    ``call`` runs one tool call and records it, and ``run`` is the ``AgentRun`` the test body
    returns for grading. Make one per cell: the workspace keeps the tasks the calls created.
    """

    workspace: NotesWorkspace
    calls: list[ToolCall] = field(default_factory=list)

    @classmethod
    def for_case(cls, case: HasMetadata) -> NotesToolbox:
        """The tools of ``case`` (its approvals only: no reference answer is read)."""
        return cls(case_workspace(case))

    @property
    def schemas(self) -> list[dict[str, Any]]:
        """The OpenAI-style function tools (a copy: change it freely)."""
        return copy.deepcopy(TOOLS)

    def call(self, name: str, arguments: Mapping[str, Any] | str | None) -> str:
        """Run one tool call (``arguments``: an object, or the model's JSON text) and return
        the result text to feed back to the model; an invalid or failed call returns an error
        text, as a tool would."""
        decoded = None if arguments is None else decode_arguments(arguments)
        _, _, text = self.workspace.call(name, decoded)
        self.calls.append(ToolCall(name=name, arguments=arguments, result=text))
        return text

    def run(self, final_answer: str, *, completed: bool = True) -> AgentRun:
        """The run so far, with ``final_answer``; ``completed=False`` when the loop stopped
        without an answer (its step cap)."""
        return AgentRun(final_answer=final_answer, tool_calls=tuple(self.calls),
                        completed=completed)  # fmt: skip
