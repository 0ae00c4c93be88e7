"""Imports point downward. Every module of the package (found by ``pkgutil.walk_packages``, so a
new one is checked without being listed) is read for its imports, and each package keeps to
its row of ``MAY_USE``; the libraries that do I/O, HTTP, SQL or pytest are allowed only where
``ONLY_IN`` says. The layers are drawn in docs/architecture.md."""

from __future__ import annotations

import ast
import importlib.util
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import pytest_srbench

PACKAGE = "pytest_srbench"

# package -> the packages of pytest_srbench it may import (besides itself)
MAY_USE: dict[str, set[str]] = {
    "core": set(),
    "store": {"core"},
    "transport": {"core"},
    "sandbox": {"core"},
    "managed": {"core"},
    "notes": {"core"},
    "render": {"core"},
    "benchmarks": {"core", "notes"},
    "datasets": {"core", "benchmarks"},
    "simulator": {"core", "benchmarks", "managed", "notes"},
    "engine": {"core", "transport", "store", "sandbox", "benchmarks"},
    "app": {"core", "store", "transport", "engine", "render", "benchmarks", "datasets",
            "simulator", "managed", "notes"},
    "service": {"core", "store", "render", "app", "benchmarks", "datasets"},
    "plugin": {"core", "store", "transport", "engine", "render", "app", "benchmarks",
               "datasets", "simulator", "managed"},
    "cli": {"core", "store", "render", "app", "datasets", "simulator", "managed", "service"},
    "": {"core", "cli"},  # the package root: lazy public names, ``python -m pytest_srbench``
}  # fmt: skip

# a library (or one of its submodules) -> the packages that may import it
ONLY_IN: dict[str, set[str]] = {
    "sqlite3": {"store", "notes"},  # notes: the reference search engine keeps its own index
    "psycopg": {"store"},  # the PostgreSQL store
    "httpx": {"transport", "datasets"},  # datasets: `srbench datasets fetch` from GitHub
    "huggingface_hub": {"datasets"},  # datasets: `srbench datasets fetch` from the Hub
    "pyarrow": {"datasets"},  # datasets: parquet releases
    "aiohttp": {"transport"},  # the simulator serves on asyncio itself (simulator/http.py)
    "urllib.request": {"transport", "simulator", "managed"},  # probes; managed: the sdist too
    "pytest": {"plugin"},
    "_pytest": {"plugin"},
    "xdist": {"plugin"},
    "argparse": {"cli", "plugin", "simulator"},  # plugin: option types; simulator: its main
    "fastapi": {"service"},
    "starlette": {"service"},
    "uvicorn": {"cli", "service"},  # service: its connections' read deadlines (connections.py)
    "jinja2": {"render", "service"},
    "subprocess": {"sandbox", "managed", "simulator", "service", "cli"},
    "socket": {"managed", "app", "plugin", "store"},  # host names for provenance and leases
}
PURE_CORE_FORBIDS = {"os", "socket", "subprocess", "sqlite3", "asyncio", "threading", "shutil",
                     "tempfile", "urllib.request", "http", "signal", "pathlib"}  # fmt: skip


def all_modules() -> list[str]:
    names = [PACKAGE]
    for info in pkgutil.walk_packages(pytest_srbench.__path__, prefix=f"{PACKAGE}."):
        names.append(info.name)
    return sorted(names)


def package_of(module: str) -> str:
    parts = module.split(".")
    if len(parts) == 1 or (len(parts) == 2 and not _is_package(module)):
        return ""
    return parts[1]


def _is_package(module: str) -> bool:
    spec = importlib.util.find_spec(module)
    return bool(spec and spec.submodule_search_locations)


