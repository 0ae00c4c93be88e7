"""tau2-bench domain folders (db.json, policy.md, tasks.json, split_tasks.json) to ``tau3`` rows.

The agent's ``tools`` are the names of every action the domain's tasks expect, plus the
domain's tools that never write the database (``@is_tool(ToolType.READ)`` and ``GENERIC``)
when the domain's tool source is known: given as ``tools_source``, or found in a tau2-bench
checkout (``data/tau2/domains/<d>`` next to ``src/tau2/domains/<d>/tools.py``). The tool
source is parsed, never imported. Without it only the expected actions' names are known.
Each domain's ``db.json`` becomes the suite asset ``assets/<domain>_db.json``.

``user_scenario`` is the task's scenario exactly as tau2 gives it to its user simulator (the
text of ``UserScenario``: an optional ``Persona:`` block, then ``Instructions:`` with the
structured parts ``Domain``, ``Reason for call``, ``Known info``, ``Unknown info`` and ``Task
instructions``, each indented by a tab). The released simulator guidelines
(``data/tau2/user_simulator/simulation_guidelines.md``, found beside ``domains/``) become
``user_guidelines``.

Domains whose tasks need more than the agent's tools acting on ``db.json`` — telecom's
user-side tools and device state (``user_db.toml``, actions requested by the user), its TOML
database and split policy, environment assertions — are refused with what is missing. Tasks
with an ``initial_state`` are dropped (and counted as dropped).
"""

from __future__ import annotations

import ast
import hashlib
import textwrap
from pathlib import Path
from typing import Any

from pytest_srbench.datasets.formats._common import (
    Conversion,
    DatasetError,
    Record,
    Row,
    UniqueIds,
    fail,
    need_id,
    read_json,
    read_raw,
    read_text,
    type_name,
)

NO_WRITE_KINDS = ("READ", "GENERIC")
GUIDELINES = ("user_simulator", "simulation_guidelines.md")  # beside domains/ in data/tau2
TAB = "\t"


def declared_tools(source: Path) -> dict[str, str]:
    """Tool name -> kind (READ, WRITE, GENERIC, ...) from ``@is_tool(ToolType.X)`` decorators."""
    try:
        tree = ast.parse(read_text(source), filename=str(source))
    except SyntaxError as error:
        raise DatasetError(
            f"{source} line {error.lineno}: not valid Python ({error.msg})"
        ) from None
    found: dict[str, str] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.FunctionDef):
            continue
        for decorator in node.decorator_list:
            if not isinstance(decorator, ast.Call) or not decorator.args:
                continue
            func, kind = decorator.func, decorator.args[0]
            name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", "")
            if name == "is_tool" and isinstance(kind, ast.Attribute):
                found[node.name] = kind.attr
    if not found:
        raise DatasetError(f"{source}: declares no @is_tool(...) tools")
    return found


def _checkout_tools(folder: Path) -> Path | None:
    parents = folder.resolve().parents
    if len(parents) < 4 or [p.name for p in parents[:3]] != ["domains", "tau2", "data"]:
        return None
    candidate = parents[3] / "src" / "tau2" / "domains" / folder.name / "tools.py"
    return candidate if candidate.is_file() else None


def _part(record: Record, parts: dict[str, Any], key: str, required: bool) -> str | None:
    value = parts.get(key)
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise fail(record.where, f"user_scenario.instructions.{key} must be text")
    return value


def _scenario(record: Record) -> str:
    """The scenario as tau2 renders it for its user simulator (``str(UserScenario)``)."""
    scenario = record.data.get("user_scenario")
    if not isinstance(scenario, dict):
        raise fail(record.where, f"user_scenario must be an object, got {type_name(scenario)}")
    persona = scenario.get("persona")
    if persona is not None and not isinstance(persona, str):
        raise fail(record.where, "user_scenario.persona must be text or null")
    instructions = scenario.get("instructions")
    if isinstance(instructions, str):
        if not instructions.strip():
            raise fail(record.where, "user_scenario.instructions is empty")
        text = instructions
    elif isinstance(instructions, dict):
        domain = _part(record, instructions, "domain", True)
        reason = _part(record, instructions, "reason_for_call", True)
        known = _part(record, instructions, "known_info", False)
        unknown = _part(record, instructions, "unknown_info", False)
        task = _part(record, instructions, "task_instructions", True)
        lines = [f"Domain: {domain}", f"Reason for call:\n{textwrap.indent(reason or '', TAB)}"]
        if known is not None:
            lines.append(f"Known info:\n{textwrap.indent(known, TAB)}")
        if unknown is not None:
            lines.append(f"Unknown info:\n{textwrap.indent(unknown, TAB)}")
        lines.append(f"Task instructions:\n{textwrap.indent(task or '', TAB)}")
        text = "\n".join(lines)
    else:
        raise fail(record.where, "user_scenario.instructions must be text or an object")
    rendered = [] if persona is None else ["Persona:", textwrap.indent(persona, TAB)]
    rendered += ["Instructions:", textwrap.indent(text, TAB)]
    return "\n".join(rendered)


