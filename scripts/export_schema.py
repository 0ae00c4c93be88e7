"""Write the JSON Schema of the report to schemas/report.schema.json."""

import json
from pathlib import Path

from pytest_srbench.render.json_report import report_schema

target = Path(__file__).resolve().parents[1] / "schemas" / "report.schema.json"
target.write_text(json.dumps(report_schema(), indent=2, sort_keys=True) + "\n")
print(f"wrote {target}")
