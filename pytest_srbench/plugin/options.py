"""The ``--srbench-*`` command-line options and their resolution against the configuration."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_srbench.app.run_flags import RUN_FLAGS
from pytest_srbench.core.compare.gate import parse_margin
from pytest_srbench.core.errors import InputError
from pytest_srbench.core.plan.choices import (
    DEFAULT_MARGIN,
    GATE_INTERVALS,
    GATE_MODES,
    GATE_SCOPES,
    TRANSPORTS,
)

if TYPE_CHECKING:  # the configuration and pydantic load only when srbench is active
    from pytest_srbench.app.config import SrbenchConfig
    from pytest_srbench.app.run_options import RunOptions
    from pytest_srbench.core.shards import ShardSpec

SHARD_ENV = "SRBENCH_SHARD"


def _margin(text: str) -> float:
    try:
        return parse_margin(text)
    except InputError as error:
        raise argparse.ArgumentTypeError(f"--srbench-margin {error}") from None


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer, got {text!r}")
    return value


def _number_pair(text: str) -> tuple[str, int | float]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    try:
        number = float(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{key.strip()} needs a number, got {value!r}") from None
    return key.strip(), int(number) if number.is_integer() else number


def _setting_pair(text: str) -> tuple[str, str | int]:
    """``KEY=VALUE`` with an integer value when it is one (the run options check the rest)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip() or not value.strip():
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, got {text!r}")
    value = value.strip()
    return key.strip(), int(value) if value.isascii() and value.isdecimal() else value


def _preview_pair(text: str) -> tuple[str, str | int]:
    key, sep, value = text.partition("=")
    key = key.strip()
    if not sep or key not in ("session_id", "conversation_id", "sampling_seed"):
        raise argparse.ArgumentTypeError(
            f"expected session_id=…, conversation_id=… or sampling_seed=N, got {text!r}"
        )
    if key == "sampling_seed":
        try:
            return key, int(value)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"sampling_seed needs an integer, got {value!r}"
            ) from None
    return key, value


PARSERS: dict[str, Callable[[str], Any]] = {
    "int": int,
    "positive_int": _positive_int,
    "number_pairs": _number_pair,
    "preview_pairs": _preview_pair,
    "setting_pairs": _setting_pair,
}


def _add_run_options(group: Any) -> None:
    """The flags of the run options, generated from their one table (``app/run_flags.py``)."""
    for flag in RUN_FLAGS.values():
        if flag.kind == "switch":
            group.addoption(flag.name, action="store_true", help=flag.help)
            continue
        kwargs: dict[str, Any] = {"help": flag.help}
        if flag.metavar:
            kwargs["metavar"] = flag.metavar
        if flag.kind in PARSERS:
            kwargs["type"] = PARSERS[flag.kind]
        if flag.choices:
            kwargs["choices"] = flag.choices
        if flag.repeat:
            kwargs["action"] = "append"
        group.addoption(flag.name, **kwargs)