def _unsupported(folder: Path, tasks: list[Any]) -> list[str]:
    """What a domain's tasks need that tau3 here does not have (empty: convertible)."""
    needs: list[str] = []
    if any((folder / name).is_file() for name in ("user_db.toml", "user_db.json")):
        needs.append("a user-side device database (user_db)")
    if (folder / "db.toml").is_file() and not (folder / "db.json").is_file():
        needs.append("a TOML database (db.toml; only db.json is supported)")
    if not (folder / "policy.md").is_file() and (folder / "main_policy.md").is_file():
        needs.append("a policy split over main_policy.md and a manual (not policy.md)")
    user_actions = assertions = 0
    for task in (t for t in tasks if isinstance(t, dict)):
        criteria = task.get("evaluation_criteria") or {}
        actions = criteria.get("actions") or [] if isinstance(criteria, dict) else []
        user_actions += sum(
            1 for a in actions if isinstance(a, dict) and a.get("requestor") == "user"
        )
        basis = criteria.get("reward_basis") or [] if isinstance(criteria, dict) else []
        assertions += bool(isinstance(criteria, dict) and criteria.get("env_assertions"))
        assertions += "ENV_ASSERTION" in basis and not criteria.get("env_assertions")
    if user_actions:
        needs.append(f"user-side tools ({user_actions} expected action(s) requested by the user)")
    if assertions:
        needs.append(f"environment assertions ({assertions} task(s) graded by ENV_ASSERTION)")
    return needs


def _guidelines(folder: Path) -> Path | None:
    """The released user-simulator guidelines of a tau2 data folder, when beside domains/."""
    if folder.resolve().parent.name != "domains":
        return None
    candidate = folder.resolve().parent.parent.joinpath(*GUIDELINES)
    return candidate if candidate.is_file() else None


def _actions(record: Record, criteria: dict[str, Any]) -> list[dict[str, Any]]:
    actions = criteria.get("actions") or []
    if not isinstance(actions, list):
        raise fail(record.where, "evaluation_criteria.actions must be a list")
    out = []
    for index, action in enumerate(actions):
        at = f"{record.where} evaluation_criteria.actions[{index}]"
        if not isinstance(action, dict) or not isinstance(action.get("name"), str):
            raise fail(at, "needs a tool 'name'")
        if action.get("requestor", "assistant") not in (None, "assistant"):
            continue  # the user simulator's own tool calls are not the agent's to replay
        arguments = action.get("arguments") or {}
        if not isinstance(arguments, dict):
            raise fail(at, f"arguments must be an object, got {type_name(arguments)}")
        out.append({"name": action["name"], "arguments": arguments})
    return out


def _outputs(record: Record, criteria: dict[str, Any]) -> list[str]:
    info = criteria.get("communicate_info") or []
    if not isinstance(info, list) or not all(isinstance(item, str) for item in info):
        raise fail(record.where, "evaluation_criteria.communicate_info must be a list of strings")
    return list(info)


def _splits(folder: Path) -> dict[str, list[str]]:
    path = folder / "split_tasks.json"
    if not path.is_file():
        return {}
    data = read_json(path)
    if not isinstance(data, dict) or not all(isinstance(v, list) for v in data.values()):
        raise DatasetError(f"{path}: expected an object mapping split names to lists of task ids")
    members: dict[str, list[str]] = {}
    for split, task_ids in sorted(data.items()):
        if split == "base":
            continue
        for task_id in task_ids:
            members.setdefault(str(task_id), []).append(split)
    return members


