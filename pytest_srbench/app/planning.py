"""From configuration and a profile to a frozen plan: pick suites, render and select cases,
resolve targets, and freeze (optionally over the subset of cells a user selected)."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pytest_srbench.app.config import ConfigError, SrbenchConfig, TargetConfig
from pytest_srbench.app.run_options import RunOptions
from pytest_srbench.benchmarks.agent_bench import AgentAdapter
from pytest_srbench.benchmarks.base import Adapter, SuiteRowError
from pytest_srbench.benchmarks.python_defined import PythonDefinedAdapter
from pytest_srbench.benchmarks.rag import RagAdapter
from pytest_srbench.benchmarks.registry import AdapterRegistry
from pytest_srbench.core.benchmark_errors import BenchmarkError
from pytest_srbench.core.models import (
    VARIANT_SEP,
    Case,
    Cell,
    DatasetInfo,
    Limits,
    Manifest,
    Target,
    check_request_params,
    check_retrieval_params,
    variant_of,
)
from pytest_srbench.core.plan.build import expand_repeats, freeze_plan
from pytest_srbench.core.plan.choices import PROFILES
from pytest_srbench.core.plan.planned import CHAT_TARGET_KINDS, planned_keys, runs_on
from pytest_srbench.core.plan.selection import (
    SELECTION_NAME,
    SelectionError,
    Shortfall,
    select_for_profile,
    shortfalls_message,
    stratified_order,
)
from pytest_srbench.core.plan.srbench import SR_BENCH_BENCHMARKS
from pytest_srbench.core.user_benchmarks import PythonBenchmark, defined_benchmarks
from pytest_srbench.datasets.controlled import DatasetDirectory
from pytest_srbench.datasets.suites import (
    Suite,
    SuiteError,
    discover_suites,
    open_suite,
    shipped_suites_dir,
)
from pytest_srbench.simulator.profiles import BUILTIN_MODELS, simulated_target


@dataclass
class PlanDraft:
    """Everything needed to freeze a plan, before the final cell selection is known."""

    config: SrbenchConfig
    targets: list[TargetConfig]
    cases: list[Case]
    dataset: DatasetInfo
    adapter_versions: dict[str, str]
    extension_weights: dict[str, float]
    limits: Limits
    name: str
    auxiliary: dict[str, Target] = field(default_factory=dict)
    benchmark_options: dict[str, dict[str, Any]] = field(default_factory=dict)
    suite_paths: dict[str, Path] = field(default_factory=dict)
    repeats: int = 1
    mode: Literal["live", "preview"] = "live"
    preview_context: dict[str, Any] | None = None
    target_kinds: dict[str, tuple[str, ...]] = field(default_factory=dict)
    sampling: dict[str, Any] = field(default_factory=dict)
    python_uses: dict[str, tuple[str, ...]] = field(default_factory=dict)  # python target -> models
    # benchmark -> the variants of the tests answering it (each target of the benchmark's kinds
    # answers it once per variant, as ``<target>~<variant>``); none: the targets themselves
    variants: dict[str, list[str]] = field(default_factory=dict)

    def frozen_target_kinds(self) -> dict[str, list[str]]:
        """The manifest's ``target_kinds``: benchmarks whose targets are not chat models."""
        return {b: list(k) for b, k in self.target_kinds.items() if tuple(k) != CHAT_TARGET_KINDS}

    def cells(self) -> list[tuple[str, str]]:
        """Case-major (case, target) pairs whose target kind the case's benchmark runs against
        (a RAG case only meets retrieval targets, a chat case only models and routers); with
        variants, each of a benchmark's targets once per variant of its tests."""
        targets, answering = self._planned_targets()
        return planned_keys(
            [(case.id, case.benchmark) for case in self.cases],
            [(target.id, target.kind) for target in targets],
            [],
            self.frozen_target_kinds(),
            answering,
        )

    def _planned_targets(self) -> tuple[list[TargetConfig], dict[str, list[str]] | None]:
        """The plan's targets and, with variants, which of them answer each benchmark."""
        if not self.variants:
            return list(self.targets), None
        plain: list[tuple[str, str]] = [(t.id, t.kind) for t in self.targets]
        kinds = self.frozen_target_kinds()
        base = runs_on({case.benchmark for case in self.cases}, plain, kinds)
        by_id = {target.id: target for target in self.targets}
        targets: dict[str, TargetConfig] = {}
        answering: dict[str, list[str]] = {}
        for benchmark, target_ids in sorted(base.items()):
            answering[benchmark] = []
            for target_id in target_ids:
                variants: list[str | None] = [*self.variants.get(benchmark, ())] or [None]
                for variant in variants:
                    target = by_id[target_id]
                    if variant is not None:
                        target = target.model_copy(
                            update={"id": f"{target_id}{VARIANT_SEP}{variant}"}
                        )
                    targets.setdefault(target.id, target)
                    answering[benchmark].append(target.id)
        order = [t.id for t in self.targets]  # variants beside the target they vary
        ranked = sorted(targets.values(), key=lambda t: (order.index(variant_of(t.id)[0]), t.id))
        return ranked, answering

    def freeze(self, selected: Iterable[tuple[str, str]] | None = None) -> Manifest:
        """Freeze over all cells, or over ``selected`` (a user's subset of them, as (case id,
        target id) pairs)."""
        planned, answering = self._planned_targets()
        targets = [target.to_target() for target in planned]
        cases = self.cases
        dataset = self.dataset
        execution_cells: list[Cell] | None = None
        compatible = set(self.cells())
        if selected is not None:
            chosen = set(selected)
            if chosen != compatible:
                case_ids = {case_id for case_id, _ in chosen}
                target_ids = {target_id for _, target_id in chosen}
                cases = [case for case in cases if case.id in case_ids]
                targets = [target for target in targets if target.id in target_ids]
                execution_cells = [Cell(case_id=c, target_id=t) for c, t in sorted(chosen)]
                dataset = dataset.model_copy(update={"custom_subset": True})
        present = {case.benchmark for case in cases}
        options = {b: o for b, o in self.benchmark_options.items() if b in present}
        bound = {
            target_id
            for o in options.values()
            for target_id in o.values()
            if isinstance(target_id, str)
        }
        subjects = {target.id for target in targets}
        bound |= {
            used
            for target in targets
            if target.kind == "python"
            for used in self.python_uses.get(target.id, ())
            if used not in subjects
        }  # the models a python target's code calls (journaled, priced like a judge's calls)
        auxiliary = {k: v for k, v in self.auxiliary.items() if k in bound}
        return freeze_plan(
            targets=targets,
            cases=cases,
            dataset=dataset,
            adapter_versions=self.adapter_versions,
            extension_weights=self.extension_weights,
            auxiliary_targets=auxiliary,
            execution_cells=execution_cells,
            limits=self.limits,
            sampling={**self.config.sampling, **self.sampling},
            benchmark_options=options,
            name=self.name,
            cost_policy=self.config.cost_policy,
            repeats=self.repeats,
            mode=self.mode,
            preview_context=self.preview_context,
            target_kinds=self.frozen_target_kinds(),
            benchmark_targets=None
            if answering is None
            else {
                b: [t for t in ids if t in {x.id for x in targets}] for b, ids in answering.items()
            },
        )