def add_options(parser: pytest.Parser) -> None:
    group = parser.getgroup("srbench", "pytest-srbench: benchmark LLMs and routers")
    _add_run_options(group)
    group.addoption(
        "--srbench-store",
        metavar="DIR|URL",
        help="store folder (default .srbench under the rootdir) or a postgresql:// database "
        "(credentials from PGPASSWORD / ~/.pgpass / a libpq service file)",
    )
    group.addoption(
        "--srbench-json",
        nargs="?",
        const="",
        metavar="PATH",
        help="write the JSON report (default under reports/)",
    )
    group.addoption(
        "--srbench-html",
        nargs="?",
        const="",
        metavar="PATH",
        help="write the self-contained HTML report (default reports/srbench-report.html)",
    )
    group.addoption(
        "--srbench-config",
        metavar="FILE",
        help="configuration file (default srbench.toml / pyproject.toml)",
    )
    group.addoption(
        "--srbench-transport", choices=TRANSPORTS, help="HTTP transport (default aiohttp)"
    )
    group.addoption(
        "--srbench-baseline",
        metavar="RUN_ID|PATH",
        help="gate against this baseline: a run id in the store or a JSON report file",
    )
    group.addoption(
        "--srbench-gate",
        choices=GATE_MODES,
        help="gate mode against --srbench-baseline (default regression)",
    )
    group.addoption(
        "--srbench-margin",
        type=_margin,
        metavar="M",
        help=f"non-inferiority margin in accuracy points, e.g. 0.05 (default {DEFAULT_MARGIN})",
    )
    group.addoption(
        "--srbench-gate-interval",
        choices=GATE_INTERVALS,
        help="paired interval the gate reads (default wald: stratified, with a variance floor "
        "per benchmark; newcombe undercovers when runs disagree often, up to 16 %% false "
        "alarms with one case per benchmark; hoeffding is conservative)",
    )
    group.addoption(
        "--srbench-gate-scope",
        choices=GATE_SCOPES,
        help="gate the macro score or every benchmark on its own (benchmark: a drop in any "
        "one fails; Bonferroni-adjusted). Default: macro for the full sr-bench set, per "
        "benchmark otherwise (user benchmarks, marked tests, subsets)",
    )
    group.addoption(
        "--srbench-allow-mixed-sources",
        action="store_true",
        default=None,
        help="gate even when a benchmark's cases come from different data than the baseline's "
        "(a kind, released revision or synthetic seed); the verdict then says so",
    )
    group.addoption(
        "--srbench-cache",
        action="store_true",
        default=None,
        help="answer a call whose frozen request equals a completed live call in the store from "
        "that call's saved evidence (a 'replayed' receipt: no spend, no latency; the report says "
        "'from cache'); [tool.srbench] cache = \"use\"",
    )
    group.addoption(
        "--srbench-cache-only",
        action="store_true",
        help="like --srbench-cache, and a cache miss fails its cell (no request is sent)",
    )
    group.addoption(
        "--srbench-cache-repeats",
        action="store_true",
        help="with the cache: let a repeat (--srbench-repeats) take another repeat's cached "
        "answer (by default each repeat is a fresh sample)",
    )
    group.addoption(
        "--srbench-allow-cached",
        action="store_true",
        default=None,
        help="gate even when cells of either run came from the response cache; the verdict "
        "then says so",
    )
    group.addoption(
        "--srbench-recover",
        metavar="PLAN.json",
        help="run a recovery child over a reviewed plan (srbench recover-plan); needs --srbench-run-key",
    )
    group.addoption(
        "--srbench-acknowledge-new-attempt",
        action="store_true",
        help="with a --mode failed recovery plan: attempt cells that already spent money again",
    )
    group.addoption(
        "--srbench-run-key",
        metavar="KEY",
        help="idempotency key: the same key and plan reuse the run",
    )
    group.addoption(
        "--srbench-wait-s",
        metavar="SECONDS",
        type=_wait_seconds,
        default=None,
        help="when the run of --srbench-run-key is being executed by another live process: "
        f"wait up to SECONDS for it to end, then report it (default {DEFAULT_WAIT_S:g}); on "
        f"timeout say so in one line and exit with status {HELD_ELSEWHERE_EXIT}",
    )
    group.addoption(
        "--srbench-full-protocol",
        action="store_true",
        help="run cells through pytest's whole per-item protocol (set-up, capture, every phase "
        "hook), as ordinary tests: slower; --pdb and --trace imply it, and so does another "
        "plugin's hook into a test's set-up, call or tear-down",
    )
    group.addoption(
        "--srbench-junit-wrong",
        choices=("property", "failure"),
        default="property",
        help="a wrong answer in --junitxml: a property of its passed testcase (correct=false, "
        "default) or a <failure> of its testcase (the XML only: the terminal keeps 'w' and "
        "the exit status is unchanged)",
    )
    group.addoption(
        "--srbench-shard",
        metavar="K/N",
        help="run shard K of N of one run (N invocations with the same plan and "
        "--srbench-run-key); env SRBENCH_SHARD=K/N also works",
    )


DEFAULT_WAIT_S = 600.0
HELD_ELSEWHERE_EXIT = 75  # EX_TEMPFAIL: the run is held by another live process; try later


