"""A managed llama-server sized from the plan, against the real llama-server: the context per
slot holds the plan's longest prompt (in the model's own tokens) plus max_tokens, a case that
cannot fit is refused before the run, and so are time limits the measured throughput cannot
meet."""

from __future__ import annotations

import json
import urllib.request

import pytest

from pytest_srbench.app.config import ManagedServerConfig
from pytest_srbench.app.managed_servers import ServerRefused, longest_cases, start_for_plan
from pytest_srbench.core.models import Case, Limits, Message
from tests.real_parts import require_llama_parts

GRID = " ".join(f"[{i % 10}, {i * 7 % 10}, {i * 3 % 10}]" for i in range(250))


def real(test):  # type: ignore[no-untyped-def]
    """Marks a test that starts the real llama-server."""
    return pytest.mark.realmodel(pytest.mark.xdist_group("real-servers")(test))


def case(native: str, text: str, benchmark: str = "arc-agi-2") -> Case:
    return Case(id=f"{benchmark}/{native}", benchmark=benchmark, answer="A",
                messages=[Message(role="user", content=text)])  # fmt: skip


def test_the_longest_cases_of_each_benchmark_are_the_ones_counted():
    cases = [case("a", "x" * 10), case("b", "x" * 30), case("c", "x" * 20),
             case("d", "x" * 5, "mmlu-pro")]  # fmt: skip
    assert [c.id for c in longest_cases(cases, per_benchmark=2)] == [
        "arc-agi-2/b", "arc-agi-2/c", "mmlu-pro/d",
    ]  # fmt: skip


@real
def test_a_prompt_longer_than_the_old_shared_context_is_served_whole(tmp_path):
    require_llama_parts()
    long = case("long", f"Continue the sequence:\n{GRID}")  # ~2,300 tokens: past -c 2048
    started = start_for_plan(
        "smol", "smollm2-135m", ManagedServerConfig(threads=1, slots=2),
        [long, case("short", "Say hi.")], max_tokens=8,
        limits=Limits(idle_timeout_s=1200, total_timeout_s=1200, max_run_seconds=1800),
        concurrency=4, log_dir=tmp_path,
    )  # fmt: skip
    server = started.server
    try:
        size = started.size
        assert size.longest is not None and size.longest.case_id == "arc-agi-2/long"
        assert size.longest.tokens > 2048 and size.slots == 2
        assert size.context_per_slot >= size.longest.tokens + 8
        assert size.context_per_slot % 256 == 0 and size.context_per_slot <= 8192
        with urllib.request.urlopen(server.root_url + "/slots", timeout=10) as response:
            slots = json.loads(response.read())
        assert [slot["n_ctx"] for slot in slots] == [size.context_per_slot] * 2
        assert started.speed is not None and started.speed.prompt_per_s > 0
        body = {"model": "smollm2-135m", "max_tokens": 8,
                "messages": [message.model_dump() for message in long.messages]}  # fmt: skip
        request = urllib.request.Request(
            server.base_url + "/chat/completions", data=json.dumps(body).encode(),
            headers={"Content-Type": "application/json"},
        )  # fmt: skip
        with urllib.request.urlopen(request, timeout=1200) as response:
            answer = json.loads(response.read())
        # the server's own count of the prompt equals the one the sizing used
        assert answer["usage"]["prompt_tokens"] == size.longest.tokens
        assert "longest prompt arc-agi-2/long" in started.note("smol")
    finally:
        server.stop()


@real
def test_a_case_past_the_models_context_is_refused_before_the_run(tmp_path):
    require_llama_parts()
    with pytest.raises(ServerRefused) as refused:
        start_for_plan(
            "smol", "smollm2-135m", ManagedServerConfig(threads=1), [case("big", GRID)],
            max_tokens=7000, limits=Limits(), concurrency=1, log_dir=tmp_path,
        )  # fmt: skip
    message = str(refused.value)
    assert "case arc-agi-2/big needs" in message and "trained context of 8192" in message
    assert "[tool.srbench.targets.server] context =" in message
    # only the probe ran (and stopped): no server was left for the run
    assert not list(tmp_path.glob("llama-server-*.log"))


@real
def test_time_limits_the_measured_throughput_cannot_meet_are_refused(tmp_path):
    require_llama_parts()
    with pytest.raises(ServerRefused) as refused:
        start_for_plan(
            "smol", "smollm2-135m", ManagedServerConfig(threads=1, slots=4),
            [case("long", GRID)], max_tokens=8,
            limits=Limits(idle_timeout_s=1, total_timeout_s=2), concurrency=4, log_dir=tmp_path,
        )  # fmt: skip
    message = str(refused.value)
    assert "at the measured" in message and "arc-agi-2/long" in message
    assert "idle_timeout_s 1 and total_timeout_s 2" in message
    # the preset is advised only when its limits would be enough at the measured speed
    assert "raise idle_timeout_s and total_timeout_s in [tool.srbench.limits]" in message
    assert "slots = 1" in message  # four slots share the server


@real
def test_a_configured_context_past_the_trained_one_lifts_the_servers_cap(tmp_path):
    require_llama_parts()
    started = start_for_plan(
        "smol", "smollm2-135m", ManagedServerConfig(threads=1, slots=1, context=9216),
        [case("short", "Say hi.")], max_tokens=8, limits=Limits(), concurrency=1,
        log_dir=tmp_path,
    )  # fmt: skip
    server = started.server
    try:
        assert started.size.chosen == "configured" and started.size.context_per_slot == 9216
        # llama-server caps a slot at the trained 8192 tokens unless the model's context
        # length is overridden for this server
        with urllib.request.urlopen(server.root_url + "/slots", timeout=10) as response:
            assert [slot["n_ctx"] for slot in json.loads(response.read())] == [9216]
        with urllib.request.urlopen(server.base_url + "/models", timeout=10) as response:
            assert json.loads(response.read())["data"][0]["meta"]["n_ctx_train"] == 9216
    finally:
        server.stop()
