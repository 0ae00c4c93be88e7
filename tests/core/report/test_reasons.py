"""One reason everywhere (pure parts): a failed cell keeps its own one-line reason in the
report's cell, its failure group lists the distinct reasons it counts, a pending cell says
why it was never dispatched when the run knows, a python target's cells without a journaled
call get a note, and unparsed MCQ replies carry the grader's reason and accepted forms."""

from __future__ import annotations

from pytest_srbench.core.calls.failures import failure_reason, summarize_failure
from pytest_srbench.core.grading.mcq import ACCEPTED_FORMS, extract_choice, unparsed_reason
from pytest_srbench.core.models import Target
from pytest_srbench.core.report.build import TARGET_SETUP_FAILED, build_report
from pytest_srbench.core.report.model import ReportModel
from pytest_srbench.render.html import render_run_html
from pytest_srbench.render.terminal import render_summary
from tests.core.helpers import call, case, manifest, result, run, target

BUDGET = "Per-case call budget exhausted (max_calls_per_case)"
NO_JUDGE = "Benchmark gpqa-diamond has no judge target bound"
REFUSED = "benchmark 'livecodebench' cannot grade an answer returned by a test body"
SETUP = "target fixture set-up failed: RuntimeError: cannot connect to my app"


def test_a_failures_reason_is_its_own_first_line_and_its_group_the_summary():
    assert failure_reason(BUDGET) == BUDGET
    assert summarize_failure(BUDGET) == "Frozen request or cost budget exhausted"
    assert failure_reason(NO_JUDGE) == NO_JUDGE != summarize_failure(NO_JUDGE)
    assert failure_reason("boom in /home/me/app/x.py\nsecond line") == "boom in …/x.py"
    http = "Target HTTP 400: too long\nfor the slot"
    assert (
        failure_reason(http) == summarize_failure(http) == "Target HTTP 400: too long for the slot"
    )
    assert failure_reason("") == "Target call failed"


def reasons_report() -> dict:
    cases = [case("gpqa-diamond", f"g{i}") for i in range(4)]
    mine = Target(id="mine", kind="python", model="mine")
    broken = Target(id="broken", kind="python", model="broken")
    rows = [
        result("gpqa-diamond/g0", "sim", status="failed", correct=None, error=BUDGET),
        result("gpqa-diamond/g1", "sim", status="failed", correct=None, error=NO_JUDGE),
        result("gpqa-diamond/g2", "sim", status="failed", correct=None, error=NO_JUDGE),
        result("gpqa-diamond/g3", "sim", status="failed", correct=None, error=REFUSED),
        *[result(f"gpqa-diamond/g{i}", "mine", details={"answer_status": "answered"})
          for i in range(3)],
        result("gpqa-diamond/g3", "mine", status="failed", correct=None, error=REFUSED),
    ]  # fmt: skip
    calls = [call(f"gpqa-diamond/g{i}", "sim", final="A") for i in range(4)]
    calls.append(call("gpqa-diamond/g0", "mine", final="A"))  # one cell of mine made a call
    events = [{"kind": TARGET_SETUP_FAILED, "data": {"target_id": "broken", "reason": SETUP}}]
    plan = manifest(
        cases, [target("sim"), mine, broken], target_kinds={"gpqa-diamond": ["single", "python"]}
    )
    report = build_report(plan, run("failed"), rows, calls, events)
    ReportModel.model_validate(report)
    return report


def test_each_cell_keeps_its_specific_reason_and_groups_list_them():
    report = reasons_report()
    errors = {(c["case_id"], c["target_id"]): c["error"] for c in report["cells"]}
    assert errors[("gpqa-diamond/g0", "sim")] == BUDGET
    assert errors[("gpqa-diamond/g1", "sim")] == NO_JUDGE
    assert errors[("gpqa-diamond/g3", "sim")] == REFUSED
    groups = {g["reason"]: g for g in report["failure_groups"]}
    grading = groups["Benchmark grading failed"]
    assert grading["count"] == 4
    assert grading["reasons"] == [{"reason": NO_JUDGE, "count": 2},
                                  {"reason": REFUSED, "count": 2}]  # fmt: skip
    assert groups["Frozen request or cost budget exhausted"]["reasons"] == [
        {"reason": BUDGET, "count": 1}
    ]
    text = "\n".join(render_summary(report))
    assert f"2 × {NO_JUDGE}" in text and f"1 × {BUDGET}" in text
    html = render_run_html(report)
    assert NO_JUDGE in html and "2 × benchmark &#39;livecodebench&#39; cannot grade" in html


