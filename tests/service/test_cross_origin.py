"""Issue 46, point 2: a state-changing request from a page of another origin is refused 403
before it reaches a route, so nothing changes; reads and clients that are not browsers are
unaffected. One test is a real headless Chromium on a page served from another port."""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from tests.browser import CHROMIUM_ARGS, chromium_path
from tests.service.helpers import assert_error, create, wait_for

pytestmark = pytest.mark.slow

PAGE = """<!doctype html><title>elsewhere</title><script>
window.done = Promise.all([
  fetch(API + "/cancel", {method: "POST", mode: "no-cors"}),
  fetch(API + "/reconcile-usage", {method: "POST", mode: "no-cors"}),
]).then(() => "sent", e => "error " + e);
</script>"""


@pytest.fixture
def other_origin(api) -> Iterator[object]:
    """A tiny site on another loopback port; ``start(run_id)`` gives its page's URL."""
    pages: dict[str, str] = {}

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = pages.get(self.path, "").encode()
            self.send_response(200 if body else 404)
            self.send_header("Content-Type", "text/html")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()

    def page_for(run_id: str) -> str:
        script = f'const API = "{api.base_url}/api/runs/{run_id}";'
        pages["/evil.html"] = PAGE.replace("<script>", "<script>" + script, 1)
        return f"http://127.0.0.1:{server.server_address[1]}/evil.html"

    yield page_for
    server.shutdown()


def cancellation_asked(client: httpx.Client, run_id: str) -> bool:
    events = client.get(f"/api/runs/{run_id}/events/page", params={"limit": 500}).json()
    return any(e["kind"] == "cancellation_requested" for e in events["events"])


def test_cross_origin_posts_are_refused_and_change_nothing(api):
    host = urlsplit(api.base_url).netloc
    with httpx.Client(base_url=api.base_url, timeout=30) as client:
        run = create(client, limit=3)
        url = f"/api/runs/{run['id']}/cancel"
        for headers in ({"Origin": "http://127.0.0.1:1"}, {"Origin": "null"},
                        {"Sec-Fetch-Site": "same-site"}, {"Sec-Fetch-Site": "cross-site"},
                        {"Origin": f"http://{host}", "Sec-Fetch-Site": "cross-site"}):  # fmt: skip
            assert_error(client.post(url, headers=headers), 403, "BENCHMARK_CROSS_ORIGIN")
            refused = client.post(f"/api/runs/{run['id']}/reconcile-usage", headers=headers)
            assert_error(refused, 403, "BENCHMARK_CROSS_ORIGIN")
        assert not cancellation_asked(client, run["id"])
        assert client.get(url.removesuffix("/cancel"), headers={"Origin": "http://x"}).is_success
        same = {"Origin": f"http://{host}", "Sec-Fetch-Site": "same-origin"}
        assert client.post(url, headers=same).status_code == 200  # the dashboard's own page
        wait_for(client, run["id"], {"cancelled", "completed"})


@pytest.mark.browser
def test_a_page_on_another_port_cannot_cancel_a_run(api, other_origin):
    executable = chromium_path()
    from playwright.sync_api import sync_playwright

    with httpx.Client(base_url=api.base_url, timeout=30) as client:
        run = create(client, limit=3)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
            try:
                page = browser.new_page()
                page.goto(other_origin(run["id"]))  # type: ignore[operator]
                assert page.evaluate("window.done") == "sent"  # opaque answers, but sent
            finally:
                browser.close()
        assert not cancellation_asked(client, run["id"])
        assert client.get(f"/api/runs/{run['id']}").json()["run"]["status"] != "cancelled"
        client.post(f"/api/runs/{run['id']}/cancel")
        wait_for(client, run["id"], {"cancelled", "completed"})
