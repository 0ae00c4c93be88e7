"""The JSON report file: validated against ``ReportModel`` and written atomically."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pytest_srbench.core.report_model import ReportModel


def report_json(report: dict[str, Any]) -> str:
    """Validate and serialise a report."""
    model = ReportModel.model_validate(report)
    return json.dumps(model.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def write_report(report: dict[str, Any], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + f".tmp-{os.getpid()}")
    tmp.write_text(report_json(report), encoding="utf-8")
    tmp.replace(path)


def report_schema() -> dict[str, Any]:
    """JSON Schema of the report (exported to ``schemas/report.schema.json``)."""
    return ReportModel.model_json_schema()
