"""Shared fixtures: a real simulator process on a free loopback port with test models."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator

# A C extension cannot be loaded twice in one process, and pytester's in-process runs
# (tests/plugin/test_signals.py) unload every module first imported during them: numpy,
# imported lazily by comparisons, is therefore loaded before any test runs.
import numpy  # noqa: F401
import pytest

with contextlib.suppress(ImportError):  # likewise psycopg's C extension (PostgreSQL store)
    import psycopg  # noqa: F401

from pytest_srbench.core.models import Prices
from pytest_srbench.simulator import client as sim_client
from pytest_srbench.simulator.process import SimulatorProcess, start_simulator
from pytest_srbench.simulator.profiles import SimModel
from tests.xdist_groups import pytest_collection_modifyitems  # noqa: F401  (a hook)
from tests.zygote_server import new_session_command

CHEAP = Prices(input=1.0, cached_input=0.5, cache_write=2.0, output=2.0)


def fault_model(name: str, fault: str, **extra: object) -> SimModel:
    return SimModel(
        name=name,
        prices=CHEAP,
        fault=fault,
        fault_rate=1.0,
        ttft_s=0.0,
        tokens_per_s=10_000,
        **extra,
    )


TEST_MODELS = [
    SimModel(
        name="always-right",
        accuracy=1.0,
        prices=CHEAP,
        ttft_s=0.01,
        tokens_per_s=5000,
        styles={"bare": 1.0},
    ),
    SimModel(
        name="always-wrong",
        accuracy=0.0,
        prices=CHEAP,
        ttft_s=0.01,
        tokens_per_s=5000,
        styles={"declaration": 1.0},
    ),
    SimModel(name="slow", accuracy=1.0, prices=CHEAP, latency_s=0.3),
    # answers only after ten minutes: a run against it ends in time only if it aborts its calls
    SimModel(name="glacial", accuracy=1.0, prices=CHEAP, latency_s=600.0),
    SimModel(name="dribble", accuracy=1.0, prices=CHEAP, ttft_s=0.0, tokens_per_s=10, chunks=30),
    SimModel(
        name="verbose", accuracy=1.0, prices=CHEAP, ttft_s=0.0, tokens_per_s=100_000, chunks=200
    ),
    SimModel(
        name="overrun",
        accuracy=1.0,
        prices=CHEAP,
        ttft_s=0.0,
        tokens_per_s=100_000,
        chunks=50,
        ignore_max_tokens=True,
    ),
    SimModel(
        name="writer",
        accuracy=1.0,
        prices=CHEAP,
        ttft_s=0.0,
        tokens_per_s=10_000,
        report_cache_write=True,
        cache_hit_rate=1.0,
    ),
    SimModel(
        name="prose-judge",
        accuracy=1.0,
        prices=CHEAP,
        ttft_s=0.0,
        tokens_per_s=10_000,
        judge_format="prose",
    ),
    SimModel(name="json-judge", accuracy=1.0, prices=CHEAP, ttft_s=0.0, tokens_per_s=10_000),
    fault_model("err500", "http_500"),
    fault_model("err429", "http_429", retry_after_s=0.0),
    fault_model("flaky429", "http_429", retry_after_s=0.0, fault_first_attempts=1),
    fault_model("cut", "stream_cut"),
    fault_model("garbled", "malformed_chunk"),
    fault_model("nousage", "usage_missing"),
    fault_model("staller", "stall", stall_s=5.0),
    fault_model("truncating", "length"),
    fault_model("looping", "repeat"),
]


# The pytest plugins of the development tools (schemathesis, hypothesis, anyio, pytest-asyncio)
# are not installed for a user of pytest-srbench, and loading them costs about 3.5 s per pytest
# start here: the sessions the tests start (pytester subprocesses, the service's pytest
# workers, documented commands) run without them, as a user's would.
DEV_ONLY_PLUGINS = "-p no:schemathesis -p no:hypothesispytest -p no:anyio -p no:asyncio"


@pytest.fixture(scope="session", autouse=True)
def user_like_subprocesses() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_ADDOPTS", DEV_ONLY_PLUGINS)
        yield


@pytest.fixture
def pytester(pytester: pytest.Pytester) -> Iterator[pytest.Pytester]:
    """pytest's own ``pytester``, whose sessions also run without the development plugins.
    ``Pytester`` deletes ``PYTEST_ADDOPTS`` when it is made, so without this every
    ``runpytest_subprocess`` (and every command a pytester test starts) would load them again.
    Its ``runpytest_subprocess`` starts the session through ``new_session_command`` (the fork
    server of tests/zygote.py)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_ADDOPTS", DEV_ONLY_PLUGINS)
        patch.setattr(pytester, "_getpytestargs", new_session_command)
        yield pytester


@pytest.fixture(scope="session")
def simulator(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SimulatorProcess]:
    """One simulator process for the whole test session (its counters are reset per use)."""
    process = start_simulator(TEST_MODELS, log_dir=tmp_path_factory.mktemp("sim"))
    try:
        yield process
    finally:
        process.stop()


@pytest.fixture
def sim(simulator: SimulatorProcess) -> SimulatorProcess:
    """The shared simulator with fresh counters. A request an earlier test gave up on (a
    staller's 5 s silence, a killed run's answer) still runs in the simulator until it ends;
    counters reset under it would be decremented later and skew ``in_flight``, so the reset
    waits until nothing is in flight (a generous deadline, never a speed bound)."""
    deadline = time.monotonic() + 60
    while (busy := sim_client.stats(simulator.admin_url)["in_flight"]) > 0:
        assert time.monotonic() < deadline, f"{busy} simulator request(s) still in flight"
        time.sleep(0.05)
    sim_client.reset(simulator.admin_url)
    return simulator


# -- stores: every store test runs against SQLite and against a real PostgreSQL server --------
@pytest.fixture(scope="session")
def postgres_server() -> Iterator[object]:
    """One real PostgreSQL server per test session (per xdist worker), started on first use."""
    from tests.postgres_server import start_server

    server = start_server()
    try:
        yield server
    finally:
        server.stop()


_databases = iter(range(1, 1_000_000))


@pytest.fixture
def postgres_url(postgres_server) -> str:
    """A fresh, empty database on the session's server (its URL has no password)."""
    return postgres_server.create_database(f"t{next(_databases)}")


@pytest.fixture(params=["sqlite", "postgres"])
def store_location(request, tmp_path) -> str:
    """Where a store is opened: a SQLite folder, or a fresh PostgreSQL database."""
    if request.param == "sqlite":
        return str(tmp_path / "s")
    return request.getfixturevalue("postgres_url")
