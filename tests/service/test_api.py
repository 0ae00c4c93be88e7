"""The HTTP API of ``srbench serve`` over real HTTP: catalog, plan review, runs created through
the API and executed by their pytest worker, paging, SSE resume, errors, auth, capacity,
comparison and recovery."""

from __future__ import annotations

import errno
import json
import os
import signal
import threading
import time
import tracemalloc
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from pytest_srbench.service.guard import BindError, check_bind
from tests.service.helpers import TERMINAL, assert_error, create, sse_events, wait_for

pytestmark = [pytest.mark.slow, pytest.mark.xdist_group("service-api")]

SLOW = {"benchmarks": ["mmlu-pro"], "targets": ["sim-slow"], "concurrency": 1}
# 50 cells of 0.4 s one at a time: a run that is still going whenever a test acts on it, even on
# a loaded machine (the tests that use it cancel it long before it could end).
LONG = {**SLOW, "limit": 10, "repeats": 5}


@pytest.fixture(scope="module")
def client(api) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=api.base_url, timeout=30) as http:
        yield http


@pytest.fixture(scope="module")
def two_runs(client) -> list[dict[str, Any]]:
    """Two completed runs of the same cases (baseline and candidate)."""
    runs = [create(client, name=name, idempotency_key=f"pair-{name}") for name in ("base", "cand")]
    return [wait_for(client, run["id"], TERMINAL) for run in runs]


def test_health(client, api):
    body = client.get("/api/health").json()
    assert body["status"] == "ok" and body["max_runs"] == 100
    assert body["store"] == api.service.store_path.name and body["active_runs"] >= 0
    assert "/" not in body["store"]  # the server's paths are not public


def test_datasets_list_filter_and_paging(client):
    everything = client.get("/api/datasets").json()
    ids = {d["id"]: d for d in everything["datasets"]}
    assert everything["total"] == len(ids) >= 11
    assert ids["mmlu-pro"]["kind"] == "suite" and ids["mmlu-pro"]["location"] == "shipped"
    assert ids["mmlu-pro"]["profiles"] == {"smoke": 14, "quick": 0, "standard": 0}
    assert ids["rag-smoke"]["kind"] == "rag" and ids["agent-smoke"]["kind"] == "agent"
    rag = client.get("/api/datasets", params={"kind": "rag"}).json()
    assert [d["id"] for d in rag["datasets"]] == ["rag-smoke"]
    assert [d["id"] for d in client.get("/api/datasets?q=MMLU").json()["datasets"]] == ["mmlu-pro"]
    quick = client.get("/api/datasets", params={"profile": "quick"}).json()["datasets"]
    assert {d["kind"] for d in quick} == {"rag", "agent"}  # shipped suites hold smoke items only
    # one list of cases: smoke and quick take it all; nothing is held out for standard
    assert ids["rag-smoke"]["profiles"] == {"smoke": 28, "quick": 28}
    assert client.get("/api/datasets", params={"profile": "standard"}).json()["datasets"] == []
    refused = client.post("/api/plans", json={"benchmarks": ["rag-smoke"], "profile": "standard"})
    assert_error(refused, 422, "BENCHMARK_PLAN_INVALID")
    assert "rag-smoke: it has no 'standard' profile (its profiles: smoke, quick)" in refused.text
    assert client.get("/api/datasets?benchmark=hle").json()["total"] == 1
    page = client.get("/api/datasets", params={"limit": 2, "offset": 2}).json()
    assert [d["id"] for d in page["datasets"]] == list(ids)[2:4]
    assert page["total"] == everything["total"]


