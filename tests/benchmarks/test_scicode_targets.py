"""SciCode graded on its released numeric targets: a small ``test_data.h5`` in SciCode's layout
(plain values, several values per test, a list, CSR and COO sparse matrices, a dict with
numeric and text keys), read inside the real sandbox with h5py, through the engine and the
real simulator; one step passes and one fails."""

from __future__ import annotations

import hashlib
import sys

import numpy as np
import pytest

from pytest_srbench.core.models import DatasetInfo, Limits
from pytest_srbench.core.plan.budget import Budget
from pytest_srbench.engine import Engine, EngineOptions
from pytest_srbench.engine.runtime import RunRuntime
from pytest_srbench.simulator import client as sim_client
from pytest_srbench.store import GroupCommitWriter, open_store
from pytest_srbench.transport import make_transport
from tests.core.helpers import manifest
from tests.engine.helpers import REGISTRY, target
from tests.optional import import_extra

h5py = import_extra("h5py", "scicode")

STEP_ONE = """
def scale(x):
    return 2 * x

def pair():
    return 2.5, [np.array([1.0, 2.0]), np.array([3.0, 4.0])]

def sparse():
    return scipy.sparse.csr_matrix(np.array([[0.0, 1.0], [2.0, 0.0]]))

def table():
    return {0.5: 1.0, "name": "abc", "m": scipy.sparse.coo_matrix(np.eye(2))}
"""
STEP_TWO = "def energy():\n    return 2.0\n"  # the target says 1.0: this step fails
TESTS_ONE = [
    "assert np.allclose(scale(np.array([0.5, 1.0])), target)",
    "from scicode.compare.cmp import cmp_tuple_or_list\nassert cmp_tuple_or_list(pair(), target)",
    "from scicode.compare.cmp import are_csc_matrix_close\n"
    "assert are_csc_matrix_close(sparse(), target)",
    "from scicode.compare.cmp import are_dicts_close\nassert are_dicts_close(table(), target)",
]
TESTS_TWO = ["assert np.allclose(energy(), target)"]


def write_targets(path):
    """The released layout: <step>/test<i>/var<j>, lists, sparse matrices and dicts."""
    with h5py.File(path, "w") as data:
        data.create_dataset("7.1/test1/var1", data=np.array([1.0, 2.0]))
        data.create_dataset("7.1/test2/var1", data=2.5)
        listed = data.create_group("7.1/test2/var2/list")
        listed.create_dataset("var1", data=np.array([1.0, 2.0]))
        listed.create_dataset("var2", data=np.array([3.0, 4.0]))
        csr = data.create_group("7.1/test3/var1/sparse_matrix")
        for key, value in {"data": [1.0, 2.0], "indices": [1, 0], "indptr": [0, 1, 2],
                           "shape": [2, 2]}.items():  # fmt: skip
            csr.create_dataset(key, data=np.array(value))
        table = data.create_group("7.1/test4/var1")
        table.create_dataset("0.5", data=1.0)
        table.create_dataset("name", data=b"abc")
        coo = table.create_group("m/sparse_matrix")
        for key, value in {"data": [1.0, 1.0], "row": [0, 1], "col": [0, 1],
                           "shape": [2, 2]}.items():  # fmt: skip
            coo.create_dataset(key, data=np.array(value))
        data.create_dataset("7.2/test1/var1", data=1.0)


def scicode_case():
    row = {
        "problem_id": "7", "problem_description": "Numbers.",
        "required_dependencies": "import numpy as np\nimport scipy.sparse",
        "sub_steps": [
            {"step_number": "7.1", "step_description": "Helpers.", "function_header": "def scale(x):",
             "tests": TESTS_ONE},
            {"step_number": "7.2", "step_description": "Energy.", "function_header": "def energy():",
             "tests": TESTS_TWO},
        ],
        "reference_steps": [STEP_ONE, STEP_TWO],
    }  # fmt: skip
    return REGISTRY.get("scicode").render(row, 1)


def drive(tmp_path, sim, suite_folder, assets):
    subject = target("always-right")
    cases = [scicode_case()]
    dataset = DatasetInfo(
        profile="quick", seed=1, suites=[{"benchmark": "scicode", "assets": assets}]
    )
    plan = manifest(cases, [subject], dataset=dataset, limits=Limits())
    sim_client.register_scripts(sim.admin_url, sim_client.scripts_for(cases, REGISTRY))
    store = open_store(tmp_path / "store")
    store.create_run("run-s", plan)
    runtime = RunRuntime(
        run_id="run-s", manifest=plan, store=store, writer=GroupCommitWriter(store),
        transport=make_transport(), adapters=REGISTRY, base_urls={subject.id: sim.base_url},
        budget=Budget(cap_usd=5), asset_roots={"scicode": suite_folder},
    )  # fmt: skip
    engine = Engine(runtime, EngineOptions(concurrency=1))
    engine.start([(case, subject) for case in cases])
    for future in engine.slots.values():
        future.result(timeout=120)
    assert engine.join(30)
    (row,) = store.results("run-s")
    return row


@pytest.fixture
def suite(tmp_path):
    folder = tmp_path / "suites" / "scicode"
    (folder / "assets").mkdir(parents=True)
    write_targets(folder / "assets" / "test_data.h5")
    sha = hashlib.sha256((folder / "assets" / "test_data.h5").read_bytes()).hexdigest()
    return folder, {"assets/test_data.h5": sha}


def test_steps_are_graded_against_the_h5_targets(tmp_path, sim, suite):
    folder, assets = suite
    row = drive(tmp_path, sim, folder, assets)
    assert row["status"] == "completed" and row["correct"] is False
    first, second = row["details"]["steps"]
    assert first["passed"] is True, first
    assert second["passed"] is False and second["status"] == "failed"
    assert "AssertionError" in second["stderr_tail"]
    assert row["details"]["targets"] == {
        "path": "assets/test_data.h5",
        "sha256": assets["assets/test_data.h5"],
    }


def test_without_the_asset_the_tests_run_as_they_are(tmp_path, sim, suite):
    folder, _ = suite
    row = drive(tmp_path, sim, folder, {})
    first, second = row["details"]["steps"]
    assert first["passed"] is False and "NameError" in first["stderr_tail"]  # no target bound
    assert "targets" not in row["details"]


def test_a_changed_targets_file_is_refused(tmp_path, sim, suite):
    folder, assets = suite
    (folder / "assets" / "test_data.h5").write_bytes(b"changed")
    row = drive(tmp_path, sim, folder, assets)
    assert row["status"] == "failed"
    assert "does not match its frozen sha256" in row["error"]


def test_without_h5py_the_cell_names_the_extra_to_install(tmp_path, sim, suite, monkeypatch):
    folder, assets = suite
    monkeypatch.setitem(sys.modules, "h5py", None)  # import h5py now raises ImportError
    row = drive(tmp_path, sim, folder, assets)
    assert row["status"] == "failed" and row["call_count"] == 0
    assert "pip install 'pytest-srbench[scicode]'" in row["error"]
    assert "assets/test_data.h5" in row["error"]
