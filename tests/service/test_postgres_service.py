"""``srbench serve`` over a PostgreSQL store: a run created through the API is executed by
its pytest worker into the database, and the API lists, pages, reports and streams it from
there (its evidence too), with the store's location named by its kind only."""

from __future__ import annotations

import httpx
import pytest

from pytest_srbench.store import open_store
from tests.service.helpers import TERMINAL, create, sse_events, wait_for

pytestmark = pytest.mark.slow


def test_a_run_through_the_api_lives_in_the_database(start_api, postgres_url):
    api = start_api(store=postgres_url)
    with httpx.Client(base_url=api.base_url, timeout=30) as client:
        run = create(client, name="pg")
        done = wait_for(client, run["id"], TERMINAL)
        assert done["status"] == "completed" and done["planned_cells"] == 4
        assert client.get("/api/runs").json()["total"] == 1
        report = client.get(f"/api/runs/{run['id']}/report").json()
        assert report["run_id"] == run["id"] and len(report["cells"]) == 4
        calls = client.get(f"/api/runs/{run['id']}/calls").json()["calls"]
        evidence = client.get(f"/api/runs/{run['id']}/calls/{calls[0]['id']}/evidence")
        assert evidence.text.startswith("data: ") and "[DONE]" in evidence.text
        with client.stream("GET", f"/api/runs/{run['id']}/events") as stream:
            kinds = [e.get("event") for e in sse_events(stream.iter_lines())]
        assert kinds[0] == "RunCreated" and kinds[-1] == "RunCompleted"
        store = client.get("/api/health").json()
    assert open_store(postgres_url).require_run(run["id"]).status == "completed"
    assert not (api.project / ".srbench" / "journal.sqlite3").exists()  # nothing in a folder
    assert "postgresql:///" not in str(store)
