"""Docs that run: every shell, Python and TOML block of README.md and docs/*.md is executed
here, or marked illustrative with its reason.

Writing docs (the convention; docs/contributing-docs.md says the same for readers):

- Every fenced block names its language. ``text`` is for output, trees and diagrams; ``json``,
  ``yaml`` … are data and never run.
- ``bash`` / ``sh`` / ``shell`` / ``console`` blocks run in a fresh temporary project folder,
  with this virtual environment's ``bin`` first on ``PATH``, offline, against the built-in
  simulator. Each command (continuation lines joined, comments dropped; in ``console`` only the
  ``$ `` lines) runs on its own in that folder and must exit 0 and, when it is a pytest run,
  must not end in "no tests ran". Commands run exactly as written: add ``--srbench-limit`` to a
  command only if the doc shows it.
- ``python`` blocks run as a script in that folder with this environment's Python.
- ``toml`` blocks are loaded with ``pytest_srbench.app.config.load_config`` (as ``pyproject.toml``,
  or ``srbench.toml`` when they have no ``[tool…]`` table): a doc cannot show a configuration
  that is refused.
- A block that cannot run here (it needs a key, the internet, minutes, or it never exits) is
  marked on the line right before its fence, with the reason::

      <!-- illustrative: needs OPENAI_API_KEY and the internet -->

- Blocks that belong together share a project:
  ``<!-- doc-test: project=NAME [file=PATH] [exit=N] -->``. The project's ``toml`` blocks are
  written to ``pyproject.toml`` (or ``file=``), blocks with ``file=`` are written to that
  path, then its shell and Python blocks run in document order. ``exit=N`` is the documented
  exit status of every command of a shell block.

A test's id names the document and the lines of its blocks (``docs/routers.md:107``), so a
failure points to the block.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from pytest_srbench.app.config import ConfigError, load_config
from tests.docs.blocks import Block, Group, groups, parse
from tests.docs.running import environment, run_python, run_shell, write_files

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]


def _read_all() -> tuple[list[Block], list[str]]:
    blocks: list[Block] = []
    problems: list[str] = []
    for path in DOCS:
        found, trouble = parse(path.read_text(encoding="utf-8"), str(path.relative_to(ROOT)))
        blocks.extend(found)
        problems.extend(trouble)
    return blocks, problems


BLOCKS, PROBLEMS = _read_all()
GROUPS = groups(BLOCKS)


def test_every_block_has_a_language_and_every_marker_is_valid():
    assert not PROBLEMS, "\n".join(PROBLEMS)


def test_every_executable_block_runs_here_or_is_marked_illustrative():
    running = {id(block) for group in GROUPS for block in group.blocks}
    silent = [
        block.where
        for block in BLOCKS
        if block.kind != "data" and block.illustrative is None and id(block) not in running
    ]
    assert not silent, f"blocks neither run nor marked illustrative: {silent}"
    for group in GROUPS:
        runnable = [b for b in group.blocks if b.kind != "data" and "file" not in b.options]
        assert runnable, f"{group.test_id}: project {group.project} has nothing to run"


def _check_config(group: Group, folder: Path) -> None:
    if not any(block.kind == "toml" for block in group.blocks):
        return
    try:
        load_config(folder)
    except ConfigError as error:
        pytest.fail(f"{group.test_id}: the documented configuration is refused: {error}")


@pytest.mark.slow
@pytest.mark.parametrize("group", GROUPS, ids=[group.test_id for group in GROUPS])
def test_documented_block_runs(group: Group, tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    env = environment()
    write_files(group, folder)
    _check_config(group, folder)
    for block in group.blocks:
        if "file" in block.options:
            continue
        if block.kind == "shell":
            run_shell(block, folder, env)
        elif block.kind == "python":
            run_python(block, folder, env)