def python_suite(definition: PythonBenchmark, registry: AdapterRegistry, rootdir: Path) -> Suite:
    """A benchmark defined in Python, as a suite; its adapter is registered under its name."""
    if definition.name not in registry:
        registry.register(PythonDefinedAdapter.of(definition))
    meta = {
        "benchmark": definition.name, "version": definition.version, "source": "python",
        "revision": definition.version, "sha256": definition.sha256, "kind": "python",
        "count": len(definition.rows), "description": definition.description,
    }  # fmt: skip
    return Suite(
        benchmark=definition.name,
        path=rootdir,
        meta=meta,
        rows=tuple(enumerate(definition.rows, start=1)),
    )


def dataset_suite(
    config: SrbenchConfig, rootdir: Path, dataset_id: str, registry: AdapterRegistry
) -> Suite:
    """A RAG or agent dataset from the controlled directories (the suite search path), as a
    suite; its kind adapter is registered under the dataset id."""
    try:
        loaded = DatasetDirectory(suite_search_path(config, rootdir)).load(dataset_id)
    except BenchmarkError as error:
        if error.code == "BENCHMARK_DATASET_NOT_FOUND":
            raise ConfigError(
                f"no adapter for benchmark {dataset_id!r} (registered: {', '.join(registry)}) "
                f"and no RAG or agent dataset of that id — {error}"
            ) from None
        raise ConfigError(str(error)) from None
    dataset = loaded.dataset
    adapter_class = RagAdapter if dataset.kind == "rag" else AgentAdapter
    if dataset_id not in registry:  # an earlier plan of this session may have registered it
        registry.register(adapter_class.for_dataset(dataset_id))
    rows = [case.model_dump(mode="json") for case in dataset.cases]
    meta = {
        "benchmark": dataset_id, "version": dataset.version, "source": f"dataset {dataset_id}",
        "revision": dataset.version, "sha256": loaded.sha256, "kind": dataset.kind,
        "count": len(rows), "corpus": dataset.corpus, "description": dataset.description,
    }  # fmt: skip
    return Suite(
        benchmark=dataset_id,
        path=loaded.path,
        meta=meta,
        rows=tuple(enumerate(rows, start=1)),
    )


