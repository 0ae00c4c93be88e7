"""No module of the suite imports a test module: what tests share lives in helper modules
(``tests/<area>/helpers.py``, ``tests/core/helpers.py`` …), so a test module can be moved,
renamed or skipped without breaking another one, and its tests are collected once."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FOLDERS = ("tests", "bench", "scripts", "examples")


def is_test_module(dotted: str) -> bool:
    """Whether ``dotted`` (absolute) names a module of this suite whose file is a test
    module (``test_*.py``)."""
    parts = dotted.split(".")
    return parts[0] == "tests" and any(part.startswith("test_") for part in parts[1:])


def imports_of_test_modules(path: Path) -> list[tuple[int, str]]:
    """(line, module) of every import statement in ``path``, at any depth, that takes a test
    module of this suite: ``import tests.x.test_y``, ``from tests.x.test_y import …``,
    ``from tests.x import test_y``, and the relative forms."""
    package = path.relative_to(ROOT).with_suffix("").parts[:-1]
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            modules = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative to this module's package
                anchor = package[: len(package) - node.level + 1]
                base = ".".join([*anchor, *([base] if base else [])])
            modules = [base, *(f"{base}.{alias.name}" for alias in node.names)]
        else:
            continue
        taken = [module for module in modules if is_test_module(module)]
        if taken:
            found.append((node.lineno, taken[0]))
    return found


def offenders(paths: list[Path]) -> list[str]:
    return [
        f"{path.relative_to(ROOT)}:{line} imports {module}"
        for path in paths
        for line, module in imports_of_test_modules(path)
    ]


def test_no_module_of_the_suite_imports_a_test_module():
    paths = sorted(p for folder in FOLDERS for p in (ROOT / folder).rglob("*.py"))
    assert len(paths) > 100  # the suite was found
    assert offenders(paths) == []


def test_every_way_of_importing_a_test_module_is_seen(tmp_path, monkeypatch):
    monkeypatch.setattr(f"{__name__}.ROOT", tmp_path)
    folder = tmp_path / "tests" / "area"
    folder.mkdir(parents=True)
    module = folder / "test_user.py"
    module.write_text(
        "from tests.area.test_other import helper\n"
        "import tests.area.test_other\n"
        "from tests.area import test_other\n"
        "from .test_other import helper\n"
        "from . import test_other\n"
        "def test_late():\n"
        "    from tests.area.test_other import helper\n"
        "from tests.area.helpers import helper\n"  # a helper module: fine
        "from aiohttp import test_utils\n"  # not this suite's
    )
    assert [found.split(":")[1].split()[0] for found in offenders([module])] == [
        "1",
        "2",
        "3",
        "4",
        "5",
        "7",
    ]
