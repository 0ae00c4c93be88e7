"""Cells as pytest items: a marked test's parametrizations (the built-in suites' module among
them), the lean protocol for the bodies that started ahead, what a cell's report carries, and
what the terminal keeps of it."""

from __future__ import annotations

import contextlib
import importlib
import weakref
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_srbench.core.models import variant_of
from pytest_srbench.engine.engine import CellOutcome

_PYTHON_REPORTINFO: Any = pytest.Function.reportinfo  # (pytest's, for a test function's item)


class CellNotGraded(Exception):
    """A cell that could not reach a graded outcome (its reason is one line)."""


SUITES_NODEID = "srbench"  # the built-in test module's node id
SUITES_MODULE = "pytest_srbench.plugin.srbench_suites"
SUITES_TEST = "suite"


class SuitesModule(pytest.Module):
    """The built-in test module of the suite benchmarks (``srbench_suites.py``) as a session
    collects it: imported by its module name wherever the package is installed, its test
    found whatever the project's ``python_functions`` says, and standing at the project's root
    as ``srbench`` (its node id): the root's ``conftest.py`` hooks see its cells as they see
    every test of the session (pytest routes an item's hooks by its path)."""

    @classmethod
    def for_session(cls, session: pytest.Session) -> SuitesModule:
        config = session.config
        path = Path(config.rootpath) / SUITES_NODEID
        # the conftest files that apply here, found as pytest finds them for each folder it
        # collects (it routes an item's hooks to the conftest files its path has)
        config.pluginmanager._loadconftestmodules(
            path,
            config.getoption("importmode"),
            Path(config.rootpath),
            consider_namespace_packages=bool(config.getini("consider_namespace_packages")),
        )
        return cls.from_parent(session, path=path, nodeid=SUITES_NODEID)

    def _getobj(self) -> ModuleType:
        return importlib.import_module(SUITES_MODULE)

    def funcnamefilter(self, name: str) -> bool:
        return name == SUITES_TEST


def require_graded(outcome: CellOutcome) -> None:
    """A cell that reached no graded outcome fails its item with a one-line reason."""
    __tracebackhide__ = True
    if outcome.status != "completed":
        reason = outcome.reason or (outcome.result or {}).get("error") or outcome.status
        raise CellNotGraded(f"{outcome.status}: {reason}")


def outcome_summary(case_id: str, target_id: str, outcome: CellOutcome) -> dict[str, Any]:
    """What travels on a cell's test report (also across xdist): status, grade, reason."""
    result = outcome.result or {}
    details = result.get("details") or {}
    return {
        "case_id": case_id,
        "target_id": target_id,
        "status": outcome.status,
        "correct": result.get("correct"),
        "answer": result.get("answer"),
        "answer_status": details.get("answer_status"),
        "quality_failure": details.get("quality_failure"),
        "routed_to": (details.get("routing") or {}).get("selected_model"),
    }


def junit_properties(
    case_id: str, target_id: str, outcome: CellOutcome
) -> list[tuple[str, object]]:
    """A cell's JUnit XML properties (what ``record_property`` would add): its benchmark, case,
    target and variant, whether it is correct (a cell without a grade is not), its answer's
    status, its cost and latency (each left out when unknown)."""
    result = outcome.result or {}
    details = result.get("details") or {}
    variant = variant_of(target_id)[1]
    found: list[tuple[str, object]] = [
        ("benchmark", result.get("benchmark") or case_id.partition("/")[0]),
        ("case", case_id),
        ("target", target_id),
    ]
    if variant is not None:
        found.append(("variant", variant))
    found.append(("status", outcome.status))
    found.append(("correct", "true" if result.get("correct") is True else "false"))
    for key, value in (
        ("answer_status", details.get("answer_status")),
        ("cost_usd", result.get("cost_usd")),
        ("latency_s", result.get("latency_s")),
    ):
        if value is not None:
            found.append((key, f"{value:.6g}" if isinstance(value, float) else value))
    return found