def plan_adapters(
    manifest: Manifest, config: SrbenchConfig, registry: AdapterRegistry, rootdir: Path
) -> None:
    """Register the adapter of every benchmark of a frozen plan that has none yet, as planning
    does (a recovery child runs a plan it did not draft): a benchmark defined in Python (its
    definition must still be the one the plan froze) or a RAG or agent dataset."""
    defined = defined_benchmarks()
    frozen = {str(s.get("benchmark")): s for s in manifest.dataset.suites}
    for benchmark in sorted({case.benchmark for case in manifest.cases} - set(registry)):
        if benchmark in defined:
            definition = defined[benchmark]
            sha = (frozen.get(benchmark) or {}).get("sha256")
            if sha is not None and sha != definition.sha256:
                raise ConfigError(
                    f"benchmark {benchmark!r} is defined with other cases than the run it "
                    "recovers froze (its cases' hash differs): recover it with the definition "
                    "the run was planned with"
                )
            python_suite(definition, registry, rootdir)
            continue
        dataset_suite(config, rootdir, benchmark, registry)  # names it when it is neither


def check_offline_agents(
    config: SrbenchConfig,
    adapters: Sequence[Adapter],
    targets: Sequence[TargetConfig],
    offline: bool,
) -> None:
    """Agent benchmarks run against real providers by default; simulated subjects only when
    the run says so explicitly (``--srbench-offline``)."""
    agents = [a.benchmark for a in adapters if isinstance(a, AgentAdapter)]
    simulated = [t.id for t in targets if t.simulated and t.kind != "retrieval"]
    if agents and simulated and not (offline or config.offline):
        raise ConfigError(
            f"agent benchmark {agents[0]} runs against real providers by default, and "
            f"{', '.join(simulated)} {'is' if len(simulated) == 1 else 'are'} simulated: ask "
            "for offline mode to evaluate the simulator on purpose (--srbench-offline; the "
            'service\'s "offline" option; or offline = true in [tool.srbench])'
        )


def suite_search_path(config: SrbenchConfig, rootdir: Path) -> list[Path]:
    """Shipped suites first, then the project's suite folders (which may replace them)."""
    return [shipped_suites_dir(), *[(rootdir / folder) for folder in config.suites]]


def _rows_file(suite: Suite) -> Path:
    return suite.path if suite.path.suffix == ".json" else suite.path / "cases.jsonl"