def test_dataset_detail_and_cases_without_references(client):
    detail = client.get("/api/datasets/mmlu-pro").json()
    assert detail["coverage"]["smoke"] == {"needed": 14, "available": 14}
    assert detail["coverage"]["quick"] == {"needed": 500, "available": 14}
    assert sum(g["cases"] for g in detail["groups"]) == 14
    assert {"group": "biology", "cases": 1} in detail["groups"]
    response = client.get("/api/datasets/mmlu-pro/cases")
    body = response.json()
    assert body["total"] == 14 and body["pages"] == 1 and body["page"] == 1
    first = body["cases"][0]
    assert set(first) == {"id", "benchmark", "prompt", "group", "tags"}
    assert first["prompt"].startswith("Which organelle") and first["group"] == "biology"
    assert '"answer' not in response.text and "answer_index" not in response.text
    found = client.get("/api/datasets/mmlu-pro/cases", params={"q": "oxidative"}).json()
    assert [c["id"] for c in found["cases"]] == ["mmlu-pro/smoke-biology-001"]
    assert client.get("/api/datasets/mmlu-pro/cases?page=2").json()["cases"] == []
    rag = client.get("/api/datasets/rag-smoke/cases")
    cases = rag.json()["cases"]
    assert len(cases) == 25 and rag.json()["pages"] == 2
    assert cases[0]["prompt"] == "Which command promotes the Frankfurt replica of ledger-db?"
    assert cases[0]["tags"] == ["lexical", "runbook"]
    assert "expected_note_ids" not in rag.text and "n01-b3" not in rag.text
    agent = client.get("/api/datasets/agent-smoke/cases").text
    assert "expected_tool_calls" not in agent and "required_substrings" not in agent


def test_cases_filter_by_benchmark_and_group(client):
    """``benchmark`` and ``group`` (the subject) keep only the cases with exactly that value,
    with ``q`` and the 25-a-page pages counted over what is left (issue 46, point 12)."""
    detail = client.get("/api/datasets/hle").json()
    assert detail["benchmarks"] == [{"benchmark": "hle", "cases": 4}]
    url = "/api/datasets/hle/cases"
    math = client.get(url, params={"group": "Math"}).json()
    assert math["total"] == 3 == len(math["cases"]) and math["pages"] == 1
    assert {c["group"] for c in math["cases"]} == {"Math"}
    medicine = client.get(url, params={"group": "Biology/Medicine", "benchmark": "hle"}).json()
    assert [c["group"] for c in medicine["cases"]] == ["Biology/Medicine"]
    assert client.get(url, params={"group": "math"}).json()["total"] == 0  # exact, not a search
    assert client.get(url, params={"benchmark": "mmlu-pro"}).json() == {
        "cases": [], "page": 1, "pages": 0, "total": 0}  # fmt: skip
    rag = client.get("/api/datasets/rag-smoke/cases", params={"benchmark": "rag-smoke"}).json()
    assert rag["total"] == 28 and len(rag["cases"]) == 25 and rag["pages"] == 2
    assert_error(client.get(url, params={"group": "x" * 201}), 422, "BENCHMARK_INVALID_REQUEST")
    parameters = client.get("/openapi.json").json()["paths"]["/api/datasets/{dataset_id}/cases"]
    assert {"benchmark", "group"} <= {p["name"] for p in parameters["get"]["parameters"]}


def test_targets_carry_no_credentials(client):
    response = client.get("/api/targets")
    targets = {t["id"]: t for t in response.json()["targets"]}
    assert targets["sim-large"] == {"id": "sim-large", "kind": "single", "model": "sim-large",
                                    "simulated": True, "session_mode": "stateless", "priced": True}  # fmt: skip
    assert targets["remote"]["priced"] is False and targets["remote"]["simulated"] is False
    assert (
        "models.example.invalid" not in response.text and "REMOTE_SECRET_KEY" not in response.text
    )
    assert "base_url" not in response.text


def test_plan_review_creates_nothing(client, api):
    before = client.get("/api/runs").json()["total"]
    response = client.post("/api/plans", json={"benchmarks": ["mmlu-pro"], "limit": 2})
    assert response.status_code == 200, response.text
    review = response.json()
    assert review["cells"] == 4 and review["benchmarks"] == [{"benchmark": "mmlu-pro", "cases": 2}]
    assert [t["id"] for t in review["targets"]] == ["sim-large", "sim-small"]
    assert len(review["plan_sha256"]) == 64 and review["profile"] == "smoke"
    assert client.get("/api/runs").json()["total"] == before
    assert all(r.plan_sha256 != review["plan_sha256"] for r in api.service.store().list_runs())