def _wait_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0 <= value <= 86400:
        raise argparse.ArgumentTypeError("must be a number of seconds in 0..86400")
    return value


@dataclass(frozen=True)
class Settings:
    """Resolved options: command line over configuration over defaults."""

    run: RunOptions
    store: Path
    reports: Path
    concurrency: int
    json_path: Path | None
    html_path: Path | None
    transport: str
    run_key: str | None
    baseline: str | None = None
    wait_s: float = DEFAULT_WAIT_S  # how long a process waits for the owner of its run key
    gate: str = "regression"
    margin: float = DEFAULT_MARGIN
    gate_interval: str = "wald"
    gate_scope: str | None = None  # None: macro for the full sr-bench set, else benchmark
    allow_mixed_sources: bool = False
    cache: str = "off"  # the response cache: off | use | only (core/calls/cache.py)
    cache_repeats: bool = False
    allow_cached: bool = False
    recover: Path | None = None
    acknowledge_new_attempt: bool = False
    shard: ShardSpec | None = None
    # what the store is opened from: the folder ``store`` itself, or a postgresql:// URL
    # (``store`` is then the local folder for files written next to a run on this host)
    store_location: str = ""
    # srbench was asked for on the command line (not only by the configuration's profile):
    # only then may a session that collected no benchmark test run the shipped suites
    on_command_line: bool = True

    @property
    def location(self) -> str:
        return self.store_location or str(self.store)


def _wait_option(config: pytest.Config) -> float:
    value = config.getoption("srbench_wait_s", None)
    return DEFAULT_WAIT_S if value is None else float(value)


def _output_path(option: str | None, default: Path, invoked: Path) -> Path | None:
    """``None`` when the flag is absent; its default when given bare; relative to where pytest
    was invoked otherwise."""
    if option is None:
        return None
    path = Path(option) if option else default
    return path if path.is_absolute() else invoked / path


def _check_report_path(flag: str, option: str | None, path: Path | None) -> None:
    """A report path that names a directory is a usage error before anything runs (a path
    that turns out unwritable is reported when the report is written; the run is kept)."""
    if path is None:
        return
    from pytest_srbench.app.config import ConfigError
    from pytest_srbench.render.outputs import OutputError, check_output_file

    try:
        check_output_file(option or path)
        check_output_file(path)
    except OutputError as error:
        raise ConfigError(f"{flag}: {error}") from None


def is_active(config: pytest.Config) -> bool:
    """srbench runs when the command line asks for it (``asked_on_command_line``), when the
    project's configuration sets a ``profile`` (a plain ``pytest`` then runs its benchmarks),
    and in an xdist worker of a session where it runs."""
    return bool(
        asked_on_command_line(config)
        or (getattr(config, "workerinput", None) or {}).get("srbench_project") is not None
        or _profile_configured(config)
    )


def asked_on_command_line(config: pytest.Config) -> bool:
    """A profile, a benchmark, a recovery or a preview was asked for on the command line
    (``--srbench-mode preview`` alone previews the configured profile)."""
    return bool(
        config.getoption("srbench_profile")
        or config.getoption("srbench_benchmark")
        or config.getoption("srbench_recover")
        or config.getoption("srbench_mode") == "preview"
    )


def _profile_configured(config: pytest.Config) -> bool:
    """The project's configuration sets a profile. A file that cannot be read says nothing
    here: a plain session goes on, and a srbench session names the problem when it loads it."""
    from pytest_srbench.app.config_files import config_table

    explicit = config.getoption("srbench_config")
    try:
        found = config_table(Path(config.rootpath), Path(explicit) if explicit else None)
    except InputError:
        return False
    return found is not None and "profile" in found[0]


SKIP_REASON = (
    "a srbench benchmark: run it with pytest --srbench-profile=smoke (or set profile in "
    "[tool.srbench])"
)


