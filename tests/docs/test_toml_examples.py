"""Every TOML example in README.md and docs/*.md says which file it is for and validates there
— and in the other file once its tables are re-written as that file reads them.

``pyproject.toml`` keeps the configuration under ``[tool.srbench]``; ``srbench.toml`` holds the
same keys at its top level (``app/config_files.py``). An example pasted into the wrong file
used to fail with a confusing error, so each example's first line names its file
(``# pyproject.toml …`` or ``# srbench.toml …``; or the block's ``doc-test`` marker has
``file=``), its table headers must be the ones that file reads, and both forms must give the
same validated configuration (``app/config.py``)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pytest_srbench.app.config import parse_config
from pytest_srbench.app.config_files import config_table
from tests.docs.blocks import Block, parse

ROOT = Path(__file__).resolve().parents[2]
FILES = ("pyproject.toml", "srbench.toml")
_HEADER = re.compile(r"^(\s*\[\[?)\s*([^\]]+?)\s*(\]\]?)", re.MULTILINE)


def toml_blocks() -> list[Block]:
    found = []
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        blocks, _ = parse(doc.read_text(encoding="utf-8"), str(doc.relative_to(ROOT)))
        found += [block for block in blocks if block.lang == "toml"]
    return found


def declared_file(block: Block) -> str | None:
    if block.options.get("file"):
        return Path(block.options["file"]).name
    first = block.text.lstrip().splitlines()[0] if block.text.strip() else ""
    named = re.match(r"#\s*(pyproject\.toml|srbench\.toml)\b", first)
    return named.group(1) if named else None


def headers(text: str) -> list[str]:
    return [match.group(2) for match in _HEADER.finditer(text)]


def as_srbench_toml(text: str) -> str:
    """The pyproject form re-written as srbench.toml reads it (the ``tool.srbench`` prefix
    dropped; the bare ``[tool.srbench]`` header is the file's top level)."""
    text = re.sub(r"^\s*\[tool\.srbench\]\s*(#.*)?$", "", text, flags=re.MULTILINE)
    return _HEADER.sub(
        lambda m: f"{m.group(1)}{m.group(2).removeprefix('tool.srbench.')}{m.group(3)}", text
    )


def validated(folder: Path, name: str, text: str) -> dict:
    folder.mkdir()
    (folder / name).write_text(text, encoding="utf-8")
    found = config_table(folder)
    assert found is not None, f"{name}: no srbench configuration found"
    table, _ = found
    config = parse_config(table, name)  # raises with the key that is wrong
    return config.model_dump(exclude={"source"})


BLOCKS = toml_blocks()


def test_the_docs_have_toml_examples():
    assert len(BLOCKS) >= 10


@pytest.mark.parametrize("block", BLOCKS, ids=[block.where for block in BLOCKS])
def test_a_toml_example_names_its_file_and_validates_in_both(block, tmp_path):
    name = declared_file(block)
    assert name in FILES, (
        f"{block.where}: a configuration example's first line names its file "
        "(`# pyproject.toml` or `# srbench.toml`)"
    )
    found = headers(block.text)
    if name == "pyproject.toml":
        wrong = [h for h in found if not (h == "tool.srbench" or h.startswith("tool.srbench."))]
        assert not wrong, f"{block.where}: pyproject.toml reads only [tool.srbench…]: {wrong}"
        pyproject = block.text
        srbench = as_srbench_toml(block.text)
    else:
        wrong = [h for h in found if h.startswith("tool.")]
        assert not wrong, f"{block.where}: srbench.toml has no [tool.…] tables: {wrong}"
        srbench = block.text
        pyproject = "[tool.srbench]\n" + _HEADER.sub(
            lambda m: f"{m.group(1)}tool.srbench.{m.group(2)}{m.group(3)}", block.text
        )
    assert validated(tmp_path / "a", "pyproject.toml", pyproject) == validated(
        tmp_path / "b", "srbench.toml", srbench
    )


def test_the_prefix_rule_is_what_the_configuration_page_says():
    text = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert "without the `tool.srbench` prefix" in text


def test_a_pyproject_example_pasted_into_srbench_toml_says_what_to_change(tmp_path):
    from pytest_srbench.app.config_files import ConfigError

    (tmp_path / "srbench.toml").write_text("[tool.srbench]\nseed = 1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"drop the \[tool.srbench\] header"):
        config_table(tmp_path)