def test_run_created_through_the_api_completes_and_pages(client, two_runs):
    run = two_runs[0]
    assert run["status"] == "completed" and run["planned_cells"] == 4
    assert run["progress"] == {"completed": 4, "failed": 0, "running": 0, "pending": 0}
    assert run["name"] == "base" and run["mode"] == "live" and run["profile"] == "smoke"
    assert [t["model"] for t in run["targets"]] == ["sim-large", "sim-small"]
    run_id = run["id"]
    report = client.get(f"/api/runs/{run_id}/report").json()
    assert report["run_id"] == run_id and report["status"] == "completed"
    first = client.get(f"/api/runs/{run_id}/results", params={"limit": 3}).json()
    assert len(first["results"]) == 3 and first["next_cursor"] is not None
    rest = client.get(f"/api/runs/{run_id}/results", params={"after": first["next_cursor"]}).json()
    assert len(rest["results"]) == 1 and rest["next_cursor"] is None
    shown = {(c["case_id"], c["target_id"]): c["latency_s"] for c in report["cells"]}
    for row in first["results"] + rest["results"]:  # the latency the report shows, per cell
        assert row["answer_latency_s"] == shown[row["case_id"], row["target_id"]] is not None
    calls = client.get(f"/api/runs/{run_id}/calls").json()
    assert len(calls["calls"]) == 4 and "request" not in calls["calls"][0]
    call_id = calls["calls"][0]["id"]
    receipt = client.get(f"/api/runs/{run_id}/calls/{call_id}").json()["call"]
    assert receipt["id"] == call_id and "request" in receipt
    evidence = client.get(f"/api/runs/{run_id}/calls/{call_id}/evidence")
    assert evidence.headers["content-type"].startswith("text/plain")
    assert evidence.text.startswith("data: ") and "[DONE]" in evidence.text
    assert client.get(f"/api/runs/{run_id}/calls?active=true").json()["calls"] == []
    events = client.get(f"/api/runs/{run_id}/events/page", params={"limit": 2}).json()
    assert [e["kind"] for e in events["events"]][:1] == ["created"]
    assert events["next_cursor"] == events["events"][1]["seq"]
    assert client.get(f"/api/runs/{run_id}/recipes").json() == {"recipes": []}
    other = two_runs[1]["id"]
    assert_error(client.get(f"/api/runs/{other}/calls/{call_id}"), 404, "BENCHMARK_CALL_NOT_FOUND")


def test_runs_list_filters_and_paging(client, two_runs):
    listed = client.get("/api/runs", params={"name": "cand"}).json()
    assert [r["id"] for r in listed["runs"]] == [two_runs[1]["id"]] and listed["total"] == 1
    by_model = client.get("/api/runs", params={"model": "SIM-SMALL", "status": "completed"}).json()
    assert {two_runs[0]["id"], two_runs[1]["id"]} <= {r["id"] for r in by_model["runs"]}
    assert client.get("/api/runs", params={"mode": "preview"}).json() == {"runs": [], "total": 0}
    page = client.get("/api/runs", params={"limit": 1}).json()
    assert len(page["runs"]) == 1 and page["total"] >= 2


def test_idempotency_key_returns_the_same_run(client, two_runs):
    again = client.post("/api/runs", json={"benchmarks": ["mmlu-pro"], "limit": 2, "name": "base",
                                           "idempotency_key": "pair-base"})  # fmt: skip
    assert again.status_code == 200 and again.json()["run"]["id"] == two_runs[0]["id"]
    other = client.post("/api/runs", json={"benchmarks": ["mmlu-pro"], "limit": 3,
                                           "idempotency_key": "pair-base"})  # fmt: skip
    assert_error(other, 409, "BENCHMARK_PLAN_INVALID")


def test_two_clients_creating_with_one_key_at_once_get_one_run(api):
    body = {"benchmarks": ["mmlu-pro"], "limit": 2, "idempotency_key": "at-once"}
    before = httpx.get(f"{api.base_url}/api/runs", timeout=10).json()["total"]
    start = threading.Barrier(2)
    answers: list[httpx.Response] = []

    def post() -> None:
        with httpx.Client(base_url=api.base_url, timeout=60) as http:
            start.wait()
            answers.append(http.post("/api/runs", json=body))

    posters = [threading.Thread(target=post) for _ in range(2)]
    for thread in posters:
        thread.start()
    for thread in posters:
        thread.join()
    assert sorted(a.status_code for a in answers) == [200, 202], [a.text for a in answers]
    (run_id,) = {a.json()["run"]["id"] for a in answers}
    with httpx.Client(base_url=api.base_url, timeout=30) as http:
        done = wait_for(http, run_id, TERMINAL)
        assert done["status"] == "completed"
        assert done["progress"]["completed"] == done["planned_cells"] > 0
        assert http.get("/api/runs").json()["total"] == before + 1  # one run was made