class BenchmarksSkipped:
    """Registered when srbench is not active: each marked test is skipped with one line that
    says how to run it, whatever fixtures it takes (``-m "not srbench"`` deselects them)."""

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, items: list[pytest.Item]) -> None:
        skip = pytest.mark.skip(reason=SKIP_REASON)
        for item in items:
            if item.get_closest_marker("srbench") is not None:
                item.add_marker(skip)


def resolve(config: pytest.Config, project: SrbenchConfig) -> Settings:
    rootdir = Path(config.rootpath)
    store = config.getoption("srbench_store") or project.store
    location = ""
    if "://" in store:  # a path would swallow the "//" and make folders of a URL
        from pytest_srbench.app.config import ConfigError
        from pytest_srbench.store.base import StoreError
        from pytest_srbench.store.opening import DEFAULT_LOCAL_DIR, check_location

        try:
            check_location(store)
        except StoreError as error:
            raise ConfigError(f"--srbench-store: {error}") from None
        location, store = store, DEFAULT_LOCAL_DIR
    reports = rootdir / project.reports
    invoked = Path(config.invocation_params.dir)
    json_path = _output_path(
        config.getoption("srbench_json"), reports / "srbench-report.json", invoked
    )
    html_path = _output_path(
        config.getoption("srbench_html"), reports / "srbench-report.html", invoked
    )
    _check_report_path("--srbench-json", config.getoption("srbench_json"), json_path)
    _check_report_path("--srbench-html", config.getoption("srbench_html"), html_path)
    store_path = Path(store)
    if not store_path.is_absolute():
        store_path = rootdir / store_path
    workerinput = getattr(config, "workerinput", None) or {}
    if workerinput.get("srbench_store"):  # the controller's store, wherever this worker runs
        store_path = Path(workerinput["srbench_store"])
    run = run_options(config, project)
    return Settings(
        run=run,
        store=store_path,
        reports=reports,
        concurrency=run.concurrency or project.concurrency,
        json_path=json_path,
        html_path=html_path,
        transport=config.getoption("srbench_transport") or project.transport,
        run_key=config.getoption("srbench_run_key"),
        wait_s=_wait_option(config),
        baseline=config.getoption("srbench_baseline"),
        gate=config.getoption("srbench_gate") or "regression",
        margin=config.getoption("srbench_margin") or DEFAULT_MARGIN,
        gate_interval=config.getoption("srbench_gate_interval") or "wald",
        gate_scope=config.getoption("srbench_gate_scope"),
        allow_mixed_sources=bool(config.getoption("srbench_allow_mixed_sources")),
        cache=cache_mode(config, project),
        cache_repeats=bool(config.getoption("srbench_cache_repeats")),
        allow_cached=bool(config.getoption("srbench_allow_cached")),
        recover=_output_path(config.getoption("srbench_recover"), Path(), invoked),
        acknowledge_new_attempt=bool(config.getoption("srbench_acknowledge_new_attempt")),
        shard=shard_option(config),
        store_location=location,
        on_command_line=asked_on_command_line(config),
    )


def cache_mode(config: pytest.Config, project: SrbenchConfig) -> str:
    """The response cache's mode: ``only`` (--srbench-cache-only), ``use`` (--srbench-cache or
    ``cache = "use"``) or ``off``."""
    if config.getoption("srbench_cache_only"):
        return "only"
    if config.getoption("srbench_cache") or project.cache == "use":
        return "use"
    return "off"


def shard_option(config: pytest.Config) -> ShardSpec | None:
    """``--srbench-shard K/N`` (or ``SRBENCH_SHARD``), checked: it needs a run key (the shards
    find their one run by it) and is not a recovery."""
    import os

    from pytest_srbench.app.config import ConfigError
    from pytest_srbench.core.shards import parse_shard

    text = config.getoption("srbench_shard")
    source = "--srbench-shard"
    workerinput = getattr(config, "workerinput", None) or {}
    if "srbench_shard" in workerinput:  # the controller's (a remote worker lacks its env)
        text = workerinput["srbench_shard"]
    elif text is None:
        text = os.environ.get(SHARD_ENV, "").strip() or None
        source = SHARD_ENV
    if text is None:
        return None
    try:
        spec = parse_shard(text, source=source)
    except InputError as error:
        raise ConfigError(str(error)) from None
    if not config.getoption("srbench_run_key"):
        raise ConfigError(
            f"{source} needs --srbench-run-key KEY: the shards find their one run by it (give "
            "every shard the same key, e.g. the CI run id)"
        )
    if config.getoption("srbench_recover"):
        raise ConfigError(f"{source} cannot shard a recovery (--srbench-recover); run it whole")
    return spec


