"""What the browser tests share: where Chromium is (skip with the reason when it is not
installed; .ci/run installs it) and the hostile model output every page must show as text."""

from __future__ import annotations

import shutil

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
