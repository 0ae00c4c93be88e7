"""The report explains a score: each target's answer outcomes per benchmark with their shares
and, when unparsed replies dominate, one raw reply (capped; escaped by every renderer); what a
proxy did (backend model per call, fallbacks, estimated usage); and the caveats both bring."""

from __future__ import annotations

import math

from pytest_srbench.core.report.build import build_report
from pytest_srbench.core.report.explain import EXAMPLE_CHARS, outcome_class
from pytest_srbench.core.report.model import ReportModel
from pytest_srbench.render.html import render_run_html
from pytest_srbench.render.terminal import render_summary
from tests.core.helpers import call, case, manifest, result, run, target

CASES = [case("mmlu", f"q{i}") for i in range(10)] + [case("gpqa-diamond", "g0")]
SMOL = target("smol")
REPLY = 'A. Paris is the capital of France.\n\x1b[31m"quoted" <script>alert(1)</script>' + "x" * 300


def mmlu_results() -> list[dict]:
    rows = [result("mmlu/q0", "smol", correct=True, details={"answer_status": "answered"})]
    rows.append(result("mmlu/q1", "smol", correct=False, details={"answer_status": "answered"}))
    rows.append(result("mmlu/q2", "smol", correct=False, details={"answer_status": "ambiguous"}))
    rows.append(result("mmlu/q3", "smol", status="failed", correct=None,
                       error="Target HTTP 400: the request exceeds the available context size"))  # fmt: skip
    rows += [
        result(f"mmlu/q{i}", "smol", correct=False, answer=None, details={"answer_status": "unparsed"})
        for i in range(4, 9)
    ]  # fmt: skip
    rows.append(
        result("gpqa-diamond/g0", "smol", correct=True, details={"answer_status": "answered"})
    )
    return rows  # mmlu/q9 never finished: pending


def subject_calls() -> list[dict]:
    calls = [call(f"mmlu/q{i}", "smol", final="B") for i in range(4)]
    calls += [call(f"mmlu/q{i}", "smol", final=REPLY) for i in range(4, 9)]
    return calls


def explained() -> dict:
    plan = manifest(CASES, [SMOL])
    report = build_report(plan, run("failed"), mmlu_results(), subject_calls())
    ReportModel.model_validate(report)  # the new fields are part of the schema
    return report


def test_every_cell_is_in_one_class_with_its_share_of_the_planned_cells():
    rows = {row["benchmark"]: row for row in explained()["outcomes"]}
    mmlu = rows["mmlu"]
    assert mmlu["cells"] == 10
    assert mmlu["counts"] == {"correct": 1, "wrong": 1, "unparsed": 5, "ambiguous": 1,
                              "failed": 1, "pending": 1}  # fmt: skip
    assert mmlu["shares"]["unparsed"] == 0.5 and math.fsum(mmlu["shares"].values()) == 1.0
    assert mmlu["dominant"] == "unparsed"
    assert rows["gpqa-diamond"]["counts"]["correct"] == 1
    assert rows["gpqa-diamond"]["dominant"] == "correct" and rows["gpqa-diamond"]["example"] is None
    assert outcome_class({"status": "cancelled"}) == "failed"
    assert outcome_class({"status": "running"}) == "pending"


def test_dominant_unparsed_replies_show_one_raw_answer_capped():
    (mmlu,) = [row for row in explained()["outcomes"] if row["benchmark"] == "mmlu"]
    example = mmlu["example"]
    assert example["case_id"] == "mmlu/q4" and example["truncated"] is True
    assert example["text"] == REPLY[:EXAMPLE_CHARS] and example["chars"] == len(REPLY)


def test_the_terminal_escapes_the_raw_answer_and_shows_the_shares():
    text = "\n".join(render_summary(explained()))
    assert "unparsed = no answer could be read" in text
    assert "5 (50%)" in text and "1 (10%)" in text
    line = next(line for line in text.splitlines() if "mostly unparsed" in line)
    assert "mmlu/q4, first 240 of" in line
    assert '"A. Paris is the capital of France.\\n\\u001b[31m\\"quoted\\"' in line
    assert "\x1b" not in text  # no terminal control sequence gets through


def test_the_html_report_shows_the_breakdown_and_autoescapes_the_answer():
    page = render_run_html(explained())
    assert 'id="answers"' in page and "50 %" in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page and "<script>alert(1)" not in page
    assert "mmlu [smol] is mostly unparsed" in page


def test_a_failure_reason_keeps_the_servers_message():
    report = explained()
    (group,) = report["failure_groups"][:1]
    assert group["reason"] == "Target HTTP 400: the request exceeds the available context size"


def litellm(case_id: str, **extra: object) -> dict:
    proxy = {"name": "litellm", "version": "1.108.7", "model_group": "smol",
             "backend_model": "openai/smollm2-135m", "attempted_fallbacks": 0,
             "attempted_retries": 0, **extra.pop("proxy", {})}  # fmt: skip
    return call(case_id, "smol", proxy=proxy, usage_via_proxy=True, **extra)


def test_proxy_provenance_counts_backends_fallbacks_and_estimated_usage():
    plan = manifest(CASES[:3], [SMOL])
    calls = [
        litellm("mmlu/q0"),
        litellm("mmlu/q1", proxy={"attempted_fallbacks": 2, "model_group": "smol-b"}),
        litellm("mmlu/q2", cost=None, usage_estimated=True, estimated_cost_usd=0.004),
    ]
    results = [result(c.id, "smol") for c in CASES[:3]]
    report = build_report(plan, run(), results, calls)
    ReportModel.model_validate(report)
    (row,) = report["proxies"]
    assert row["proxy"] == ["litellm"] and row["versions"] == ["1.108.7"]
    assert row["call_count"] == 3 and row["backend_models"] == {"openai/smollm2-135m": 3}
    assert row["model_groups"] == {"smol": 2, "smol-b": 1}
    assert row["fallback_calls"] == 1 and row["fallbacks"] == 2
    assert row["estimated_usage_calls"] == 1 and row["estimated_cost_usd"] == 0.004
    assert [c["backend_model"] for c in row["calls"]] == ["openai/smollm2-135m"] * 3
    (metric,) = report["summary"]["targets"]
    assert metric["cost_usd"] is None and metric["cost_complete"] is False  # never complete
    assert any("estimated because its backend sent none" in line for line in report["limitations"])
    text = "\n".join(render_summary(report))
    assert "proxy litellm 1.108.7 in front of smol: 3 call(s)" in text
    assert (
        "2 fallback(s) in 1 call(s)" in text and "usage estimated by the proxy in 1 call(s)" in text
    )
    assert 'id="proxies"' in render_run_html(report)


def test_a_simulated_judge_of_a_real_target_is_a_stated_caveat():
    from pytest_srbench.simulator.profiles import BUILTIN_MODELS, simulated_target

    judged = [case("hle", "h0")]
    plan = manifest(judged, [SMOL], auxiliary_targets={"sim-judge": simulated_target(
        BUILTIN_MODELS["sim-judge"])}, benchmark_options={"hle": {"judge": "sim-judge"}})  # fmt: skip
    report = build_report(plan, run(), [result("hle/h0", "smol")], [call("hle/h0", "smol")])
    assert any(line.startswith("Judge / user-simulator targets sim-judge are simulated")
               for line in report["limitations"])  # fmt: skip
    assert report["proxies"] == []