def run_options(config: pytest.Config, project: SrbenchConfig) -> RunOptions:
    """The run options the flags give (the profile falls back to the configuration's),
    validated like every other entry point's."""
    from pytest_srbench.app.config import ConfigError
    from pytest_srbench.app.run_options import validated_options

    values: dict[str, object] = {}
    for name, flag in RUN_FLAGS.items():
        value = config.getoption(flag.dest)
        if value is None or value is False:
            continue
        values[name] = dict(value) if flag.pairs else value
    values.setdefault("profile", project.profile)
    try:
        return validated_options(values)
    except InputError as error:
        raise ConfigError(str(error)) from None


PATH_OPTIONS = ("--srbench-store", "--srbench-baseline", "--srbench-recover", "--srbench-config",
                "--srbench-json", "--srbench-html")  # fmt: skip


def check_spaced_paths(config: pytest.Config) -> None:
    """A path-valued option written with a space (``--srbench-store DIR``) whose value exists
    on disk may have been taken by pytest for a test path: pytest settles its rootdir and
    configuration file before any plugin's options are known. Where that moved them (the
    project's configuration then goes unread), refuse the form with one line naming
    ``--opt=VALUE``; where it did not, the value is the option's as usual."""
    args = list(config.invocation_params.args)
    spaced = [
        (option, args[index + 1])
        for index, option in enumerate(args[:-1])
        if option in PATH_OPTIONS and not args[index + 1].startswith("-")
    ]
    invoked = Path(config.invocation_params.dir)
    suspects = [(option, value) for option, value in spaced if (invoked / value).exists()]
    if not suspects:
        return
    settled = _setup_without_suspects(config)
    if settled is None or settled == (config.rootpath, config.inipath):
        return
    option, value = suspects[0]
    raise pytest.UsageError(
        f"pytest-srbench: {option} {value}: pytest read {value!r} as a test path before srbench's "
        f"options were known, which moved its rootdir to {config.rootpath} (so the project's "
        f"configuration was not read); write it {option}={value}"
    )


def _setup_without_suspects(config: pytest.Config) -> tuple[Path, Path | None] | None:
    """The rootdir and configuration file pytest settles from the session's real test paths
    (its own rules, ``determine_setup``), or None when this pytest's version cannot say."""
    import inspect

    try:
        from _pytest.config.findpaths import determine_setup
    except ImportError:  # pragma: no cover - another pytest
        return None
    option = config.option
    known: dict[str, Any] = {
        "inifile": getattr(option, "inifilename", None),
        "override_ini": getattr(option, "override_ini", None),
        "args": list(getattr(option, "file_or_dir", None) or []),
        "rootdir_cmd_arg": getattr(option, "rootdir", None) or None,
        "invocation_dir": Path(config.invocation_params.dir),
    }
    accepted = inspect.signature(determine_setup).parameters
    try:
        settled = determine_setup(**{k: v for k, v in known.items() if k in accepted})
    except Exception:  # pragma: no cover - a pytest whose rules differ: say nothing
        return None
    return Path(settled[0]), (Path(settled[1]) if settled[1] is not None else None)


def check_gate_options(config: pytest.Config) -> None:
    """Gate options without a baseline are a usage error, not silently ignored."""
    if config.getoption("srbench_baseline"):
        return
    for name in ("srbench_gate", "srbench_margin", "srbench_gate_interval", "srbench_gate_scope",
                 "srbench_allow_mixed_sources"):  # fmt: skip
        if config.getoption(name) is not None:
            flag = "--" + name.replace("_", "-")
            raise pytest.UsageError(f"pytest-srbench: {flag} needs --srbench-baseline")
