"""Every user mistake is one clear line, never a traceback, never a secret (real pytest
sessions in subprocesses, a real HTTP server on 127.0.0.1, real SQLite stores)."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from aiohttp import web

from tests.permissions import make_read_only, make_writable, unprivileged
from tests.plugin.endpoint_helpers import ThreadedEndpoint, write_stream

pytestmark = pytest.mark.slow

KEY = "sk-echo-" + "5f3a9c2e7b1d4e6f8a0b2c4d6e8f0a1b"  # fixed: greppable, never a real key
PASSWORD = "hunter2-not-for-logs"
RUN = ("-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-benchmark=mmlu-pro")


def assert_one_clear_line(result: pytest.RunResult, expected: str) -> str:
    """The session refused with exit 4 and one ``ERROR: pytest-srbench: …`` line."""
    output = result.stdout.str() + "\n" + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output
    assert "INTERNALERROR" not in output and "Traceback" not in output, output
    lines = [line for line in output.splitlines() if "pytest-srbench:" in line]
    assert len(lines) == 1, output
    assert lines[0].startswith("ERROR: pytest-srbench: ") and expected in lines[0], lines
    return lines[0]


def write_config(pytester: pytest.Pytester, text: str) -> None:
    (pytester.path / "srbench.toml").write_text(text)


# -- configuration mistakes ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("toml", "expected"),
    [
        ('[[targets]]\nid = "t"\nmodel = "m"\n', "target 't' needs a base_url"),
        (
            '[[targets]]\nid = "t"\nmodel = "m"\nbase_url = "htp:/nowhere"\n',
            "target 't': base_url must be an http(s) URL with a host",
        ),
        (
            f'[[targets]]\nid = "t"\nmodel = "m"\nbase_url = "http://me:{PASSWORD}@127.0.0.1:9/v1"\n',
            "target 't': base_url must not contain credentials",
        ),
        (  # malformed and with a password: still never printed
            f'[[targets]]\nid = "t"\nmodel = "m"\nbase_url = "http//me:{PASSWORD}@127.0.0.1/v1"\n',
            "target 't': base_url must not contain credentials",
        ),
        ('transport = "curl"\n', "unknown transport 'curl'; choose one of aiohttp, httpx-aiohttp"),
        (
            '[[targets]]\nid = "t"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
            '[[targets]]\nid = "t"\nmodel = "n"\nbase_url = "http://127.0.0.1:9/v1"\n',
            "target id 't' is defined more than once",
        ),
    ],
    ids=[
        "no-base-url",
        "malformed-url",
        "credentials",
        "malformed-credentials",
        "transport",
        "dup",
    ],
)
def test_a_configuration_mistake_is_one_line_without_the_secret(pytester, toml, expected):
    write_config(pytester, toml)
    result = pytester.runpytest_subprocess(*RUN, "--srbench-limit=1")
    line = assert_one_clear_line(result, expected)
    assert "srbench.toml" in line
    output = result.stdout.str() + "\n" + result.stderr.str()
    assert PASSWORD not in output and "me:" not in output
    assert not (pytester.path / ".srbench").exists()  # refused before anything was opened


def test_a_retrieval_target_whose_key_variable_is_unset_is_one_line(pytester, monkeypatch):
    monkeypatch.delenv("SRBENCH_TEST_UNSET_KEY", raising=False)
    write_config(
        pytester,
        '[[targets]]\nid = "r"\nkind = "retrieval"\nmodel = "m"\n'
        'base_url = "http://127.0.0.1:9/v1"\napi_key_env = "SRBENCH_TEST_UNSET_KEY"\n'
        'retrieval = { mode = "fts" }\n',
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=smoke", "--srbench-benchmark=rag-smoke",
        "--srbench-limit=1", "--srbench-target=r",
    )  # fmt: skip
    assert_one_clear_line(
        result,
        "target 'r': the environment variable SRBENCH_TEST_UNSET_KEY named by api_key_env "
        "is not set",
    )


def test_a_target_whose_key_variable_is_unset_is_refused_at_plan_time(pytester, monkeypatch):
    """Not one failed cell per case (``FFFF…``): one line naming the target and the variable,
    before the run exists and before any request."""
    monkeypatch.delenv("SRBENCH_TEST_NOPE_KEY", raising=False)
    (pytester.path / "pyproject.toml").write_text(
        '[tool.srbench]\ndefault_targets = ["gpt-mini"]\n\n[[tool.srbench.targets]]\n'
        'id = "gpt-mini"\nmodel = "m"\nbase_url = "http://127.0.0.1:9/v1"\n'
        'api_key_env = "SRBENCH_TEST_NOPE_KEY"\n[tool.srbench.targets.prices.m]\n'
        "input = 0.15\ncached_input = 0.075\ncache_write = 0.0\noutput = 0.60\n"
    )
    result = pytester.runpytest_subprocess(*RUN)
    assert_one_clear_line(
        result,
        "target 'gpt-mini': the environment variable SRBENCH_TEST_NOPE_KEY named by api_key_env "
        "is not set",
    )
    assert "FF" not in result.stdout.str()
    runs = pytester.path / ".srbench"
    assert not runs.exists() or not any(runs.glob("runs/*"))  # no run was created


def test_a_store_url_with_a_password_is_refused_and_never_printed(pytester):
    result = pytester.runpytest_subprocess(
        *RUN, "--srbench-limit=1", f"--srbench-store=postgresql://me:{PASSWORD}@db.example/x"
    )
    assert_one_clear_line(
        result, "--srbench-store: the store location postgresql://… holds a password: give it"
    )
    assert PASSWORD not in result.stdout.str() + "\n" + result.stderr.str()
    assert not (pytester.path / "postgresql:").exists()  # no folders made of the URL


# -- report paths ---------------------------------------------------------------------------


@pytest.mark.parametrize("flag", ["--srbench-json", "--srbench-html"])
def test_a_report_path_that_is_a_directory_is_refused_before_the_run(pytester, flag):
    result = pytester.runpytest_subprocess(*RUN, "--srbench-limit=1", f"{flag}=/")
    assert_one_clear_line(result, f"{flag}: cannot write /: it is a directory")
    assert not (pytester.path / ".srbench").exists()


def test_an_unwritable_report_path_keeps_the_run_and_prints_the_report(pytester):
    (pytester.path / "afile").write_text("not a folder")
    result = pytester.runpytest_subprocess(
        *RUN, "--srbench-limit=1", "--srbench-json=afile/r.json", "--srbench-html=afile/r.html"
    )
    output = result.stdout.str() + "\n" + result.stderr.str()
    assert result.ret == pytest.ExitCode.USAGE_ERROR, output
    assert "INTERNALERROR" not in output and "Traceback" not in output
    result.stdout.fnmatch_lines(["*srbench report*", "*sim-large (sim)*"])  # still printed
    problems = [line for line in output.splitlines() if "was not written" in line]
    assert len(problems) == 2, output
    for line, name in zip(problems, ("r.json", "r.html"), strict=True):
        assert f"cannot write {pytester.path / 'afile' / name}: " in line
        assert f"{pytester.path / 'afile'} is a file, not a folder" in line
    assert "JSON report:" not in output and "HTML report:" not in output
    (run_dir,) = (pytester.path / ".srbench" / "runs").iterdir()
    saved = json.loads((run_dir / "report.json").read_text())  # the run itself is saved
    assert saved["status"] == "completed" and run_dir.name in problems[0]
    assert (pytester.path / "afile").read_text() == "not a folder"


# -- the store ------------------------------------------------------------------------------


def test_a_read_only_store_refuses_a_run_in_one_line(pytester):
    first = pytester.runpytest_subprocess(*RUN, "--srbench-limit=1")
    assert first.ret == 0
    store = pytester.path / ".srbench"
    make_read_only(store)
    try:
        done = subprocess.run(
            unprivileged([sys.executable, "-m", "pytest", *RUN, "--srbench-limit=1"]),
            cwd=pytester.path,
            capture_output=True,
            text=True,
            timeout=300,
        )
    finally:
        make_writable(store)
    output = done.stdout + done.stderr
    assert done.returncode == pytest.ExitCode.USAGE_ERROR, output
    assert "Traceback" not in output and "INTERNALERROR" not in output
    (line,) = [line for line in output.splitlines() if "pytest-srbench:" in line]
    assert f"the store {store} is read-only" in line


@pytest.fixture
def locked_store(pytester: pytest.Pytester) -> Iterator[Path]:
    """A store whose write lock another connection holds (``BEGIN IMMEDIATE``) until the end."""
    assert pytester.runpytest_subprocess(*RUN, "--srbench-limit=1").ret == 0
    store = pytester.path / ".srbench"
    holder = sqlite3.connect(store / "journal.sqlite3", isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    try:
        yield store
    finally:
        holder.execute("ROLLBACK")
        holder.close()


def test_a_store_locked_longer_than_the_busy_timeout_is_one_line(
    pytester, locked_store, monkeypatch
):
    monkeypatch.setenv("SRBENCH_BUSY_TIMEOUT_S", "0.2")
    result = pytester.runpytest_subprocess(*RUN, "--srbench-limit=1")
    assert_one_clear_line(result, f"the store {locked_store} is locked by another process")


# -- API keys echoed by an endpoint ---------------------------------------------------------


class EchoServer(ThreadedEndpoint):
    """An OpenAI-compatible endpoint on 127.0.0.1 that echoes the Authorization header: the
    first request gets a 401 whose body and headers repeat it, later ones a stream whose
    headers and content repeat it."""

    async def handle(self, request: web.Request) -> web.StreamResponse:
        auth = request.headers.get("Authorization", "")
        echo = {"x-litellm-echo": auth, "www-authenticate": f"Bearer realm={auth}"}
        if self.requests == 1:
            body = {"error": {"message": f"invalid credentials: {auth}", "key": KEY}}
            return web.json_response(body, status=401, headers=echo)
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream", **echo})
        await response.prepare(request)
        chunks = [
            {"choices": [{"index": 0, "delta": {"content": f"Your key is {KEY}. "}}]},
            {"choices": [{"index": 0, "delta": {"content": "Answer: A"}}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": "stop"}]},
            {"choices": [], "usage": {"prompt_tokens": 12, "completion_tokens": 9}},
        ]
        return await write_stream(response, chunks, stream_id="echo", model="echo-model")


@pytest.fixture
def echo_server() -> Iterator[EchoServer]:
    server = EchoServer().start()
    try:
        yield server
    finally:
        server.stop()


def test_an_echoed_api_key_reaches_no_store_file_report_or_log(pytester, echo_server, monkeypatch):
    monkeypatch.setenv("ECHO_KEY", KEY)
    write_config(
        pytester,
        f"""