def imports_of(module: str) -> set[str]:
    """Every module name the source imports, at any depth (lazy imports included)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    tree = ast.parse(Path(spec.origin).read_text(), spec.origin)
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
    return found


MODULES = all_modules()


def test_every_module_is_found_and_belongs_to_a_known_package():
    assert len(MODULES) > 150
    assert {package_of(m) for m in MODULES} <= set(MAY_USE)


@pytest.mark.parametrize("module", MODULES)
def test_imports_point_downward(module):
    package = package_of(module)
    allowed = MAY_USE[package] | {package}
    wrong = []
    for name in sorted(imports_of(module)):
        parts = name.split(".")
        if parts[0] == PACKAGE:
            if name in (PACKAGE, f"{PACKAGE}.__version__"):
                continue  # the version string: anyone may read it
            target = parts[1] if _is_package(".".join(parts[:2])) else ""
            if target not in allowed:
                wrong.append(f"{name} ({target or 'the package root'})")
            continue
        for library, owners in ONLY_IN.items():
            if (name == library or name.startswith(library + ".")) and package not in owners:
                wrong.append(f"{name} (only in {', '.join(sorted(owners))})")
        if package == "core" and any(
            name == banned or name.startswith(banned + ".") for banned in PURE_CORE_FORBIDS
        ):
            wrong.append(f"{name} (the core does no I/O)")
    assert not wrong, f"{module} imports {wrong}"


def test_the_core_and_the_package_root_load_no_framework():
    core = [m for m in MODULES if package_of(m) == "core"]
    code = (
        "import sys\n"
        + "".join(f"import {name}\n" for name in [PACKAGE, *core])
        + "bad = [m for m in ('pytest', '_pytest', 'httpx', 'aiohttp', 'jinja2', 'sqlite3', "
        "'xdist', 'fastapi') if m in sys.modules]\n" + "print(','.join(bad))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == ""


def test_cli_and_store_do_not_import_pytest():
    code = (
        "import sys, pytest_srbench.cli.main, pytest_srbench.store; print('pytest' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def runtime_imports_of(module: str) -> set[str]:
    """Every module name the source imports when it runs, at any depth (lazy imports included;
    imports made only for the type checker, under ``if TYPE_CHECKING:``, left out)."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None, module
    tree = ast.parse(Path(spec.origin).read_text(), spec.origin)
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and ast.unparse(node.test) in (
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        ):
            node.body = []
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
            found.update(f"{node.module}.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return found


def module_graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports when it runs, lazy imports included."""
    members = [m for m in MODULES if package_of(m) == package and not _is_package(m)]
    return {
        m: {name for name in runtime_imports_of(m) if name in members and name != m}
        for m in members
    }


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Every strongly connected group of more than one module (an import circle)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for other in sorted(graph[node]):
            if other not in index:
                visit(other)
                low[node] = min(low[node], low[other])
            elif other in stack:
                low[node] = min(low[node], index[other])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                found.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_cycles_finds_a_circle_and_nothing_else():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("package", ["app", "plugin", "engine", "store", "render", "cli"])
def test_no_import_circle_within_a_package(package):
    """Imports inside functions count: a circle hidden by a lazy import is still a circle."""
    assert cycles(module_graph(package)) == []


ROLE_TESTS = {"kind", "runs_cells", "reports"}
ROLE_DECIDERS = {"pytest_srbench.plugin.roles", "pytest_srbench.plugin.assembly"}


def role_branches(source: str) -> list[int]:
    """Lines where a condition reads the process's role (``….role.kind`` and the like)."""

    def reads_role(node: ast.AST) -> bool:
        for sub in ast.walk(node):
            if isinstance(sub, ast.Attribute) and sub.attr in ROLE_TESTS:
                owner = sub.value
                name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
                if name == "role":
                    return True
        return False

    lines = []
    for node in ast.walk(ast.parse(source)):
        tests: list[ast.AST] = []
        if isinstance(node, ast.If | ast.IfExp | ast.While | ast.Assert):
            tests.append(node.test)
        elif isinstance(node, ast.comprehension):
            tests.extend(node.ifs)
        elif isinstance(node, ast.BoolOp | ast.Compare | ast.Match):
            tests.append(node)
        if any(reads_role(test) for test in tests):
            lines.append(getattr(node, "lineno", None) or tests[0].lineno)
    return sorted(set(lines))


def test_role_branches_finds_a_branch_on_the_role():
    assert role_branches("if self.role.kind == 'worker':\n    pass\n") == [1]
    assert role_branches("x = [a for a in b if state.role.runs_cells]\n") == [1]
    assert role_branches("info = {'role': role.kind}\nif kind.role:\n    pass\n") == []


@pytest.mark.parametrize(
    "module", [m for m in MODULES if package_of(m) == "plugin" and m not in ROLE_DECIDERS]
)
def test_no_plugin_code_branches_on_the_role(module):
    """A process's role decides which objects it registers (``plugin/assembly.py``), once;
    after that no hook (nor anything it calls) asks which role it plays."""
    spec = importlib.util.find_spec(module)
    assert spec is not None and spec.origin is not None
    assert role_branches(Path(spec.origin).read_text()) == []
