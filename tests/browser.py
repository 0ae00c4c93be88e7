"""What the browser tests share: where Chromium is (skip with the reason when it is not
installed; .ci/run installs it), one headless Chromium per test module (``launched_browser``,
for a module's ``browser`` fixture) and the hostile model output every page must show as text."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from typing import Any

import pytest

HOSTILE = (
    "<script>window.__pwned = 1; document.title = 'pwned'</script>"
    '<img src="https://example.invalid/x.png" onerror="window.__pwned = 2">'
)
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu"]


def chromium_path() -> str:
    path = shutil.which("chromium") or shutil.which("chromium-browser")
    if path is None:
        pytest.skip("Chromium is not installed (apt-get install chromium; .ci/run does)")
    pytest.importorskip("playwright.sync_api", reason="playwright is a dev dependency")
    return path


def launched_browser() -> Iterator[Any]:
    """A headless Chromium for the length of a fixture (skips when it is not installed)."""
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        yield launched
        launched.close()
