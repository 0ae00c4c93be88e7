"""``srbench real serve``: llama-server on the port asked for, LiteLLM's proxy in front of it
with ``--litellm``, both stopped by Ctrl-C; the proxy's key only from the environment."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request

import pytest

from pytest_srbench.managed.common import free_port
from pytest_srbench.managed.proxies import MASTER_KEY_ENV
from tests.real_parts import require_litellm, require_llama_parts

STARTUP_S = 300  # LiteLLM imports for a minute on a loaded two-core machine


def serve(*args: str, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "pytest_srbench", "real", "serve", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def read_until(process: subprocess.Popen[str], marker: str) -> list[str]:
    """The lines printed until ``marker`` (or the process ended)."""
    assert process.stdout is not None
    lines = []
    deadline = time.monotonic() + STARTUP_S
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        lines.append(line)
        if marker in line:
            return lines
    raise AssertionError(f"no {marker!r}; printed: {lines}; stderr: {process.stderr}")


def chat(url: str, model: str, key: str | None = None) -> dict:
    body = {"model": model, "max_tokens": 4, "messages": [{"role": "user", "content": "Hi"}]}
    headers = {"Content-Type": "application/json"}
    if key:
        headers["Authorization"] = f"Bearer {key}"
    request = urllib.request.Request(
        url + "/chat/completions", data=json.dumps(body).encode(), headers=headers
    )
    with urllib.request.urlopen(request, timeout=300) as response:
        return json.loads(response.read())


def test_serving_the_proxy_needs_its_key_from_the_environment():
    env = {k: v for k, v in os.environ.items() if k != MASTER_KEY_ENV}
    process = serve("--litellm", env=env)
    out, err = process.communicate(timeout=60)
    assert process.returncode == 2 and out == ""
    assert f"set {MASTER_KEY_ENV}" in err and len(err.strip().splitlines()) == 1


@pytest.mark.realmodel
@pytest.mark.xdist_group("real-servers")
def test_real_serve_on_a_port_then_with_the_litellm_proxy_in_front():
    require_llama_parts()
    port = free_port()
    process = serve("--port", str(port), "--threads", "1", "--slots", "1", "--context", "1024")
    try:
        lines = read_until(process, "Ctrl-C stops them")
        assert f"on http://127.0.0.1:{port}/v1" in lines[0]
        assert chat(f"http://127.0.0.1:{port}/v1", "smollm2-135m")["usage"]["completion_tokens"] > 0
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()
    with pytest.raises(OSError):  # stopped with the command
        urllib.request.urlopen(f"http://127.0.0.1:{port}/health", timeout=5)
    require_litellm()
    key = "sk-srbench-test-" + os.urandom(6).hex()
    proxy_port = free_port()
    process = serve("--threads", "1", "--slots", "1", "--context", "1024", "--litellm",
                    "--litellm-port", str(proxy_port), env={**os.environ, MASTER_KEY_ENV: key})  # fmt: skip
    try:
        lines = read_until(process, "Ctrl-C stops them")
        assert not any(key in line for line in lines)  # the key is never printed
        proxied = chat(f"http://127.0.0.1:{proxy_port}/v1", "smol", key)
        assert proxied["model"] == "smol" and proxied["usage"]["completion_tokens"] > 0
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=60) == 0
    finally:
        process.kill()