default_targets = ["echo"]
[[targets]]
id = "echo"
model = "echo-model"
base_url = "http://127.0.0.1:{echo_server.port}/v1"
api_key_env = "ECHO_KEY"
[targets.prices.echo-model]
input = 1.0
cached_input = 0.5
cache_write = 0.0
output = 2.0
""",
    )
    result = pytester.runpytest_subprocess(
        *RUN, "--srbench-limit=2", "-rA", "--srbench-json=out/report.json",
        "--srbench-html=out/report.html", "--junitxml=out/junit.xml",
    )  # fmt: skip
    output = result.stdout.str() + "\n" + result.stderr.str()
    assert echo_server.requests == 2  # one 401 echo, one stream echo
    assert result.ret == pytest.ExitCode.TESTS_FAILED, output  # the 401 cell could not be graded
    assert "could not be graded" in output and "Target HTTP 401" in output
    assert KEY not in output
    files = [path for path in pytester.path.rglob("*") if path.is_file()]
    store_files = [path for path in files if ".srbench" in path.parts]
    assert any(path.suffix == ".sse" for path in store_files)  # the evidence pack is there
    leaks = [str(path) for path in files if KEY.encode() in path.read_bytes()]
    assert leaks == []
    # the echoes did arrive and were replaced, in the evidence and in the receipts
    recorded = b"".join(path.read_bytes() for path in store_files)
    assert b"[REDACTED]" in recorded
    report = json.loads((pytester.path / "out" / "report.json").read_text())
    assert report["summary"]["targets"][0]["failed"] == 1
