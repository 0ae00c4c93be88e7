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

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pytest_srbench.app.config import ConfigError, load_config
from tests.conftest import DEV_ONLY_PLUGINS
from tests.docs.blocks import Block, Group, groups, parse, shell_commands

ROOT = Path(__file__).resolve().parents[2]
DOCS = [ROOT / "README.md", ROOT / "CONTRIBUTING.md", *sorted((ROOT / "docs").glob("*.md"))]
BIN = Path(sys.executable).parent  # the virtual environment's bin (pytest runs from it)
TIMEOUT_S = 300


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


def _environment() -> dict[str, str]:
    """Offline and keyless: no API key reaches a documented command, and the dev-only
    plugins a user's install does not have (schemathesis, hypothesis) stay out."""
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith(("PYTEST_", "COV_", "XDIST_"))
        and not key.endswith(("_API_KEY", "_KEY", "_TOKEN"))
    }
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    env["VIRTUAL_ENV"] = str(BIN.parent)
    env["PYTEST_ADDOPTS"] = DEV_ONLY_PLUGINS
    env["NO_COLOR"] = "1"
    # The RAG examples search the simulator's index with the hashing embedder: loading and
    # running all-MiniLM-L6-v2 costs ~10 s of CPU per run and is tested on its own
    # (tests/retrieval, tests/plugin/test_rag_agent_runs.py); the commands are the same.
    env["SRBENCH_SIM_EMBEDDER"] = "hashing"
    env.pop("PYTHONPATH", None)
    return env


def _tail(text: str, lines: int = 40) -> str:
    return "\n".join(text.splitlines()[-lines:])


def _write_files(group: Group, folder: Path) -> None:
    """The project's configuration and files, in document order (blocks for the same file are
    appended)."""
    for block in group.blocks:
        target = block.options.get("file")
        if target is None and block.kind == "toml":
            target = "pyproject.toml" if "[tool." in block.text else "srbench.toml"
        if target is None:
            continue
        path = folder / target
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(block.text)


def _check_config(group: Group, folder: Path) -> None:
    if not any(block.kind == "toml" for block in group.blocks):
        return
    try:
        load_config(folder)
    except ConfigError as error:
        pytest.fail(f"{group.test_id}: the documented configuration is refused: {error}")


def _run_shell(block: Block, folder: Path, env: dict[str, str]) -> None:
    expected = int(block.options.get("exit", "0"))
    commands = shell_commands(block)
    assert commands, f"{block.where}: the shell block holds no command"
    for command in commands:
        try:
            done = subprocess.run(
                ["bash", "-c", command],
                cwd=folder,
                env=env,
                capture_output=True,
                text=True,
                timeout=TIMEOUT_S,
            )
        except subprocess.TimeoutExpired:
            pytest.fail(f"{block.where}: `{command}` did not finish in {TIMEOUT_S} s")
        output = done.stdout + done.stderr
        assert done.returncode == expected, (
            f"{block.where}: `{command}` exited {done.returncode} (documented: {expected})\n"
            + _tail(output)
        )
        if expected == 0:
            assert "no tests ran" not in output, (
                f"{block.where}: `{command}` ran nothing\n" + _tail(output)
            )


def _run_python(block: Block, folder: Path, env: dict[str, str]) -> None:
    script = folder / f"doc_block_{block.line}.py"
    script.write_text(block.text, encoding="utf-8")
    try:
        done = subprocess.run(
            [str(BIN / "python"), script.name],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT_S,
        )
    except subprocess.TimeoutExpired:
        pytest.fail(f"{block.where}: the Python block did not finish in {TIMEOUT_S} s")
    assert done.returncode == 0, (
        f"{block.where}: the Python block failed ({done.returncode})\n"
        + _tail(done.stdout + done.stderr)
    )


@pytest.mark.slow
@pytest.mark.parametrize("group", GROUPS, ids=[group.test_id for group in GROUPS])
def test_documented_block_runs(group: Group, tmp_path: Path) -> None:
    folder = tmp_path / "project"
    folder.mkdir()
    env = _environment()
    _write_files(group, folder)
    _check_config(group, folder)
    for block in group.blocks:
        if "file" in block.options:
            continue
        if block.kind == "shell":
            _run_shell(block, folder, env)
        elif block.kind == "python":
            _run_python(block, folder, env)
