"""pytest-srbench against servers other people wrote: llama.cpp's llama-server with a real
model, LiteLLM's proxy in front of it, and llama-cpp-python's usage-less server."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from pytest_srbench.benchmarks.registry import default_registry
from pytest_srbench.core.models import Case, Limits, Message, Prices, Target
from pytest_srbench.core.plan.budget import Budget
from pytest_srbench.core.report.build import build_report
from pytest_srbench.datasets.suites import load_suite, shipped_suites_dir
from pytest_srbench.engine import Engine, EngineOptions
from pytest_srbench.engine.runtime import RunRuntime
from pytest_srbench.managed import llama, venvs
from pytest_srbench.managed.proxies import LIBRARY_ENV, MASTER_KEY_ENV
from pytest_srbench.render.terminal import render_summary
from pytest_srbench.store import GroupCommitWriter, open_store
from pytest_srbench.transport import make_transport
from tests.core.helpers import manifest, run
from tests.optional import part_missing

pytestmark = [pytest.mark.realmodel, pytest.mark.xdist_group("real-servers")]

REGISTRY = default_registry(with_entry_points=False)
FREE = Prices(input=0.0, cached_input=0.0, cache_write=0.0, output=0.0)
PROMPT = (
    "A long shared instruction that stays the same between requests, so that the server's "
    "prefix cache can reuse it. " * 6
)


def mcq(i: int, text: str | None = None) -> Case:
    body = (
        text
        or f"{PROMPT}\nQuestion {i}: which letter comes first in the alphabet?\n\nA. a\nB. b\nC. c\nD. d\n\nReturn only the letter of the correct answer."
    )
    return Case(id=f"mmlu-pro/r{i}", benchmark="mmlu-pro", messages=[Message(role="user", content=body)],
                answer="A", metadata={"letters": "ABCD"})  # fmt: skip


def drive(
    tmp_path,
    targets_urls,
    cases,
    *,
    concurrency=1,
    sampling=None,
    cost_policy="require_priced",
    keep_alive=False,  # llama-server closes the connection after each streamed answer
):
    targets = [target for target, _ in targets_urls]
    plan = manifest(
        cases,
        targets,
        sampling=sampling or {"max_tokens": 24},
        limits=Limits(idle_timeout_s=120.0),  # queued streams wait silently for a slot
        cost_policy=cost_policy,
    )
    store = open_store(tmp_path / "store")
    store.create_run("run-r", plan)
    runtime = RunRuntime(
        run_id="run-r", manifest=plan, store=store, writer=GroupCommitWriter(store),
        transport=make_transport(connections=concurrency, keep_alive=keep_alive), adapters=REGISTRY,
        base_urls={target.id: url for target, url in targets_urls}, budget=Budget(cap_usd=5),
    )  # fmt: skip
    engine = Engine(runtime, EngineOptions(concurrency=concurrency))
    engine.start([(case, target) for case in cases for target in targets])
    outcomes = {key: future.result(timeout=300) for key, future in engine.slots.items()}
    assert engine.join(60)
    return store, plan, outcomes


def test_llama_server_quirks_are_handled(tmp_path, llama_server):
    # the server ignores the requested model name: the receipt must record what answered
    dear = Prices(input=100.0, cached_input=100.0, cache_write=100.0, output=100.0)
    prices = {"no-such-model": dear, llama_server.alias: FREE}
    target = Target(id="smol", model="no-such-model", base_url=llama_server.base_url, prices=prices)
    cases = [mcq(0, PROMPT + "\nSay hello."), mcq(1, PROMPT + "\nSay hello.")]
    store, _, outcomes = drive(tmp_path, [(target, llama_server.base_url)], cases)
    assert {o.status for o in outcomes.values()} == {"completed"}
    first, second = store.calls("run-r")
    for call in (first, second):
        assert call["model"] == llama_server.alias and call["requested_model"] == "no-such-model"
        assert call["usage"]["output_tokens"] > 0
        assert call["cost_usd"] == 0.0  # priced as the model that answered, not the one asked for
        assert call["ttft_s"] is not None and 0 < call["ttft_s"] <= call["latency_s"]
        assert call["cache_read_reported"] is True
        assert call["server_timings"]["predicted_n"] >= 1  # llama.cpp's non-OpenAI timings object
        evidence = store.read_evidence(call["evidence"])
        assert b'"content":null' in evidence and b'"choices":[]' in evidence
    assert first["usage"]["cached_input_tokens"] == 0
    assert second["usage"]["cached_input_tokens"] > 0  # the repeated prefix hit the KV cache


def test_more_streams_than_slots_queue_in_ttft(tmp_path, llama_server):
    target = Target(
        id="smol",
        model=llama_server.alias,
        base_url=llama_server.base_url,
        prices={llama_server.alias: FREE},
    )
    cases = [
        mcq(10 + i, f"Write a long story number {i} about a lighthouse keeper.") for i in range(8)
    ]
    store, _, _ = drive(
        tmp_path,
        [(target, llama_server.base_url)],
        cases,
        concurrency=8,
        sampling={"max_tokens": 24, "ignore_eos": True},
    )
    calls = store.calls("run-r")
    assert [c["status"] for c in calls] == ["completed"] * 8, [c.get("error") for c in calls]
    ttfts = sorted(call["ttft_s"] for call in calls)
    assert len(ttfts) == 8
    assert min(ttfts[4:]) > max(ttfts[:4])  # four slots: the other four wait for one


def test_smoke_profile_against_the_real_model(pytester, llama_server):
    pytester.makefile(
        ".toml",
        pyproject=textwrap.dedent(f"""
        [tool.srbench]
        default_targets = ["smollm2"]
        [tool.srbench.sampling]
        max_tokens = 48
        [[tool.srbench.targets]]
        id = "smollm2"
        model = "{llama_server.alias}"
        base_url = "{llama_server.base_url}"
        keep_alive = false  # llama-server closes the connection after each streamed answer
        [tool.srbench.targets.prices.{llama_server.alias}]
        input = 0.0
        cached_input = 0.0
        cache_write = 0.0
        output = 0.0
    """),
    )
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--srbench-profile=smoke",
        "--srbench-concurrency=4",
        "--srbench-json=report.json",
        "--srbench-benchmark=mmlu-pro",
        "--srbench-benchmark=gpqa-diamond",
        "--srbench-benchmark=arc-agi-2",
        "--srbench-limit=1",  # one cell per benchmark: every protocol, a fraction of the CPU
    )
    assert result.ret == 0, result.stdout.str()[-2000:]
    report = json.loads((pytester.path / "report.json").read_text())
    (metric,) = report["summary"]["targets"]
    assert metric["total"] == 3 and metric["completed"] == 3 and metric["failed"] == 0
    assert metric["complete"] is True and metric["simulated"] is False
    assert metric["tokens"]["output_tokens"] > 0 and metric["cost_usd"] == 0.0
    assert metric["ttft_p50_s"] is not None and metric["latency_p95_s"] is not None
    assert metric["cache_read_call_count"] == 3
    assert metric["selected_models"] == {llama_server.alias: 3}
    assert {row["benchmark"] for row in report["benchmarks"]} == {
        "mmlu-pro",
        "gpqa-diamond",
        "arc-agi-2",
    }


def test_litellm_router_in_front_of_llama_server(tmp_path, litellm_proxy, monkeypatch):
    monkeypatch.setenv(MASTER_KEY_ENV, litellm_proxy.master_key)
    priced = {"smol": FREE, "fallback-group": FREE}
    direct = Target(
        id="via-proxy",
        model="smol",
        base_url=litellm_proxy.base_url,
        api_key_env=MASTER_KEY_ENV,
        prices=priced,
    )
    fallback = Target(id="via-fallback", model="fallback-group", base_url=litellm_proxy.base_url,
                      api_key_env=MASTER_KEY_ENV, prices=priced)  # fmt: skip
    store, _, outcomes = drive(
        tmp_path, [(direct, litellm_proxy.base_url), (fallback, litellm_proxy.base_url)], [mcq(30)]
    )
    assert {o.status for o in outcomes.values()} == {"completed"}
    calls = {call["target_id"]: call for call in store.calls("run-r")}
    proxied = calls["via-proxy"]
    assert proxied["model"] == "smol"  # the proxy rewrites the model to its group name
    assert proxied["usage_via_proxy"] is True and proxied["usage"]["output_tokens"] > 0
    assert b'"choices":[{"index":0,"delta":{}' in store.read_evidence(proxied["evidence"]).replace(
        b" ", b""
    )
    assert calls["via-fallback"]["router"]["x-litellm-attempted-fallbacks"] == "1"


def test_a_server_without_streaming_usage_leaves_usage_and_cost_null(
    tmp_path, llama_cpp_python_server
):
    alias = llama_cpp_python_server.alias
    target = Target(
        id="no-usage", model=alias, base_url=llama_cpp_python_server.base_url, prices={alias: FREE}
    )
    store, plan, outcomes = drive(
        tmp_path,
        [(target, llama_cpp_python_server.base_url)],
        [mcq(40), mcq(41)],
        cost_policy="capability_only",
    )
    assert {o.status for o in outcomes.values()} == {"completed"}
    for call in store.calls("run-r"):
        assert call["usage"] is None and call["cost_usd"] is None and call["raw_usage"] is None
    metric = build_report(plan, run(), store.results("run-r"), store.calls("run-r"))["summary"][
        "targets"
    ][0]
    assert (
        metric["tokens"] is None
        and metric["cost_usd"] is None
        and metric["total_spend_usd"] is None
    )
    assert metric["known_cost_usd"] == 0 and metric["cache_read_call_count"] == 0
    # under require_priced the same answer is a failed cell, never a zero-cost one
    store2, _, priced = drive(
        tmp_path / "priced", [(target, llama_cpp_python_server.base_url)], [mcq(42)]
    )
    (outcome,) = priced.values()
    assert outcome.status == "failed" and "incomplete usage" in outcome.result["error"]


def test_a_managed_target_starts_and_stops_its_own_server(pytester, llama_server, monkeypatch):
    # pytester moves HOME; point the plugin at the build the session fixture found
    monkeypatch.setenv("SRBENCH_CACHE", str(llama_server.binary.parents[3]))
    pytester.makefile(
        ".toml",
        pyproject=textwrap.dedent("""
        [tool.srbench]
        default_targets = ["smollm2"]
        [tool.srbench.sampling]
        max_tokens = 24
        [tool.srbench.limits]
        preset = "slow_server"  # the plan check measures throughput; a loaded machine is slow
        [[tool.srbench.targets]]
        id = "smollm2"
        model = "smollm2-135m"
        managed = "llama-server"
        [tool.srbench.targets.prices.smollm2-135m]
        input = 0.0
        cached_input = 0.0
        cache_write = 0.0
        output = 0.0
    """),
    )
    result = pytester.runpytest_subprocess(
        "-p",
        "no:cacheprovider",
        "--srbench-profile=smoke",
        "--srbench-benchmark=gpqa-diamond",
        "--srbench-concurrency=4",
        "--srbench-json=report.json",
        "-n",
        "2",
    )
    assert result.ret == 0, result.stdout.str()[-2000:]
    report = json.loads((pytester.path / "report.json").read_text())
    (metric,) = report["summary"]["targets"]
    assert metric["completed"] == 4 and metric["selected_models"] == {"smollm2-135m": 4}
    logs = list((pytester.path / ".srbench" / "servers").glob("llama-server-*.log"))
    assert len(logs) == 1 and logs[0].stat().st_size > 0


def shipped_cases(benchmark: str, ids: list[str]) -> list[Case]:
    """Cases of a shipped suite, rendered as a run would render them."""
    suite = load_suite(shipped_suites_dir() / benchmark)
    adapter = REGISTRY.get(benchmark)
    rendered = {c.id: c for c in (adapter.render(row, 20260918) for _, row in suite.rows)}
    return [rendered[f"{benchmark}/{native}"] for native in ids]


def test_the_report_explains_a_real_models_answers_and_the_servers_refusal(tmp_path, llama_server):
    alias = llama_server.alias
    target = Target(id="smol", model=alias, base_url=llama_server.base_url, prices={alias: FREE})
    cases = shipped_cases("mmlu-pro", ["smoke-biology-001", "smoke-business-001",
                                       "smoke-chemistry-001"])  # fmt: skip
    # a prompt longer than a slot's 2,048 tokens: llama-server refuses it with HTTP 400
    cases.append(mcq(99, "Count the words: " + "word " * 2600))
    store, plan, outcomes = drive(
        tmp_path, [(target, llama_server.base_url)], cases, sampling={"max_tokens": 64}
    )
    report = build_report(plan, run("failed"), store.results("run-r"), store.calls("run-r"))
    (row,) = report["outcomes"]
    assert row["cells"] == 4 and row["counts"]["failed"] == 1
    assert sum(row["counts"].values()) == 4
    # the 135M model writes an option's text, not its letter: its answers cannot be read
    assert row["dominant"] == "unparsed" and row["counts"]["unparsed"] >= 2
    example = row["example"]
    replies = {c["case_id"]: c["final"] for c in store.calls("run-r") if c["final"]}
    assert example["text"] == replies[example["case_id"]][:240]
    (group,) = report["failure_groups"]
    assert group["reason"].startswith("Target HTTP 400: ") and "context size" in group["reason"]
    text = "\n".join(render_summary(report))
    assert "mostly unparsed; the model wrote, e.g." in text and "Target HTTP 400: " in text
    # a target declared simulated but answered by llama-server: its receipt is not simulated
    posing = Target(id="posing", model=alias, base_url=llama_server.base_url,
                    prices={alias: FREE}, simulated=True)  # fmt: skip
    store2, _, _ = drive(tmp_path / "posing", [(posing, llama_server.base_url)], [mcq(98)])
    (call,) = store2.calls("run-r")
    assert call["status"] == "completed" and call["simulated"] is False


def test_litellm_provenance_reaches_the_report(tmp_path, litellm_proxy, monkeypatch):
    monkeypatch.setenv(MASTER_KEY_ENV, litellm_proxy.master_key)
    priced = {"smol": FREE, "fallback-group": FREE}
    direct = Target(id="via-proxy", model="smol", base_url=litellm_proxy.base_url,
                    api_key_env=MASTER_KEY_ENV, prices=priced)  # fmt: skip
    fallback = Target(id="via-fallback", model="fallback-group", base_url=litellm_proxy.base_url,
                      api_key_env=MASTER_KEY_ENV, prices=priced)  # fmt: skip
    urls = [(direct, litellm_proxy.base_url), (fallback, litellm_proxy.base_url)]
    store, plan, outcomes = drive(tmp_path, urls, [mcq(31)])
    assert {o.status for o in outcomes.values()} == {"completed"}
    report = build_report(plan, run(), store.results("run-r"), store.calls("run-r"))
    rows = {row["target_id"]: row for row in report["proxies"]}
    backend = f"openai/{litellm_proxy.backend_model}"
    assert rows["via-fallback"]["proxy"] == ["litellm"] and rows["via-fallback"]["versions"]
    assert rows["via-fallback"]["fallbacks"] == 1 and rows["via-fallback"]["fallback_calls"] == 1
    assert rows["via-fallback"]["model_groups"] == {"smol": 1}  # served by the fallback
    assert rows["via-proxy"]["fallbacks"] == 0
    for row in rows.values():
        assert row["backend_models"] == {backend: 1} and row["estimated_usage_calls"] == 0
        assert [c["backend_model"] for c in row["calls"]] == [backend]
    assert "proxy litellm" in "\n".join(render_summary(report))
    # pricing only the requested group: the fallback's model is named in the failure
    group_only = Target(id="group-only", model="fallback-group", base_url=litellm_proxy.base_url,
                        api_key_env=MASTER_KEY_ENV, prices={"fallback-group": FREE})  # fmt: skip
    store2, plan2, unpriced = drive(tmp_path / "unpriced", [(group_only, litellm_proxy.base_url)],
                                    [mcq(32)])  # fmt: skip
    (outcome,) = unpriced.values()
    assert outcome.status == "failed"
    assert "no frozen price for model 'smol' (requested 'fallback-group'" in outcome.result["error"]
    report2 = build_report(plan2, run("failed"), store2.results("run-r"), store2.calls("run-r"))
    assert "no frozen price for model 'smol'" in report2["failure_groups"][0]["reason"]


def test_usage_litellm_estimated_is_marked_and_never_a_complete_cost(
    tmp_path, litellm_proxy, monkeypatch
):
    if "nousage" not in litellm_proxy.extra_groups:
        part_missing("llama-cpp-python's server is not built: `srbench real build --all`")
    monkeypatch.setenv(MASTER_KEY_ENV, litellm_proxy.master_key)
    target = Target(id="estimated", model="nousage", base_url=litellm_proxy.base_url,
                    api_key_env=MASTER_KEY_ENV, prices={"nousage": FREE})  # fmt: skip
    urls = [(target, litellm_proxy.base_url)]
    store, plan, outcomes = drive(tmp_path, urls, [mcq(33)], cost_policy="capability_only")
    assert {o.status for o in outcomes.values()} == {"completed"}
    (call,) = store.calls("run-r")
    assert call["usage_via_proxy"] is True and call["usage_estimated"] is True
    assert call["usage"]["output_tokens"] > 0  # LiteLLM's own count, kept and marked
    assert call["cost_usd"] is None and call["estimated_cost_usd"] == 0.0
    report = build_report(plan, run(), store.results("run-r"), store.calls("run-r"))
    (metric,) = report["summary"]["targets"]
    assert metric["cost_usd"] is None and metric["cost_complete"] is False
    (row,) = report["proxies"]
    assert row["estimated_usage_calls"] == 1 and row["estimated_cost_usd"] == 0.0
    assert any("the proxy (litellm) estimated" in line for line in report["limitations"])
    # under require_priced the estimate fails the cell instead of passing for real spend
    _, _, priced = drive(tmp_path / "priced", urls, [mcq(34)])
    (outcome,) = priced.values()
    assert outcome.status == "failed"
    assert "usage estimated by the proxy 'litellm'" in outcome.result["error"]


def _process_tree(pid: int) -> list[int]:
    """``pid`` and its descendants (Linux ``/proc``): the launcher may stay in front of a server."""
    found, todo = [], [pid]
    while todo:
        current = todo.pop()
        found.append(current)
        for task in Path(f"/proc/{current}/task").glob("*"):
            todo += [int(child) for child in (task / "children").read_text().split()]
    return found


def test_llama_cpp_pythons_server_runs_on_the_libraries_built_with_llama_server(
    llama_cpp_python_server,
):
    """llama.cpp is compiled once: the side environment's package holds no library of its own,
    and its running server has mapped the ones in the llama-server build's folder (through the
    variables its llama_cpp.py and mtmd_cpp.py read)."""
    libraries = llama.library_dir()
    python = venvs.venv_python(venvs.LLAMA_CPP_PYTHON[0])
    (package,) = python.parent.parent.glob("lib/python3*/site-packages/llama_cpp")
    assert not list(package.glob("lib/*.so*"))
    assert 'os.environ.get("LLAMA_CPP_LIB_PATH")' in (package / "llama_cpp.py").read_text()
    assert 'os.environ.get("MTMD_CPP_LIB")' in (package / "mtmd_cpp.py").read_text()
    assert set(LIBRARY_ENV) == {"LLAMA_CPP_LIB_PATH", "MTMD_CPP_LIB"}
    assert llama_cpp_python_server.process is not None
    mapped = "".join(
        Path(f"/proc/{pid}/maps").read_text()
        for pid in _process_tree(llama_cpp_python_server.process.pid)
    )
    assert str(libraries / "libllama.so") in mapped
    assert str(libraries / "libggml-cpu.so") in mapped
