"""Preparation from folder-shaped public formats: ARC tasks, Terminal-Bench 2 tasks, tau2-bench domains."""

from __future__ import annotations

import hashlib
import json

from pytest_srbench.datasets.prepare import load_prepared
from tests.datasets.source_builders import arc_task, run, tau_domain, tb_task


def test_arc_task_folder_and_mapping(tmp_path):
    folder = tmp_path / "evaluation"
    folder.mkdir()
    for i in range(3):
        (folder / f"0000000{i}.json").write_text(json.dumps(arc_task(i)))
    summary, rows = run("arc-agi-2", folder, tmp_path)
    assert summary.count == 2 and all(set(r) == {"id", "train", "test"} for r in rows)
    row = rows[0]
    assert row["train"] == arc_task(int(row["id"][-1]))["train"] and row["test"] == [
        {"input": [[4, 5]], "output": [[5, 4]]}
    ]
    mapping = tmp_path / "tasks.json"
    mapping.write_text(json.dumps({f"0000000{i}": arc_task(i) for i in range(3)}))
    _, again = run("arc-agi-2", mapping, tmp_path, output_root=tmp_path / "other")
    assert again == rows  # same ids, same seed: the same selection
    grouped = tmp_path / "grouped.json"
    grouped.write_text(
        json.dumps(
            {
                "train": {"aaaaaaaa": arc_task(9)},
                "eval": {f"0000000{i}": arc_task(i) for i in range(3)},
            }
        )
    )
    _, from_eval = run("arc-agi-2", grouped, tmp_path, output_root=tmp_path / "g")
    assert from_eval == rows
    _, from_train = run(
        "arc-agi-2", grouped, tmp_path, output_root=tmp_path / "t", split="train", limit=1
    )
    assert [r["id"] for r in from_train] == ["aaaaaaaa"]


def test_terminal_bench_task_folders(tmp_path):
    """A task with environment/Dockerfile becomes a container task (Dockerfile and the whole
    environment/ as build context, binary files base64); one without keeps its text files
    seeded into the sandbox task directory."""
    tb_task(tmp_path / "tasks", "alpha")
    tb_task(tmp_path / "tasks", "beta", category=None, dockerfile=False)
    summary, out = run("terminal-bench-2.1", tmp_path / "tasks", tmp_path, profile="quick", limit=2)
    rows = {r["task_id"]: r for r in out}
    assert rows["alpha"] == {
        "task_id": "alpha", "instruction": "Create /app/alpha.txt containing hello.\n",
        "files": {}, "verifier": "#!/bin/bash\ngrep -q hello /app/alpha.txt\n",
        "container": {"image": None, "dockerfile": "FROM ubuntu:24.04\nWORKDIR /app\n",
                      "context": {"data/seed.txt": "seed file\n"},
                      "context_base64": {"blob.bin": "AAEC"}},
        "verifier_timeout_s": 60.0, "category": "files",
        "metadata": {"difficulty": "easy", "tags": ["io"],
                     "verifier_files": {"test_outputs.py": "def test_ok():\n    assert True\n"}},
    }  # fmt: skip
    assert rows["beta"]["files"] == {"data/seed.txt": "seed file\n"}
    assert "container" not in rows["beta"] and "category" not in rows["beta"]
    assert rows["beta"]["metadata"]["skipped_binary_files"] == ["environment/blob.bin"]
    names = [f["name"] for f in load_prepared(summary.folder).meta["prepared"]["source_files"]]
    assert "alpha/environment/Dockerfile" in names and "alpha/tests/test.sh" in names


def test_terminal_bench_task_toml_image_and_limits(tmp_path):
    """The released layout: task.toml [environment] names the image and the limits."""
    folder = tb_task(tmp_path / "tasks", "gamma", dockerfile=False)
    (folder / "task.toml").write_text(
        'version = "1.0"\n[metadata]\ncategory = "files"\n[verifier]\ntimeout_sec = 900.0\n'
        "[agent]\ntimeout_sec = 900.0\n[environment]\nbuild_timeout_sec = 600.0\n"
        'docker_image = "alexgshaw/gamma:20251031"\ncpus = 1\nmemory_mb = 2048\n'
        "storage_mb = 10240\ngpus = 0\nallow_internet = false\nmcp_servers = []\n"
    )
    _, out = run("terminal-bench-2.1", tmp_path / "tasks", tmp_path, profile="quick", limit=1)
    (row,) = out
    assert row["container"] == {
        "image": "alexgshaw/gamma:20251031", "cpus": 1, "memory_mb": 2048,
        "build_timeout_s": 600.0, "allow_internet": False,
    }  # fmt: skip
    assert row["verifier_timeout_s"] == 900.0 and row["files"] == {}


def test_tau_domain_folder_with_tool_source(tmp_path):
    folder = tau_domain(tmp_path / "domains", tools=True)
    summary, out = run("tau3", folder, tmp_path, tools_source=folder / "tools.py")
    assert summary.count == 3
    db_sha = hashlib.sha256((folder / "db.json").read_bytes()).hexdigest()
    suite = load_prepared(summary.folder)
    assert suite.meta["assets"] == {"assets/library_db.json": db_sha}
    assert suite.meta["prepared"]["selection"] == "round-robin-v1"
    assert (summary.folder / "assets" / "library_db.json").read_bytes() == (
        folder / "db.json"
    ).read_bytes()
    row = out[0]
    tid = row["metadata"]["upstream_id"]
    assert row["task_id"] == f"library-{tid}"
    assert row["metadata"].get("upstream_splits") == {
        "0": ["train"],
        "1": ["train"],
        "2": ["test"],
    }.get(tid)
    assert row["domain"] == "library" and row["policy"].startswith("# library policy")
    assert row["tools"] == [
        "get_book",
        "lend_book",
        "list_shelves",
        "transfer_to_human_agents",
    ]  # no fine_member
    assert row["db_asset"] == {"path": "assets/library_db.json", "sha256": db_sha}
    assert row["expected_actions"] == [{"name": "get_book", "arguments": {"book_id": "b1"}},
                                       {"name": "lend_book", "arguments": {"book_id": "b1", "member": "m1"}}]  # fmt: skip
    # tau2's own rendering for its user simulator (str(UserScenario)): verbatim parts, tabs
    assert row["user_scenario"] == (f"Instructions:\n\tDomain: library\n\tReason for call:\n"
                                    f"\t\tYou want book {tid}.\n\tKnown info:\n\t\tYou are member m1.\n"
                                    "\tTask instructions:\n\t\tBe brief.")  # fmt: skip
    assert "user_guidelines" not in row  # no tau2 data folder around this domain
    assert row["required_outputs"] == (["Dune"] if tid == "0" else [])


def test_tau_without_tool_source_uses_action_names_and_round_robins(tmp_path):
    root = tmp_path / "domains"
    tau_domain(root, "library", n=4)
    tau_domain(root, "archive", n=4)
    summary, out = run("tau3", root, tmp_path, profile="quick", limit=6)
    assert [r["domain"] for r in out] == ["archive", "library"] * 3  # balanced round-robin
    assert all(r["tools"] == ["get_book", "lend_book"] for r in out)
    assert set(load_prepared(summary.folder).meta["assets"]) == {
        "assets/archive_db.json",
        "assets/library_db.json",
    }
