"""`srbench compare --pairing same-target` (docs/your-own-code.md §5): two runs of identical
code compare at Δ 0 for every target, as the gate pairs them; the default, sr-bench's
strongest-single pairing, sets the weaker target against the stronger one's answers and says
so, naming each row's baseline target when some differ (real pytest sessions on the built-in
simulator, then the real CLI)."""

from __future__ import annotations

import json
import sys

import pytest

pytestmark = pytest.mark.slow


def compare(pytester: pytest.Pytester, *extra: str) -> pytest.RunResult:
    return pytester.run(sys.executable, "-m", "pytest_srbench", "compare", "main.json",
                        "pr.json", *extra)  # fmt: skip


VARIANTS = """
import pytest


@pytest.mark.srbench("mmlu-pro")
@pytest.mark.parametrize("variant", ["plain", "brief"])
async def test_mmlu(srbench_case, srbench_target, variant):
    return (await srbench_target.ask(srbench_case.messages)).final_text


@pytest.mark.srbench("gpqa-diamond")
async def test_gpqa(srbench_case, srbench_target):
    return (await srbench_target.ask(srbench_case.messages)).final_text
"""


def test_same_target_pairing_and_the_rows_baseline_targets(pytester):
    """Two runs of identical code compare at Δ 0 for every target with same-target pairing.
    Variants of one test answer only its benchmark: under strongest-single pairing a target
    that answers other cases than the selected one is set against its own id, and the table
    says so in an 'against' column."""
    pytester.makepyfile(test_app=VARIANTS)
    for name in ("main", "pr"):
        run = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--srbench-profile=smoke",
                                            "test_app.py", f"--srbench-json={name}.json")  # fmt: skip
        assert run.ret == 0, run.stdout.str()
    targets = [
        t["id"] for t in json.loads((pytester.path / "main.json").read_text())["summary"]["targets"]
    ]
    same = compare(pytester, "--pairing", "same-target", "--format", "json")
    assert same.ret == 0, same.stderr.str()
    rows = json.loads(same.stdout.str())["candidates"][0]["comparisons"]
    assert {r["candidate_target_id"]: r["baseline_target_id"] for r in rows} == {
        t: t for t in targets
    }
    assert all(r["quality_delta"] == 0 and r["pairing"] == "same-target" for r in rows)
    text = compare(pytester, "--pairing", "same-target")
    text.stdout.fnmatch_lines(["*pairing: same-target (each candidate target against*"])
    text.stdout.no_fnmatch_line("run *target *against *")  # every row against its own id
    assert compare(pytester, "--pairing", "same-target", "--html", "same.html").ret == 0
    assert "<th>against</th>" not in (pytester.path / "same.html").read_text()

    rows = json.loads(compare(pytester, "--format", "json").stdout.str())["candidates"][0][
        "comparisons"
    ]
    against = {r["candidate_target_id"]: r["baseline_target_id"] for r in rows}
    selected = against["sim-large~plain"]
    assert selected.endswith(("~plain", "~brief"))  # the strongest single is an mmlu variant
    assert against["sim-large"] == "sim-large" and against["sim-small"] == "sim-small"
    assert against["sim-small~brief"] == selected
    text = compare(pytester)
    assert text.ret == 0
    text.stdout.fnmatch_lines(
        [
            "*against the baseline's target of its own id: see the table's 'against' column*",
            "run *target *against *Δ quality*",
            "* sim-large  *sim-large  *",
            f"* sim-small~brief  *{selected}  *",
        ]
    )
    page = compare(pytester, "--html", "compare.html")
    assert page.ret == 0
    html = (pytester.path / "compare.html").read_text()
    assert "<th>against</th>" in html
    assert (
        f'<tr data-target="sim-small~brief"><th scope="row">sim-small~brief</th><td data-metric="against">{selected}</td>'
        in html
    )
