"""tau2-bench domain folders (db.json, policy.md, tasks.json, split_tasks.json) to ``tau3`` rows.

The agent's ``tools`` are the names of every action the domain's tasks expect, plus the
domain's tools that never write the database (``@is_tool(ToolType.READ)`` and ``GENERIC``)
when the domain's tool source is known: given as ``tools_source``, or found in a tau2-bench
checkout (``data/tau2/domains/<d>`` next to ``src/tau2/domains/<d>/tools.py``). The tool
source is parsed, never imported. Without it only the expected actions' names are known.
Each domain's ``db.json`` becomes the suite asset ``assets/<domain>_db.json``.
"""

from __future__ import annotations

import ast
import hashlib
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
SCENARIO_PARTS = (
    ("domain", "Domain"),
    ("reason_for_call", "Reason for call"),
    ("known_info", "Known info"),
    ("unknown_info", "Unknown info"),
    ("task_instructions", "Task instructions"),
)


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


def _scenario(record: Record) -> str:
    scenario = record.data.get("user_scenario")
    if not isinstance(scenario, dict):
        raise fail(record.where, f"user_scenario must be an object, got {type_name(scenario)}")
    instructions = scenario.get("instructions")
    parts = []
    if isinstance(scenario.get("persona"), str) and scenario["persona"].strip():
        parts.append(f"Persona:\n{scenario['persona'].strip()}")
    if isinstance(instructions, str) and instructions.strip():
        parts.append(instructions.strip())
    elif isinstance(instructions, dict):
        for key, label in SCENARIO_PARTS:
            value = instructions.get(key)
            if isinstance(value, str) and value.strip():
                parts.append(f"{label}:\n{value.strip()}")
    else:
        raise fail(record.where, "user_scenario.instructions must be text or an object")
    if not parts:
        raise fail(record.where, "user_scenario.instructions is empty")
    return "\n\n".join(parts)


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
    if (folder / "db.toml").is_file() and not (folder / "db.json").is_file():
        raise DatasetError(f"{folder}: holds db.toml; only JSON databases (db.json) are supported")
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