def test_events_stream_resumes_without_gaps_or_repeats(client, api):
    run = create(client, **SLOW, limit=3, idempotency_key="sse")
    url = f"/api/runs/{run['id']}/events"
    received = []
    with client.stream("GET", url) as stream:
        assert stream.headers["content-type"].startswith("text/event-stream")
        for event in sse_events(stream.iter_lines()):
            received.append(event)
            if sum("id" in e for e in received) == 3:
                break  # the client disconnects mid-run
    last = [e["id"] for e in received if "id" in e][-1]
    with client.stream("GET", url, headers={"Last-Event-ID": last}) as stream:
        received += list(sse_events(stream.iter_lines()))
    ids = [int(e["id"]) for e in received if "id" in e]
    assert ids == sorted(set(ids))
    store = api.service.store()
    assert ids == [e["seq"] for e in store.events(run["id"], limit=10_000)]
    assert received[-1]["event"] == "RunCompleted"
    assert json.loads(received[-1]["data"])["status"] == "completed"
    names = [e["event"] for e in received]
    assert names[0] == "RunCreated" and names.count("RunStarted") == 1
    assert names.count("CaseCompleted") == 3 and names.count("CallSent") == 3
    done = [json.loads(e["data"]) for e in received if e["event"] == "CaseCompleted"]
    assert all(d["correct"] is True and d["answer_status"] == "answered" for d in done)
    assert all(d["cost_usd"] > 0 and d["subject_latency_s"] >= 0.4 for d in done)  # sim-slow
    assert not any("answer" in d or "code" in d for d in done)
    with client.stream("GET", url, params={"after_sequence": ids[-1]}) as stream:
        assert list(sse_events(stream.iter_lines())) == []  # terminal and all delivered
    with client.stream("GET", url, params={"after_sequence": ids[-2]}) as stream:
        assert [e["id"] for e in sse_events(stream.iter_lines())] == [str(ids[-1])]


def test_cancel_then_recover_the_undispatched_cells(client):
    run = create(client, **LONG, idempotency_key="to-cancel")
    wait_for(client, run["id"], {"running"} | TERMINAL)
    assert client.get(f"/api/runs/{run['id']}/report").json()["run_id"] == run["id"]
    response = client.post(f"/api/runs/{run['id']}/cancel")
    assert response.status_code == 200 and response.json()["run"]["id"] == run["id"]
    ended = wait_for(client, run["id"], TERMINAL)
    assert ended["status"] == "cancelled" and ended["progress"]["completed"] < 50
    plan = client.get(f"/api/runs/{run['id']}/recovery-plan").json()
    assert len(plan["eligible_cells"]) >= 2
    plan["selected_cells"] = plan["eligible_cells"][:2]
    body = {"plan": plan, "idempotency_key": "recover-cancelled"}
    malformed = {**body, "plan": {**plan, "selected_cells": ["not-a-cell"]}}
    assert_error(client.post(f"/api/runs/{run['id']}/recover", json=malformed), 409,
                 "BENCHMARK_RECOVERY_REJECTED")  # fmt: skip
    started = client.post(f"/api/runs/{run['id']}/recover", json=body)
    assert started.status_code == 202, started.text
    child = started.json()["run"]
    assert child["parent_run_id"] == run["id"] and child["planned_cells"] == 2
    assert child["source"] == "service"
    finished = wait_for(client, child["id"], TERMINAL)
    assert finished["status"] == "completed" and finished["progress"]["completed"] == 2
    assert client.get(f"/api/runs/{child['id']}/log").json()["size"] > 0  # its own worker log
    again = client.post(f"/api/runs/{run['id']}/recover", json=body)
    assert again.status_code == 200 and again.json()["run"]["id"] == child["id"]


def test_capacity_refuses_when_every_slot_is_active(start_api):
    live = start_api(max_runs=1)
    with httpx.Client(base_url=live.base_url, timeout=30) as http:
        busy = create(http, **LONG, idempotency_key="busy")
        assert_error(http.post("/api/runs", json={"benchmarks": ["mmlu-pro"], "limit": 1}), 429,
                     "BENCHMARK_CAPACITY_EXCEEDED")  # fmt: skip
        assert http.get("/api/health").json()["active_runs"] == 1
        http.post(f"/api/runs/{busy['id']}/cancel")
        live.service.wait(busy["id"], 180)
        fresh = create(http, limit=1, idempotency_key="after")
        assert list(live.service._registry) == [fresh["id"]]  # the ended run left memory …
        listed = {r["id"] for r in http.get("/api/runs").json()["runs"]}
        assert {busy["id"], fresh["id"]} <= listed  # … never the store
        wait_for(http, fresh["id"], TERMINAL)


