"""The service API on a large store: build one interrupted run of 100,000 cells (as
bench/durable_store.py does) and time the dashboard's hot requests through the real ASGI app
in-process (routing, validation, store queries, JSON): runs list, run detail, a calls page, a
results page, the events page and the recovery plan.

    python -m bench.service [--cells 100000] [--repeat 5]   (from the repository root)
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import tempfile
import time
from pathlib import Path

from fastapi.testclient import TestClient

from bench.durable_store import build_store
from pytest_srbench.service.api import create_app
from pytest_srbench.service.worker import RunService


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cells", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="srbench-service-"))
    try:
        (folder / "pyproject.toml").write_text("[tool.srbench]\n")
        run_id, _ = build_store(folder / ".srbench", args.cells)
        client = TestClient(create_app(RunService(folder, folder / ".srbench"), dashboard=False))
        requests = {
            "GET /api/runs": "/api/runs",
            "GET /api/runs/{id}": f"/api/runs/{run_id}",
            "GET /api/runs/{id}/calls?limit=100": f"/api/runs/{run_id}/calls?limit=100",
            "GET /api/runs/{id}/results?limit=100": f"/api/runs/{run_id}/results?limit=100",
            "GET /api/runs/{id}/events/page?limit=25": f"/api/runs/{run_id}/events/page?limit=25",
            "GET /api/runs/{id}/recovery-plan": f"/api/runs/{run_id}/recovery-plan",
        }
        print(f"one run of {args.cells:,} cells; median of {args.repeat} requests each")
        for label, path in requests.items():
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                response = client.get(path)
                times.append(time.perf_counter() - start)
                if response.status_code != 200:
                    raise SystemExit(f"{label}: HTTP {response.status_code} {response.text[:200]}")
            print(f"{label:<44}{statistics.median(times) * 1000:>9.1f} ms"
                  f"{len(response.content) / 1000:>9.0f} kB")  # fmt: skip
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