def _domain(folder: Path, tools_source: Path | None, out: Conversion) -> None:
    domain = folder.name
    tasks_path = folder / "tasks.json"
    needs = _unsupported(folder, read_json(tasks_path) if tasks_path.is_file() else [])
    if needs:
        raise DatasetError(
            f"{folder}: the {domain} domain cannot be converted for tau3: it needs "
            + "; ".join(needs)
            + ". tau3 here supports domains whose tasks act through the agent's tools on "
            "db.json (airline, retail); nothing was converted"
        )
    for name in ("db.json", "policy.md", "tasks.json"):
        if not (folder / name).is_file():
            raise DatasetError(f"{folder}: missing {name} (not a tau2-bench domain folder)")
    db_bytes = read_raw(folder / "db.json")
    if not isinstance(read_json(folder / "db.json"), dict):
        raise DatasetError(f"{folder / 'db.json'}: the database must be a JSON object")
    policy = read_text(folder / "policy.md")
    if not policy.strip():
        raise DatasetError(f"{folder / 'policy.md'}: is empty")
    tasks = read_json(folder / "tasks.json")
    if not isinstance(tasks, list) or not tasks:
        raise DatasetError(f"{folder / 'tasks.json'}: expected a non-empty list of tasks")
    splits = _splits(folder)
    out.source_files += [folder / name for name in ("db.json", "policy.md", "tasks.json")]
    if splits:
        out.source_files.append(folder / "split_tasks.json")
    guidelines = _guidelines(folder)
    if guidelines is not None:
        out.source_files.append(guidelines)
    source = tools_source or _checkout_tools(folder)
    declared = declared_tools(source) if source else {}
    if source:
        out.source_files.append(source)
    asset = f"assets/{domain}_db.json"
    out.assets[asset] = folder / "db.json"
    db_asset = {"path": asset, "sha256": hashlib.sha256(db_bytes).hexdigest()}
    ids = UniqueIds("task id")
    pending: list[Row] = []
    used_names: set[str] = set()
    for index, task in enumerate(tasks, start=1):
        where = f"{folder / 'tasks.json'} task {index}"
        if not isinstance(task, dict):
            raise fail(where, f"must be an object, got {type_name(task)}")
        record = Record(task, where)
        native = need_id(record, "id")
        ids.add(native, record.where)
        if task.get("initial_state") not in (None, {}):
            out.dropped["initial_state"] = out.dropped.get("initial_state", 0) + 1
            continue
        criteria = task.get("evaluation_criteria") or {}
        if not isinstance(criteria, dict):
            raise fail(record.where, "evaluation_criteria must be an object")
        actions = _actions(record, criteria)
        used_names.update(action["name"] for action in actions)
        meta: dict[str, Any] = {"upstream_id": native}
        if splits.get(native):
            meta["upstream_splits"] = splits[native]
        for key in ("nl_assertions", "reward_basis"):
            if isinstance(criteria.get(key), list) and criteria[key]:
                meta[key] = criteria[key]
        row: Row = {
            "task_id": f"{domain}-{native}",
            "domain": domain,
            "policy": policy,
            "user_scenario": _scenario(record),
            **({"user_guidelines": read_text(guidelines)} if guidelines else {}),
            "db_asset": db_asset,
            "expected_actions": actions,
            "required_outputs": _outputs(record, criteria),
            "metadata": meta,
        }
        pending.append(row)
    unknown = sorted(used_names - set(declared)) if declared else []
    if unknown:
        raise DatasetError(
            f"{folder / 'tasks.json'}: expected actions use tool(s) {', '.join(unknown)} that "
            f"{source} does not declare"
        )
    tools = sorted(used_names | {name for name, kind in declared.items() if kind in NO_WRITE_KINDS})
    for row in pending:
        row["tools"] = tools
        out.rows.append(row)


def convert_tau(path: Path, tools_source: Path | None = None) -> Conversion:
    """``path`` is one domain folder or a folder of domain folders (sorted by name)."""
    if not path.is_dir():
        raise DatasetError(f"{path}: expected a tau2-bench domain folder")
    if (path / "tasks.json").is_file():
        folders = [path]
    else:
        folders = sorted(c for c in path.iterdir() if c.is_dir() and (c / "tasks.json").is_file())
        if not folders:
            raise DatasetError(f"{path}: holds no domain folders (with tasks.json)")
    if tools_source is not None and len(folders) > 1:
        raise DatasetError(f"{path}: a tools source applies to one domain, found {len(folders)}")
    out = Conversion(rows=[], source_files=[])
    for folder in folders:
        _domain(folder, tools_source, out)
    return out


def read_tau(path: Path, tools_source: Path | None = None) -> list[Row]:
    return convert_tau(path, tools_source).rows