def render_suite(suite: Suite, adapter: Adapter, seed: int) -> list[tuple[Case, str]]:
    """Every row of a suite as a case with its stratum; errors name the file and line. Rows
    read from the file as they are rendered (``SuiteRows``) are read to the end before a
    row's error is raised, so a file changed since it was opened is named as changed."""
    rendered = []
    seen: set[str] = set()
    rows = iter(suite.rows)
    for number, row in rows:
        problem = None
        try:
            case = adapter.render(row, seed)
        except (SuiteRowError, ValueError) as error:
            problem = f"{_rows_file(suite)} line {number}: {error}"
        else:
            if case.id in seen:
                problem = f"{_rows_file(suite)} line {number}: duplicate case id {case.id!r}"
        if problem is not None:
            for _ in rows:  # the rest read (and the file's hash checked) first
                pass
            raise SuiteError(problem)
        seen.add(case.id)
        rendered.append((case, adapter.stratum(row)))
    return rendered


def build_draft(
    config: SrbenchConfig,
    request: RunOptions,
    registry: AdapterRegistry,
    rootdir: Path,
    user_targets: Sequence[TargetConfig] = (),
    python_uses: Mapping[str, Sequence[str]] | None = None,
    *,
    drop_other_kinds: bool = False,
    python_benchmarks: Collection[str] | None = None,
) -> PlanDraft:
    """Select and render the cases of a profile; resolve the targets.

    ``user_targets`` are ``python`` targets (the user's fixtures, for benchmarks written as
    tests): the benchmarks of ``python_benchmarks`` (default: every one) may run against them
    (a suite's own protocol cannot call your code), and they join the default selection.
    ``python_uses`` names the configured models each of them calls (they join the plan's
    auxiliary targets). ``drop_other_kinds``: see ``SrbenchConfig.select_targets``."""
    if request.profile not in PROFILES:
        raise ConfigError(
            f"unknown profile {request.profile!r}; choose one of {', '.join(PROFILES)}"
        )
    seed = config.seed if request.seed is None else request.seed
    try:  # before any case is rendered, and in every process (an xdist worker says it too)
        check_request_params({**config.sampling, **request.sampling}, "sampling")
    except ValueError as error:
        raise ConfigError(str(error)) from None
    available = discover_suites(suite_search_path(config, rootdir), request.profile)
    datasets: dict[str, Suite] = {}
    if request.benchmarks:
        benchmarks = list(dict.fromkeys(request.benchmarks))
        defined = defined_benchmarks()
        for benchmark in benchmarks:
            if benchmark in defined and benchmark not in available:
                datasets[benchmark] = python_suite(defined[benchmark], registry, rootdir)
                continue
            is_dataset = benchmark in registry and isinstance(
                registry.get(benchmark), RagAdapter | AgentAdapter
            )  # registered by an earlier plan of this session
            if benchmark not in available and (benchmark not in registry or is_dataset):
                datasets[benchmark] = dataset_suite(config, rootdir, benchmark, registry)
                continue
            if benchmark not in registry:
                raise ConfigError(
                    f"no adapter for benchmark {benchmark!r}; registered: {', '.join(registry)}"
                )
            if benchmark not in available:
                raise ConfigError(
                    f"no suite for benchmark {benchmark!r}; searched "
                    + ", ".join(str(path) for path in suite_search_path(config, rootdir))
                )
    else:
        benchmarks = sorted(b for b in available if b in SR_BENCH_BENCHMARKS and b in registry)
        if not benchmarks:
            raise ConfigError("no sr-bench suites found; pass --srbench-benchmark to pick one")
    cases: list[Case] = []
    suite_paths: dict[str, Path] = {}
    provenance = []
    versions: dict[str, str] = {}
    weights: dict[str, float] = {}
    custom = False
    kinds = {kind for b in benchmarks for kind in registry.get(b).target_kinds}
    if user_targets:
        kinds.add("python")
        config = config.model_copy(update={"targets": [*config.targets, *user_targets]})
    targets = config.select_targets(request.targets, kinds=kinds, drop_other_kinds=drop_other_kinds)
    targets = [with_run_retrieval(target, request.retrieval) for target in targets]
    if user_targets and not request.targets:
        targets += [t for t in user_targets if t.id not in {s.id for s in targets}]
    check_offline_agents(config, [registry.get(b) for b in benchmarks], targets, request.offline)
    shortfalls: list[Shortfall] = []  # every benchmark short of cases is named at once
    for benchmark in benchmarks:
        adapter = registry.get(benchmark)
        suite = datasets.get(benchmark) or open_suite(available[benchmark])
        suite_paths[benchmark] = suite.path
        rendered = render_suite(suite, adapter, seed)
        by_id = {case.id: case for case, _ in rendered}
        prepared = suite.meta.get("prepared")
        if isinstance(prepared, dict):
            chosen = prepared_selection(
                suite, prepared, [case.id for case, _ in rendered], request, seed
            )
            custom = custom or bool(prepared.get("custom_subset")) or request.limit is not None
        else:
            order = stratified_order(
                [(case.id, stratum) for case, stratum in rendered],
                seed,
                round_robin=adapter.round_robin,
            )
            counts = adapter.profile_counts(suite.meta)
            try:
                chosen = select_for_profile(
                    order, request.profile, counts, benchmark=benchmark, limit=request.limit
                )
            except Shortfall as shortfall:
                shortfalls.append(shortfall)
                continue
            custom = custom or len(chosen) < counts[request.profile]
        cases.extend(by_id[case_id] for case_id in chosen)
        provenance.append({**suite.provenance(), "selected": len(chosen)})
        versions[benchmark] = adapter.version
        if benchmark not in SR_BENCH_BENCHMARKS:
            weights[benchmark] = float(suite.meta.get("weight", adapter.weight))
    if shortfalls:
        raise SelectionError(shortfalls_message(shortfalls))
    dataset = DatasetInfo(
        profile=request.profile,
        seed=seed,
        selection=SELECTION_NAME,
        custom_subset=custom,
        suites=provenance,
    )
    auxiliary, options = bind_auxiliary(config, targets, [registry.get(b) for b in benchmarks])
    uses = {key: tuple(names) for key, names in (python_uses or {}).items()}
    auxiliary.update(used_targets(config, uses, auxiliary))
    return PlanDraft(
        config=config,
        targets=targets,
        cases=expand_repeats(cases, request.repeats),
        dataset=dataset,
        adapter_versions=versions,
        extension_weights=weights,
        limits=config.frozen_limits(request.limits),
        name=request.name,
        auxiliary=auxiliary,
        benchmark_options=options,
        suite_paths=suite_paths,
        repeats=request.repeats,
        mode=request.mode,
        preview_context=request.preview_context,
        target_kinds={
            b: registry.get(b).target_kinds
            + (
                ("python",)
                if user_targets and (python_benchmarks is None or b in python_benchmarks)
                else ()
            )
            for b in benchmarks
        },
        sampling=dict(request.sampling),
        python_uses=uses,
    )


