"""The dashboard's pages as HTTP responses: each carries a Content-Security-Policy that pins its
one inline script by hash and allows no remote source, no page has an inline event handler,
and the server-rendered report pages need the API's token when one is set."""

from __future__ import annotations

import base64
import hashlib
import re
from pathlib import Path

import pytest

pytest.importorskip("httpx", reason="the test client needs httpx")
from fastapi.testclient import TestClient

from pytest_srbench.service.api import create_app
from pytest_srbench.service.worker import RunService

PAGES = ["/", "/new", "/datasets", "/datasets/mmlu-pro", "/runs/run-x", "/compare"]
SCRIPT = re.compile(r"<script>(.*?)</script>", re.S)


def client(tmp_path: Path, token: str | None = None) -> TestClient:
    (tmp_path / "pyproject.toml").write_text("[tool.srbench]\n")
    app = create_app(RunService(tmp_path, tmp_path / ".srbench"), token=token)
    return TestClient(app, base_url="http://127.0.0.1")  # without a token: loopback hosts only


@pytest.mark.parametrize("path", PAGES)
def test_each_page_pins_its_script_and_loads_nothing_remote(tmp_path, path):
    response = client(tmp_path).get(path)
    assert response.status_code == 200
    assert response.headers["content-type"].startswith("text/html")
    csp = response.headers["content-security-policy"]
    assert csp.startswith("default-src 'none';")
    assert "connect-src 'self'" in csp and "frame-ancestors 'none'" in csp
    assert "http" not in csp and "*" not in csp and "unsafe-eval" not in csp
    scripts = SCRIPT.findall(response.text)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert f"'sha256-{digest}'" in csp
    assert not re.search(r"\son[a-z]+\s*=", response.text)  # no inline event handler
    assert "innerHTML" not in scripts[0] and "insertAdjacentHTML" not in scripts[0]
    assert "http://" not in response.text and "https://" not in response.text


def test_page_parameters_are_escaped(tmp_path):
    response = client(tmp_path).get("/runs/%3Cscript%3Ealert(1)%22")
    assert response.status_code == 200
    assert "<script>alert(1)" not in response.text
    assert 'data-run-id="&lt;script&gt;alert(1)&#34;"' in response.text


def test_report_pages_answer_with_the_public_error_shape(tmp_path):
    web = client(tmp_path)
    missing = web.get("/runs/run-nope/report.html")
    assert missing.status_code == 404 and "BENCHMARK_RUN_NOT_FOUND" in missing.text
    assert "default-src 'none'" in missing.headers["content-security-policy"]
    invalid = web.get("/compare/report.html?baseline=run-nope")
    assert invalid.status_code == 422 and "BENCHMARK_INVALID_REQUEST" in invalid.text
    unknown = web.get("/compare/report.html?baseline=run-a&candidate=run-b")
    assert unknown.status_code == 404


def test_report_pages_need_the_token_when_the_api_has_one(tmp_path):
    web = client(tmp_path, token="s3cret")
    assert web.get("/").status_code == 200  # the pages hold no data; the API asks for it
    assert web.get("/api/runs").status_code == 401
    refused = web.get("/runs/run-nope/report.html")
    assert refused.status_code == 401 and "BENCHMARK_UNAUTHORIZED" in refused.text
    wrong = web.get("/runs/run-nope/report.html", headers={"Authorization": "Bearer nope"})
    assert wrong.status_code == 401
    allowed = web.get("/runs/run-nope/report.html", headers={"Authorization": "Bearer s3cret"})
    assert allowed.status_code == 404