def test_error_codes_and_no_tracebacks(client, api):
    assert_error(client.get("/api/runs/run-nope"), 404, "BENCHMARK_RUN_NOT_FOUND")
    assert_error(client.get("/api/runs/run-nope/events"), 404, "BENCHMARK_RUN_NOT_FOUND")
    assert_error(client.post("/api/runs/run-nope/cancel"), 404, "BENCHMARK_RUN_NOT_FOUND")
    assert_error(client.get("/api/datasets/no-such-set"), 404, "BENCHMARK_DATASET_NOT_FOUND")
    assert_error(client.get("/api/datasets/.hidden"), 404, "BENCHMARK_DATASET_NOT_FOUND")
    assert_error(client.post("/api/plans", json={"benchmarks": ["no-such-set"]}), 404,
                 "BENCHMARK_DATASET_NOT_FOUND")  # fmt: skip
    assert_error(client.post("/api/plans", json={"targets": ["nobody"]}), 422,
                 "BENCHMARK_PLAN_INVALID")  # fmt: skip
    assert_error(client.get("/api/runs", params={"limit": 501}), 422, "BENCHMARK_INVALID_REQUEST")
    assert_error(client.get("/api/runs/x/results?limit=0"), 422, "BENCHMARK_INVALID_REQUEST")
    huge = client.post("/api/plans", json={"name": "x" * 100_000})
    assert_error(huge, 422, "BENCHMARK_INVALID_REQUEST")
    assert len(huge.text) < 1000
    assert_error(client.post("/api/plans", content=b"{not json"), 422, "BENCHMARK_INVALID_REQUEST")
    assert_error(client.post("/api/plans", json={"surprise": 1}), 422, "BENCHMARK_INVALID_REQUEST")
    assert_error(client.get("/api/runs/x/events", headers={"Last-Event-ID": "abc"}), 400,
                 "BENCHMARK_INVALID_REQUEST")  # fmt: skip
    (api.project / "suites" / "broken-set.json").write_text('{"dataset_id": "broken-set", ')
    assert_error(client.get("/api/datasets/broken-set"), 422, "BENCHMARK_DATASET_INVALID")
    assert_error(client.post("/api/plans", json={"benchmarks": ["broken-set"]}), 422,
                 "BENCHMARK_DATASET_INVALID")  # fmt: skip
    assert "broken-set" not in {d["id"] for d in client.get("/api/datasets").json()["datasets"]}


def test_unexpected_failure_is_a_generic_500(start_api, caplog, monkeypatch):
    live = start_api()

    def broken() -> None:
        raise RuntimeError("secret detail")

    monkeypatch.setattr(live.service, "store", broken)
    try:
        with caplog.at_level("ERROR", logger="pytest_srbench.service"):
            response = httpx.get(f"{live.base_url}/api/runs", timeout=10)
    finally:
        # its reaper would go on failing (and logging) beside later tests
        live.service.close()
    assert_error(response, 500, "BENCHMARK_INTERNAL")
    assert "secret detail" not in response.text
    assert any(r.exc_info and "secret detail" in str(r.exc_info[1]) for r in caplog.records)


def test_token_guards_the_api(start_api):
    live = start_api(token="s3cret-token")
    url = f"{live.base_url}/api/runs"
    assert_error(httpx.get(url), 401, "BENCHMARK_UNAUTHORIZED")
    wrong = httpx.get(url, headers={"Authorization": "Bearer nope"})
    assert_error(wrong, 401, "BENCHMARK_UNAUTHORIZED")
    assert httpx.get(url, headers={"Authorization": "Bearer s3cret-token"}).status_code == 200
    assert httpx.get(f"{live.base_url}/api/health").status_code == 200
    assert httpx.get(f"{live.base_url}/openapi.json").status_code == 200
    for host in ("0.0.0.0", "192.168.1.4", "::", "example.org"):
        with pytest.raises(BindError, match="SRBENCH_SERVICE_TOKEN"):
            check_bind(host, None)
    for host in ("127.0.0.1", "127.8.9.1", "::1", "localhost"):
        check_bind(host, None)
    check_bind("0.0.0.0", "a-token")


