"""Helpers of the engine tests: the check that every key the engine wrote is declared, and
cases driven through the real engine against the simulator."""

from __future__ import annotations

from pytest_srbench.benchmarks.registry import default_registry
from pytest_srbench.core.models import Limits, Target
from pytest_srbench.core.plan.budget import Budget
from pytest_srbench.core.records import CallReceipt, CellResult
from pytest_srbench.engine import Engine, EngineOptions
from pytest_srbench.engine.runtime import RunRuntime
from pytest_srbench.simulator import client as sim_client
from pytest_srbench.store import GroupCommitWriter, open_store
from pytest_srbench.transport import make_transport
from tests.conftest import CHEAP
from tests.core.helpers import manifest


def assert_declared(calls, results):
    """Every key the engine wrote is declared in the typed records (no silent drift)."""
    for call in calls:
        assert set(call) - {"_seq"} <= CallReceipt.__optional_keys__, call.keys()
    for result in results:
        assert set(result) - {"_row"} <= CellResult.__optional_keys__, result.keys()


REGISTRY = default_registry(with_entry_points=False)


def target(model: str) -> Target:
    return Target(id=model, model=model, prices={model: CHEAP}, simulated=True)


def drive(tmp_path, sim, cases, subject="always-right", judge=None, options=None):
    subject_target = target(subject)
    auxiliary = {judge: target(judge)} if judge else {}
    plan = manifest(cases, [subject_target], auxiliary_targets=auxiliary, benchmark_options=options or {},
                    limits=Limits())  # fmt: skip
    sim_client.register_scripts(sim.admin_url, sim_client.scripts_for(cases, REGISTRY))
    store = open_store(tmp_path / "store")
    store.create_run("run-p", plan)
    urls = {t.id: sim.base_url for t in plan.target_inventory().values()}
    runtime = RunRuntime(
        run_id="run-p", manifest=plan, store=store, writer=GroupCommitWriter(store), transport=make_transport(),
        adapters=REGISTRY, base_urls=urls, budget=Budget(cap_usd=5),
    )  # fmt: skip
    engine = Engine(runtime, EngineOptions(concurrency=4))
    engine.start([(case, subject_target) for case in cases])
    for future in engine.slots.values():
        future.result(timeout=120)
    assert engine.join(30)
    return store, plan