def with_run_retrieval(target: TargetConfig, settings: Mapping[str, Any]) -> TargetConfig:
    """A retrieval target with the run's retrieval settings (``RunOptions.retrieval``) over its
    own, so the plan freezes what its searches send; other targets as they are."""
    if target.kind != "retrieval" or not settings:
        return target
    merged = {**target.retrieval, **settings}
    try:
        check_retrieval_params(merged, target.id)
    except ValueError as error:
        raise ConfigError(str(error)) from None
    return target.model_copy(update={"retrieval": merged})


def used_targets(
    config: SrbenchConfig, uses: Mapping[str, tuple[str, ...]], auxiliary: Mapping[str, Target]
) -> dict[str, Target]:
    """The configured chat targets that python targets call, frozen as auxiliary targets."""
    known = config.all_targets()
    found: dict[str, Target] = {}
    for user, names in uses.items():
        for name in names:
            if name not in known:
                raise ConfigError(
                    f"target {user!r} uses {name!r}, which is not a configured target; known "
                    f"targets: {', '.join(sorted(known))}"
                )
            if known[name].kind not in CHAT_TARGET_KINDS:
                raise ConfigError(f"target {user!r} uses {name!r}, which is not a chat model")
            if name not in auxiliary:
                found[name] = known[name].to_target()
    return found