def test_compare_two_runs_as_json_and_csv(client, two_runs):
    base, cand = (run["id"] for run in two_runs)
    response = client.get("/api/compare", params={"baseline": base, "candidate": cand})
    assert response.status_code == 200, response.text
    result = response.json()
    assert result["baseline_run_id"] == base
    assert [c["candidate_run_id"] for c in result["candidates"]] == [cand]
    csv = client.get("/api/compare", params={"baseline": base, "candidate": cand, "format": "csv"})
    assert csv.headers["content-type"].startswith("text/csv")
    assert csv.headers["content-disposition"] == f'attachment; filename="compare-{base}.csv"'
    header, *rows = csv.text.splitlines()
    assert header.startswith("baseline_run_id,candidate_run_id,") and len(rows) == 2
    assert_error(client.get("/api/compare", params={"baseline": base, "candidate": "/etc/passwd"}),
                 404, "BENCHMARK_RUN_NOT_FOUND")  # fmt: skip
    assert_error(client.get("/api/compare", params={"baseline": base, "candidate": base}), 422,
                 "BENCHMARK_COMPARISON_INVALID")  # fmt: skip
    assert_error(client.get("/api/compare", params={"baseline": base}), 422,
                 "BENCHMARK_INVALID_REQUEST")  # fmt: skip


def test_recovery_plan_of_a_completed_run(client, two_runs):
    run_id = two_runs[0]["id"]
    plan = client.get(f"/api/runs/{run_id}/recovery-plan").json()
    assert plan["parent_run_id"] == run_id and plan["eligible_cells"] == []
    assert len(plan["excluded"]) == 4
    assert {e["reason"] for e in plan["excluded"]} == {"completed_evidence_is_preserved"}
    assert client.get(f"/api/runs/{run_id}/recovery-plan?mode=failed").status_code == 200
    assert_error(client.get(f"/api/runs/{run_id}/recovery-plan?mode=all"), 422,
                 "BENCHMARK_INVALID_REQUEST")  # fmt: skip
    refused = client.post(f"/api/runs/{run_id}/recover",
                          json={"plan": plan, "idempotency_key": "recover-1"})  # fmt: skip
    assert_error(refused, 409, "BENCHMARK_RECOVERY_REJECTED")
    elsewhere = client.post(f"/api/runs/{two_runs[1]['id']}/recover",
                            json={"plan": plan, "idempotency_key": "recover-2"})  # fmt: skip
    assert_error(elsewhere, 409, "BENCHMARK_RECOVERY_REJECTED")


def test_reconcile_usage_returns_the_artifact(client, two_runs):
    run_id = two_runs[1]["id"]
    response = client.post(f"/api/runs/{run_id}/reconcile-usage")
    assert response.status_code == 200, response.text
    artifact = response.json()
    assert artifact["run_id"] == run_id and artifact["qualified"] is True
    again = client.post(f"/api/runs/{run_id}/reconcile-usage").json()
    assert again["id"] == artifact["id"]


def test_without_a_token_only_loopback_hosts_are_answered(api, start_api):
    """DNS rebinding: a page on evil.example resolving to 127.0.0.1 sends its own Host."""
    url = f"{api.base_url}/api/runs"
    before = httpx.get(url, timeout=10).json()["total"]
    rebound = httpx.post(url, json=SLOW, headers={"Host": "evil.example"}, timeout=10)
    assert_error(rebound, 403, "BENCHMARK_FORBIDDEN_HOST")
    assert_error(httpx.get(url, headers={"Host": "evil.example:8765"}), 403,
                 "BENCHMARK_FORBIDDEN_HOST")  # fmt: skip
    assert httpx.get(url, timeout=10).json()["total"] == before  # nothing was started
    for host in ("localhost", "127.0.0.1:1234", "[::1]:8765", "LOCALHOST:80"):
        assert httpx.get(f"{api.base_url}/api/health", headers={"Host": host}).status_code == 200
    guarded = start_api(token="t0ken-for-hosts")  # with a token, the token is the guard
    health = httpx.get(f"{guarded.base_url}/api/health", headers={"Host": "bench.example"})
    assert health.status_code == 200


