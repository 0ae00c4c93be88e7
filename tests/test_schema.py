"""The exported JSON Schema of the report matches the pydantic model."""

import json
from pathlib import Path

from pytest_srbench.render.json_report import report_schema

SCHEMA = Path(__file__).resolve().parents[1] / "schemas" / "report.schema.json"


def test_committed_schema_is_current():
    expected = json.dumps(report_schema(), indent=2, sort_keys=True) + "\n"
    assert SCHEMA.read_text() == expected, "run: python scripts/export_schema.py"