def prepared_selection(
    suite: Suite, prepared: dict[str, Any], ids: list[str], request: RunOptions, seed: int
) -> list[str]:
    """A prepared suite is used as stored; it must have been prepared for this profile and seed."""
    if prepared.get("profile") != request.profile or prepared.get("seed") != seed:
        raise ConfigError(
            f"{suite.path}: prepared dataset profile/seed ({prepared.get('profile')}, {prepared.get('seed')}) "
            f"differs from the requested run profile/seed ({request.profile}, {seed})"
        )
    return ids[: request.limit] if request.limit is not None else ids


def bind_auxiliary(
    config: SrbenchConfig, targets: Sequence[TargetConfig], adapters: Sequence[Adapter]
) -> tuple[dict[str, Target], dict[str, dict[str, Any]]]:
    """Judge / user-simulator bindings per benchmark: configured ones, or the built-in simulated
    ``sim-judge`` / ``sim-user`` when every subject target is simulated. A real target is never
    graded by a simulator without the user saying so: that is an error naming the setting.

    A built-in simulated judge or user is always served by a simulator: the external one that
    every simulated subject points at, else the simulator the session starts. It never takes a
    real subject's ``base_url``, so its calls never reach the real server."""
    auxiliary = {judge.id: judge.to_target() for judge in config.judges}
    known = {t.id: t.to_target() for t in config.all_targets().values()} | auxiliary
    options = {benchmark: dict(values) for benchmark, values in config.benchmarks.items()}
    all_simulated = all(t.simulated for t in targets)
    sim_url = external_simulator_url(targets)
    for adapter in adapters:
        for role in adapter.auxiliary_roles:
            bound = options.get(adapter.benchmark, {}).get(role)
            if bound is None:
                if not all_simulated:
                    raise ConfigError(missing_auxiliary(adapter.benchmark, role))
                bound = BUILTIN_AUXILIARY[role]
                options.setdefault(adapter.benchmark, {})[role] = bound
            if bound not in known:
                if bound in BUILTIN_MODELS:
                    builtin = simulated_target(BUILTIN_MODELS[bound])
                    known[bound] = (
                        builtin.model_copy(update={"base_url": sim_url}) if sim_url else builtin
                    )
                else:
                    raise ConfigError(
                        f"{adapter.benchmark}: {role} target {bound!r} is not defined"
                    )
            auxiliary[bound] = known[bound]
    return auxiliary, options


BUILTIN_AUXILIARY = {"judge": "sim-judge", "simulator": "sim-user"}


def missing_auxiliary(benchmark: str, role: str) -> str:
    """The one line that says how to give ``benchmark`` its ``role`` target."""
    builtin = BUILTIN_AUXILIARY.get(role, "sim-judge")
    return (
        f"{benchmark} needs a {role} target: add [[tool.srbench.judges]] with the model to use "
        f'and set [tool.srbench.benchmarks.{benchmark}] {role} = "<its id>"; or {role} = '
        f'"{builtin}" for the built-in simulated one (a deterministic rule, labelled simulated); '
        "or deselect the benchmark"
    )


def external_simulator_url(targets: Sequence[TargetConfig]) -> str | None:
    """The one external simulator the simulated chat subjects point at, if they share one;
    ``None`` means the simulator the session starts (real subjects' URLs never count)."""
    urls = {t.base_url for t in targets if t.simulated and t.kind in CHAT_TARGET_KINDS}
    found = urls.pop() if len(urls) == 1 else None
    return found


def builtin_auxiliary_needed(config: SrbenchConfig, benchmarks: Sequence[str] | None) -> bool:
    """Whether the configuration binds a built-in simulated judge or user (served by the
    session's simulator) to one of ``benchmarks`` (``None``: any benchmark). Known before the
    plan, so the session can start the simulator before any worker does."""
    defined = {t.id for t in [*config.targets, *config.judges]}
    for benchmark, values in config.benchmarks.items():
        if benchmarks is not None and benchmark not in benchmarks:
            continue
        for value in values.values():
            if isinstance(value, str) and value in BUILTIN_MODELS and value not in defined:
                return True
    return False