class CountedCell:
    """What pytest's terminal keeps of a cell's passed call report once it has logged it.

    The terminal keeps every report to the session's end but reads those of a cell's
    categories (correct, wrong, routed) only to count them for its last line; a report holds
    about 1.1 kB (its keywords, lists, times and the cell's summary: 110 MB at 100,000 cells).
    This holds the node id and answers what a counted passed call report answers. It is an
    ordinary object (about 90 bytes), not a slotted one (48): other plugins read the reports
    the terminal kept at the session's end, some through ``report.__dict__`` (hypothesis's
    does), and one without a ``__dict__`` failed the session's last step."""

    when = "call"
    outcome = "passed"
    passed = True
    failed = False
    skipped = False
    count_towards_summary = True
    sections: tuple[tuple[str, str], ...] = ()
    longrepr = None

    def __init__(self, nodeid: str) -> None:
        self.nodeid = nodeid

    def __repr__(self) -> str:
        return f"<CountedCell {self.nodeid}>"


# a passed cell's test status (the runner's ``pytest_report_teststatus``)
CORRECT, WRONG, ROUTED = "correct", "wrong", "routed"
CELL_CATEGORIES = (CORRECT, WRONG, ROUTED)

_TMP_PATH_RESULTS: pytest.StashKey[dict[str, bool]] | None
try:  # pytest's tmp_path plugin records each phase's result in every item's stash (200 bytes)
    from _pytest.tmpdir import tmppath_result_key as _TMP_PATH_RESULTS
except ImportError:  # pragma: no cover - another pytest: nothing to let go
    _TMP_PATH_RESULTS = None


def _nothing() -> None:
    return None


# The hooks the lean protocol does not call, and the plugins whose implementations of them do
# nothing a cell item needs: pytest's own (the protocol stands in for them), this plugin's,
# and per-test seeding, timeouts, property-based examples and reruns, which do not apply to a
# cell the engine runs (it has its own deadlines, and no test body runs in pytest's thread).
SKIPPED_PHASE_HOOKS = ("pytest_runtest_setup", "pytest_runtest_call", "pytest_runtest_teardown")
LEAN_SAFE_PLUGINS = ("_pytest", "pytest_srbench", "pytest_randomly", "pytest_timeout",
                     "_hypothesis_pytestplugin", "pytest_rerunfailures", "xdist")  # fmt: skip


def plugins_in_skipped_phases(pluginmanager: pytest.PytestPluginManager) -> list[str]:
    """The registered plugins (by module) that hook into a phase the lean protocol skips and
    are not known to do nothing for a cell: the session runs the full protocol for them (a
    plugin's ``pytest_runtest_makereport`` may rely on what its set-up hook stored)."""
    found: list[str] = []
    for name in SKIPPED_PHASE_HOOKS:
        for impl in getattr(pluginmanager.hook, name).get_hookimpls():
            plugin = impl.plugin  # a module, or an object registered as a plugin
            module = plugin.__name__ if isinstance(plugin, ModuleType) else type(plugin).__module__
            if module.split(".")[0] not in LEAN_SAFE_PLUGINS and module not in found:
                found.append(module)
    return found


_FUNCTION_PLACES: weakref.WeakKeyDictionary[Any, tuple[str, int | None]] = (
    weakref.WeakKeyDictionary()
)


_NO_KEYWORD_MATCHES: frozenset[str] = frozenset()


