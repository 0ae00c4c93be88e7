"""The one jinja2 setup every HTML page uses: package templates, autoescaping on for every
template (model output is untrusted), undefined names are errors."""

from __future__ import annotations

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape


def make_environment(package: str, folder: str = "templates") -> Environment:
    """An autoescaping, strict environment over ``package``'s ``folder``."""
    return Environment(
        loader=PackageLoader(package, folder),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
