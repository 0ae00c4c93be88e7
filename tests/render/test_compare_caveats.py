"""The results guide's caveats on every comparison: ``srbench compare`` prints them, its JSON
carries them (``caveats``), the HTML comparison shows them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_srbench.cli.main import main
from pytest_srbench.core.compare.caveats import CAVEATS
from pytest_srbench.core.compare.runs import RunSide, compare_many
from pytest_srbench.render.compare import render_comparison
from pytest_srbench.render.html import render_compare_html
from pytest_srbench.render.json_report import report_json
from tests.render.flip_helpers import report

GUIDE = (
    "A positive estimate with an interval spanning zero is not proof of a gain",
    "Small samples show direction only",
    "prespecified margin and a holdout interval",
    "Self-hosted token-equivalent prices are not GPU-bill savings",
    "exclude the uncertainty of baseline selection, tuning choices and data contamination",
    "Cache-neutral cost is a counterfactual token-equivalent price, not billed spend",
)


def _result() -> dict:
    base = RunSide.from_report(report("base", 1, set()))
    cand = RunSide.from_report(report("cand", 1, {"mmlu-pro/b"}))
    return compare_many(base, [cand])


def test_the_guides_caveats_are_in_the_json_text_and_html() -> None:
    result = _result()
    assert result["caveats"] == list(CAVEATS)
    for words in GUIDE:
        assert any(words in text for text in result["caveats"]), words
    text = "\n".join(render_comparison(result))
    assert "Caveats (how far these numbers go):" in text
    for caveat in CAVEATS:
        assert f"  - {caveat}" in text
    html = render_compare_html(result)
    assert 'id="caveats"' in html
    for words in GUIDE:
        assert words in html


def test_srbench_compare_prints_and_writes_the_caveats(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    for run_id, wrong in (("base", set()), ("cand", {"mmlu-pro/b"})):
        (tmp_path / f"{run_id}.json").write_text(report_json(report(run_id, 1, wrong)))
    base, cand = str(tmp_path / "base.json"), str(tmp_path / "cand.json")
    assert main(["compare", base, cand, "--json", str(tmp_path / "c.json")]) == 0
    out = capsys.readouterr().out
    assert GUIDE[0] in out and "Self-hosted token-equivalent prices" in out
    assert json.loads((tmp_path / "c.json").read_text())["caveats"] == list(CAVEATS)
    assert main(["compare", base, cand, "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)["caveats"] == list(CAVEATS)
