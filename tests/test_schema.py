"""The exported JSON Schema of the report matches the pydantic model.

The committed file is what the locked pydantic (constraints/test.txt) writes. Other pydantic
releases spell the same schema a little differently (an explicit ``additionalProperties: true``,
a lone ``$ref`` wrapped in ``allOf``), so under them the schemas are compared after those
spellings are made one; the byte-for-byte check runs with the locked release.
"""

import json
import re
from pathlib import Path
from typing import Any

import pydantic
import pytest

from pytest_srbench.render.json_report import report_schema

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = ROOT / "schemas" / "report.schema.json"


def locked_pydantic() -> str:
    found = re.search(r"^pydantic==(\S+)$", (ROOT / "constraints" / "test.txt").read_text(), re.M)
    assert found, "constraints/test.txt pins no pydantic"
    return found.group(1)


def canonical(node: Any) -> Any:
    """``node`` with the spellings pydantic releases differ in made one."""
    if isinstance(node, list):
        return [canonical(item) for item in node]
    if not isinstance(node, dict):
        return node
    out = {key: canonical(value) for key, value in node.items()}
    if out.get("additionalProperties") is True:  # JSON Schema's default
        del out["additionalProperties"]
    wrapped = out.get("allOf")
    if isinstance(wrapped, list) and len(wrapped) == 1 and set(wrapped[0]) == {"$ref"}:
        del out["allOf"]
        out["$ref"] = wrapped[0]["$ref"]
    return out


def test_committed_schema_describes_the_model():
    assert canonical(json.loads(SCHEMA.read_text())) == canonical(report_schema()), (
        "run: python scripts/export_schema.py"
    )


def test_committed_schema_is_what_the_locked_pydantic_writes():
    locked, installed = locked_pydantic(), pydantic.VERSION
    if installed != locked:
        pytest.skip(f"pydantic {installed} is not the locked {locked}")
    expected = json.dumps(report_schema(), indent=2, sort_keys=True) + "\n"
    assert SCHEMA.read_text() == expected, "run: python scripts/export_schema.py"


def test_canonical_form_is_blind_only_to_spelling():
    a = {"type": "object", "properties": {"x": {"allOf": [{"$ref": "#/$defs/X"}]}}}
    b = {"type": "object", "additionalProperties": True, "properties": {"x": {"$ref": "#/$defs/X"}}}
    assert canonical(a) == canonical(b)
    assert canonical(a) != canonical({**b, "additionalProperties": False})
    assert canonical(a) != canonical({"type": "object", "properties": {"x": {"$ref": "#/$defs/Y"}}})