class CellCompactor:
    """Lets go of what pytest gives every collected test item and a cell's item does not need
    (about 0.6 kB of each cell's ~2.4 kB ``Function``), item by item as pytest collects them,
    so that the session never holds it for every cell at once:

    - its fixture request and argument values, made again when the item runs pytest's own
      protocol (``runtestprotocol`` does so for every item whose request it let go after
      running it, as for a rerun); a cell that runs lean never reads them;
    - its empty set of extra ``-k`` names: one shared empty set (``-k`` only reads it);
    - its parametrization's scopes and marks, equal for every cell of one test function:
      one shared copy each (pytest only reads them).
    """

    def __init__(self) -> None:
        self._shared: dict[tuple[Any, ...], Any] = {}

    def __call__(self, item: pytest.Item) -> None:
        callspec = getattr(item, "callspec", None)
        if not isinstance(item, pytest.Function) or callspec is None:
            return
        if getattr(item, "_request", None) and hasattr(item, "_initrequest"):
            item._request = False  # type: ignore[assignment]
            item.funcargs = None  # type: ignore[assignment]
        if type(item.extra_keyword_matches) is set and not item.extra_keyword_matches:
            item.extra_keyword_matches = _NO_KEYWORD_MATCHES  # type: ignore[assignment]
        for field in ("_arg2scope", "marks"):
            value = getattr(callspec, field, None)
            if isinstance(value, dict | list):
                key = (field, tuple(value.items()) if isinstance(value, dict) else tuple(value))
                try:
                    kept = self._shared.setdefault(key, value)
                except TypeError:  # a mark with unhashable arguments: the item keeps its own
                    continue
                if kept is not value:
                    object.__setattr__(callspec, field, kept)  # (a frozen dataclass)


def cell_location(item: pytest.Item) -> tuple[str, int | None, str]:
    """The item's ``location`` as pytest makes it (and keeps: its reports read it), with the
    file and line found once per test function rather than once per cell (pytest reads the
    function's source path and checks that the file exists for every item: a tenth of a
    millisecond per cell); an item whose class reports its own place keeps pytest's way.
    Set as an attribute, as pytest's cached property would keep it, without making the item's
    attribute dictionary (64 bytes a cell)."""
    obj = getattr(item, "obj", None)
    if type(item).reportinfo is not _PYTHON_REPORTINFO or obj is None:
        return item.location
    try:
        place = _FUNCTION_PLACES.get(obj)
    except TypeError:  # not weakly referenceable
        return item.location
    if place is None:
        location = item.location
        _FUNCTION_PLACES[obj] = (location[0], location[1])
        return location
    assert isinstance(item, pytest.Function)
    location = (place[0], place[1], item.getmodpath())
    item.location = location
    return location


def run_cell_protocol(item: pytest.Item, runtest: Callable[[], None] | None = None) -> None:
    """logstart → setup / call / teardown reports → logfinish, without capture wrappers;
    ``runtest`` is the call phase (default: the item's own).

    Reports are made and logged through the ordinary hooks, so terminal output, xdist,
    JUnit XML and ``-x`` behave exactly as for any item.
    """
    ihook = item.ihook
    reraise: tuple[type[BaseException], ...] = (pytest.exit.Exception, KeyboardInterrupt)
    location = cell_location(item)
    ihook.pytest_runtest_logstart(nodeid=item.nodeid, location=location)
    phases = (("setup", _nothing), ("call", runtest or item.runtest), ("teardown", _nothing))
    for when, func in phases:
        call = pytest.CallInfo.from_call(func, when=when, reraise=reraise)  # type: ignore[arg-type]
        report = ihook.pytest_runtest_makereport(item=item, call=call)
        ihook.pytest_runtest_logreport(report=report)
    ihook.pytest_runtest_logfinish(nodeid=item.nodeid, location=location)


def let_go(item: pytest.Item) -> None:
    """What a cell's item holds that nothing reads once its tear-down is reported: pytest's
    cached location (made again if ever asked), its JUnit properties (its reports have them)
    and tmp_path's record of each phase's result (read only by the fixture's tear-down); an
    emptied stash becomes a new one."""
    with contextlib.suppress(AttributeError):  # (never asked for)
        del item.location
    if item.user_properties:
        item.user_properties = []
    if _TMP_PATH_RESULTS is not None and _TMP_PATH_RESULTS in item.stash:
        del item.stash[_TMP_PATH_RESULTS]
    if not len(item.stash):  # a dict keeps its grown table when emptied: a new stash
        _renew_stash(item)


def _renew_stash(item: pytest.Item) -> None:
    """An empty stash in place of an emptied one (160 bytes less per cell)."""
    old, item.stash = item.stash, pytest.Stash()
    if getattr(item, "_store", None) is old:  # pytest's deprecated alias of the stash
        item._store = item.stash
