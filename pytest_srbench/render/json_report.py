"""The JSON report file: validated against ``ReportModel`` and written atomically."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_srbench.core.report.model import ReportModel
from pytest_srbench.render.outputs import write_output


def report_json(report: dict[str, Any]) -> str:
    """Validate and serialise a report."""
    model = ReportModel.model_validate(report)
    return json.dumps(model.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def write_report(report: dict[str, Any], path: Path) -> None:
    """Write atomically; an unwritable path raises ``OutputError`` (one line)."""
    write_output(path, report_json(report))


def report_schema() -> dict[str, Any]:
    """JSON Schema of the report (exported to ``schemas/report.schema.json``)."""
    return ReportModel.model_json_schema()
