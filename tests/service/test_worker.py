"""The service's run worker: a request freezes to the same plan pytest freezes, the queued run
is adopted by the pytest worker (same id, same plan), and keys are idempotent."""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_srbench.service.worker import RunRequest, RunService, ServiceError

pytestmark = pytest.mark.slow


@pytest.fixture
def service(tmp_path: Path) -> RunService:
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text("[tool.srbench]\n")
    return RunService(project, project / ".srbench", max_runs=2)


def test_submitted_run_is_adopted_by_its_pytest_worker(service):
    request = RunRequest(benchmarks=["mmlu-pro"], limit=2, sampling={"temperature": 0.0},
                         name="service-smoke")  # fmt: skip
    review = service.review(request)
    assert review["cells"] == 4 and review["sampling"]["temperature"] == 0
    assert service.store().list_runs() == []  # a review creates nothing
    run, created = service.submit(request, "key-1")
    assert created and run.status == "queued" and run.plan_sha256 == review["plan_sha256"]
    assert service.wait(run.id, 120) == 0
    store = service.store()
    assert [r.id for r in store.list_runs()] == [run.id]  # adopted, not a second run
    finished = store.require_run(run.id)
    assert finished.status == "completed" and finished.plan_sha256 == review["plan_sha256"]
    assert store.status_counts(run.id) == {"completed": 4}
    assert store.get_runner(run.id)["source"] == "service"
    assert store.get_manifest(run.id).name == "service-smoke"
    again, created_again = service.submit(request, "key-1")
    assert again.id == run.id and not created_again
    other = RunRequest(benchmarks=["mmlu-pro"], limit=3)
    with pytest.raises(ServiceError) as refused:
        service.submit(other, "key-1")
    assert refused.value.status == 409


def test_requests_that_cannot_freeze_have_public_codes(service):
    with pytest.raises(ServiceError) as unknown:
        service.review(RunRequest(benchmarks=["no-such-dataset"]))
    assert unknown.value.code == "BENCHMARK_DATASET_NOT_FOUND" and unknown.value.status == 404
    with pytest.raises(ServiceError) as bad_target:
        service.review(RunRequest(targets=["nobody"]))
    assert (
        bad_target.value.code == "BENCHMARK_PLAN_INVALID" and "nobody" in bad_target.value.message
    )