@pytest.mark.parametrize("size", [2 << 20, 32 << 20])
def test_a_large_body_is_refused_before_it_is_read(api, size):
    before = httpx.get(f"{api.base_url}/api/runs", timeout=10).json()["total"]
    body = json.dumps({**SLOW, "benchmarks": ["mmlu-pro"] * (size // 12)}).encode()

    def pieces() -> Iterator[bytes]:  # sent as it is read: the client holds no copy
        for start in range(0, len(body), 1 << 16):
            yield body[start : start + (1 << 16)]

    headers = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    tracemalloc.start()  # the server runs in this process: what it allocates is counted
    try:
        response = httpx.post(f"{api.base_url}/api/runs", content=pieces(), headers=headers,
                              timeout=60)  # fmt: skip
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert_error(response, 413, "BENCHMARK_REQUEST_TOO_LARGE")
    assert peak < 4 << 20, f"refusing a {size >> 20} MiB body took {peak >> 20} MiB"
    assert httpx.get(f"{api.base_url}/api/runs", timeout=10).json()["total"] == before


def test_a_large_body_without_a_length_is_cut_off(api):
    def chunks() -> Iterator[bytes]:
        yield b'{"benchmarks": ['
        for _ in range(3000):
            yield b'"mmlu-pro", ' * 100
        yield b'"mmlu-pro"]}'

    response = httpx.post(f"{api.base_url}/api/runs", content=chunks(), timeout=60,
                          headers={"Content-Type": "application/json"})  # fmt: skip
    assert_error(response, 413, "BENCHMARK_REQUEST_TOO_LARGE")


def test_a_worker_that_ends_before_taking_its_run_fails_it_with_the_reason(start_api, monkeypatch):
    live = start_api()
    monkeypatch.setenv("PYTEST_ADDOPTS", "--srbench-limits=nonsense")  # the worker refuses
    with httpx.Client(base_url=live.base_url, timeout=30) as http:
        run = create(http, **SLOW, limit=1, idempotency_key="refused-worker")
        failed = wait_for(http, run["id"], TERMINAL, timeout=90)
        assert failed["status"] == "failed" and failed["error_code"] == "BENCHMARK_RUN_FAILED"
        assert failed["error"].startswith("BENCHMARK_RUN_FAILED: the run's worker ended")
        assert "--srbench-limits: expected KEY=VALUE" in failed["error"]
        assert str(live.project) not in failed["error"]
        with http.stream("GET", f"/api/runs/{run['id']}/events") as stream:
            events = list(sse_events(stream.iter_lines()))  # ends: the run is terminal
        assert events[-1]["event"] == "RunFailed"
        ended = json.loads(events[-1]["data"])
        assert ended["error_code"] == "BENCHMARK_RUN_FAILED" and ended["error"] == failed["error"]
        log = http.get(f"/api/runs/{run['id']}/log").json()  # the worker's own words, no paths
        assert "--srbench-limits: expected KEY=VALUE" in log["text"]
        assert log["size"] > 0 and log["next_offset"] == log["size"]
        assert str(live.project) not in log["text"] and str(live.project.parent) not in log["text"]
        first = http.get(f"/api/runs/{run['id']}/log", params={"offset": 0, "limit": 100}).json()
        assert first["offset"] == 0 and 0 < first["next_offset"] <= 100
        whole = http.get(f"/api/runs/{run['id']}/log", params={"offset": 0}).json()
        assert first["text"].endswith("\n") and whole["text"].startswith(first["text"])


def test_a_run_without_a_worker_log_reads_as_empty(start_api):
    from pytest_srbench.service.worker import RunRequest

    live = start_api()
    manifest = live.service.freeze(RunRequest(benchmarks=["mmlu-pro"], limit=1))
    live.service.store().create_run("run-made-by-pytest", manifest)  # no worker, no log
    with httpx.Client(base_url=live.base_url, timeout=30) as http:
        empty = http.get("/api/runs/run-made-by-pytest/log").json()
        assert empty == {"text": "", "offset": 0, "next_offset": 0, "size": 0}
        assert_error(http.get("/api/runs/run-nope/log"), 404, "BENCHMARK_RUN_NOT_FOUND")
        assert_error(http.get("/api/runs/run-made-by-pytest/log?limit=65537"), 422,
                     "BENCHMARK_INVALID_REQUEST")  # fmt: skip


def process_group(leader: int) -> list[int]:
    """The live processes of a process group (from /proc)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[2]) == leader and fields[0] != "Z":
            members.append(int(stat.parent.name))
    return members


def test_a_killed_worker_ends_its_run_interrupted_and_takes_its_simulator(start_api):
    live = start_api()
    with httpx.Client(base_url=live.base_url, timeout=30) as http:
        run = create(http, **LONG, idempotency_key="killed-worker")
        wait_for(http, run["id"], {"running"}, timeout=120)
        worker = live.service._registry[run["id"]].process  # type: ignore[attr-defined]
        deadline = time.monotonic() + 60
        while len(process_group(worker.pid)) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)  # the worker and the simulator it started
        assert len(process_group(worker.pid)) >= 2
        os.kill(worker.pid, signal.SIGKILL)
        ended = wait_for(http, run["id"], TERMINAL, timeout=30)
        assert ended["status"] == "interrupted" and ended["error_code"] == "BENCHMARK_RUN_FAILED"
        deadline = time.monotonic() + 15
        while process_group(worker.pid) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert process_group(worker.pid) == []  # nothing of the worker is left running
        health = http.get("/api/health").json()
        assert health["active_runs"] == 0  # its slot is free again


def test_a_request_naming_too_many_benchmarks_is_refused_without_a_run(api):
    url = f"{api.base_url}/api/runs"
    before = httpx.get(url, timeout=10).json()["total"]
    response = httpx.post(url, json={**SLOW, "benchmarks": ["mmlu-pro"] * 300}, timeout=30)
    assert_error(response, 422, "BENCHMARK_INVALID_REQUEST")
    assert "at most 256" in response.json()["error"]["message"]
    assert httpx.get(url, timeout=10).json()["total"] == before


def test_a_worker_that_cannot_start_fails_its_run_at_once(start_api, monkeypatch):
    live = start_api()

    def cannot_start(args, log):
        raise OSError(errno.E2BIG, "Argument list too long")

    monkeypatch.setattr(live.service, "_start", cannot_start)
    with httpx.Client(base_url=live.base_url, timeout=30) as http:
        response = http.post("/api/runs", json={**SLOW, "limit": 1})
        assert_error(response, 503, "BENCHMARK_RUN_FAILED")
        (run,) = http.get("/api/runs").json()["runs"]
        assert run["status"] == "failed"
        assert run["error"] == (
            "BENCHMARK_RUN_FAILED: the run's worker could not start (Argument list too long)"
        )


@pytest.fixture
def empty_index_service() -> Iterator[str]:
    """A real HTTP retrieval service whose index is empty (it cannot serve any target)."""

    class EmptyIndex(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = json.dumps({"blocks": 0, "fts_rows": 0, "vector_rows": 0}).encode()
            self.send_response(200 if self.path == "/retrieval/index" else 404)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), EmptyIndex)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()


def test_an_incompatible_index_is_refused_at_creation(start_api, empty_index_service):
    live = start_api()
    config = live.project / "pyproject.toml"
    config.write_text(
        config.read_text()
        + f"""
[[tool.srbench.targets]]
id = "my-search"
kind = "retrieval"
model = "notes-fts"
base_url = "{empty_index_service}"
retrieval = {{ mode = "fts" }}
"""
    )
    request = {"benchmarks": ["rag-smoke"], "targets": ["my-search"]}
    with httpx.Client(base_url=live.base_url, timeout=30) as http:
        for path in ("/api/plans", "/api/runs"):
            refused = http.post(path, json=request)
            assert_error(refused, 409, "BENCHMARK_INDEX_INCOMPATIBLE")
            assert "target my-search: the index is empty" in refused.json()["error"]["message"]
        assert http.get("/api/runs").json()["total"] == 0  # no run waits for a worker


def test_the_plan_review_shows_a_retrieval_targets_search_settings(client):
    review = client.post("/api/plans", json={"benchmarks": ["rag-smoke"],
                                             "targets": ["sim-rag-hybrid"]})  # fmt: skip
    assert review.status_code == 200, review.text
    (target,) = review.json()["targets"]
    params = target["request_params"]
    assert params["mode"] == "hybrid" and params["top_k"] >= 1 and params["rrf_k"] == 60
    assert "reranker" in params  # the effective settings, defaults included