def test_pending_cells_say_why_and_python_cells_without_calls_are_noted():
    report = reasons_report()
    pending = [c for c in report["cells"] if c["target_id"] == "broken"]
    assert {c["status"] for c in pending} == {"pending"}
    assert {c["error"] for c in pending} == {SETUP}
    (group,) = [g for g in report["failure_groups"] if g["statuses"] == {"pending": 4}]
    assert group["reasons"] == [{"reason": SETUP, "count": 4}]
    assert report["notes"] == [
        "3 cells of mine made no journaled call: calls through other clients are not counted",
        f"4 cells of broken pending: {SETUP}",
    ]  # in the plan's target order
    text = "\n".join(render_summary(report))
    assert f"note: 4 cells of broken pending: {SETUP}" in text
    assert "note: 3 cells of mine made no journaled call" in text
    assert "3 cells of mine made no journaled call" in render_run_html(report)


def test_an_unparsed_reply_has_the_graders_reason_without_changing_what_it_accepts():
    for reply in ("B. GUG", "A. Golgi apparatus"):
        assert extract_choice(reply, "ABCD") == (None, "unparsed", False)
        reason = unparsed_reason(reply, "ABCD")
        assert reason.startswith(f"the reply {reply!r} is not a bare letter")
        assert reason.endswith(f"accepted forms: {ACCEPTED_FORMS}")
    assert unparsed_reason("", "ABCD").startswith("the reply is empty")
    assert unparsed_reason("Answer: Z", "ABCD").startswith("the answer letter Z is not one")
    assert unparsed_reason("<think>hm", "ABCD").startswith("the reply holds a <think> marker")
    assert unparsed_reason("Well\nmaybe", "ABCD").startswith("first line 'Well' is not")


def test_the_outcomes_row_names_the_accepted_forms_when_unparsed_dominates_answered_cells():
    cases = [case("mmlu", f"q{i}") for i in range(6)]
    unparsed = {"answer_status": "unparsed", "parse_reason": "the reply 'B. GUG' is not …",
                "accepted_forms": ACCEPTED_FORMS}  # fmt: skip
    rows = [result(f"mmlu/q{i}", "smol", correct=False, answer=None, details=unparsed)
            for i in range(3)]  # fmt: skip
    rows.append(result("mmlu/q3", "smol", details={"answer_status": "answered"}))
    rows += [result(f"mmlu/q{i}", "smol", status="failed", correct=None, error=BUDGET)
             for i in (4, 5)]  # fmt: skip
    report = build_report(manifest(cases, [target("smol")]), run("failed"), rows, [])
    ReportModel.model_validate(report)
    (row,) = report["outcomes"]
    assert row["accepted_forms"] == ACCEPTED_FORMS  # 3 of 4 answered cells (not of 6 planned)
    assert row["parse_reason"] == "the reply 'B. GUG' is not …"
    text = "\n".join(render_summary(report))
    assert (
        f"mmlu [smol] 3 of 4 answered cells unparsed; the grader accepts {ACCEPTED_FORMS}" in text
    )
    assert "the grader accepts a first line that is only the letter" in render_run_html(report)
    rows = rows[:4] + [result(f"mmlu/q{i}", "smol", details={"answer_status": "answered"})
                       for i in (4, 5)]  # fmt: skip
    half = build_report(manifest(cases, [target("smol")]), run("completed"), rows, [])
    assert half["outcomes"][0]["accepted_forms"] is None  # 3 of 6: not more than half


def test_an_invalid_utf8_stream_is_named() -> None:
    """Issue 47, point 5: a chunk that does not decode was summarised "Target call failed"."""
    for message in (
        "UnicodeDecodeError: invalid UTF-8 in the stream",
        "UnicodeDecodeError: stream is not UTF-8",  # as journaled before
    ):
        assert summarize_failure(message) == "Target stream failed: invalid UTF-8 in the stream"
    reason = failure_reason("UnicodeDecodeError: invalid UTF-8 in the stream")
    assert "invalid UTF-8 in the stream" in reason
