"""Where a project's srbench configuration is written, read without validating it: the table
of ``--srbench-config FILE``, else of ``<rootdir>/srbench.toml``, else ``[tool.srbench]`` of
``<rootdir>/pyproject.toml``.

Light on purpose (``tomllib`` only): pytest's start-up reads it in every project where the
plugin is installed, to learn whether a plain ``pytest`` runs the project's benchmarks
(``profile`` set in the table); ``app/config.py`` validates what it finds.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

from pytest_srbench.core.errors import InputError


class ConfigError(InputError):
    """A configuration that cannot be used: a file that is missing (when named), not TOML, or
    whose values are wrong (``app/config.py`` says which)."""


def config_table(rootdir: Path, explicit: Path | None = None) -> tuple[dict[str, Any], str] | None:
    """The configuration table and the file it came from, or None (no configuration: the
    defaults)."""
    candidates = [explicit] if explicit else [rootdir / "srbench.toml", rootdir / "pyproject.toml"]
    for path in candidates:
        if path is None or not path.is_file():
            if explicit:
                raise ConfigError(f"{explicit}: configuration file not found")
            continue
        try:
            document = tomllib.loads(path.read_text(encoding="utf-8"))
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as error:
            raise ConfigError(f"{path}: not valid TOML ({error})") from None
        if path.name == "pyproject.toml" and path != explicit:
            table = document.get("tool", {}).get("srbench")
            if table is None:
                continue
        elif path.name == "pyproject.toml":
            table = document.get("tool", {}).get("srbench", {})
        else:
            table = document
            if isinstance(document.get("tool"), dict) and "srbench" in document["tool"]:
                raise ConfigError(
                    f"{path}: [tool.srbench] is pyproject.toml's table; in {path.name} the same "
                    "keys sit at the top level (drop the [tool.srbench] header and the "
                    "'tool.srbench.' prefix: [[targets]], [limits], …)"
                )
        if not isinstance(table, dict):
            raise ConfigError(f"{path}: [tool.srbench] must be a table")
        return table, str(path)
    return None
