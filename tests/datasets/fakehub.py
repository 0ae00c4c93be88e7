"""A real HTTP server on 127.0.0.1 that speaks the parts of the Hugging Face Hub API that
``huggingface_hub`` calls for a dataset download, and GitHub's commit lookup and archives.

Hub (``HF_ENDPOINT`` = ``hub.url``):
- ``GET /api/datasets/<repo>/revision/<rev>``: ``{id, sha, gated, siblings: [{rfilename,
  lfs?}]}``; an unknown revision is 404 ``X-Error-Code: RevisionNotFound``;
- ``HEAD|GET /datasets/<repo>/resolve/<rev>/<path>``: a small file answers 200 with ``ETag``,
  ``X-Repo-Commit`` and ``Content-Length``; an LFS file (parquet, h5) answers 302 to the CDN
  (another port, so the library does not follow it on HEAD) with ``X-Linked-Etag`` and
  ``X-Linked-Size``; a gated repository answers 401 ``GatedRepo`` without a token and 403 with
  a token that has not accepted its terms;
- ``GET /cdn/<sha256>`` (on the CDN port): the bytes, with ``Range`` (206) support.

GitHub (``SRBENCH_GITHUB_API`` = ``hub.url + "/gh-api"``, ``SRBENCH_GITHUB_ENDPOINT`` =
``hub.url + "/codeload"``): ``GET /gh-api/repos/<o>/<r>/commits/<ref>`` -> ``{sha}``;
``GET /codeload/<o>/<r>/tar.gz/<commit>`` -> the commit's tar.gz (top folder ``<r>-<commit>``),
with Range support.

Every request is logged (``requests``: method, path and the Range header asked);
``drops[path] = (n, times)`` sends the full headers and only ``n`` bytes of the next ``times``
GETs of ``path`` before closing the connection; ``ignore_range`` lists paths served whole (200)
even when a range is asked.

``hub_env(hub, root)`` is the environment that points ``huggingface_hub`` and ``srbench
datasets fetch`` at a hub (caches under ``root``); ``TOKEN`` is the token the fetch tests grant
access.
"""

from __future__ import annotations

import hashlib
import io
import json
import re
import tarfile
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import unquote, urlsplit

LFS_SUFFIXES = (".parquet", ".h5", ".jsonl")


def commit_id(label: str) -> str:
    """A deterministic 40-hex commit id for a fixture commit (not a real one)."""
    return hashlib.sha1(label.encode()).hexdigest()


@dataclass
class Repo:
    commits: dict[str, dict[str, bytes]] = field(default_factory=dict)
    refs: dict[str, str] = field(default_factory=dict)
    gated: bool = False

    def add_commit(self, label: str, files: dict[str, bytes], ref: str | None = "main") -> str:
        sha = commit_id(label)
        self.commits[sha] = dict(files)
        if ref:
            self.refs[ref] = sha
        return sha

    def resolve(self, revision: str) -> str | None:
        if revision in self.commits:
            return revision
        return self.refs.get(revision)


@dataclass
class FakeHub:
    datasets: dict[str, Repo] = field(default_factory=dict)
    github: dict[str, Repo] = field(default_factory=dict)
    tokens_with_access: set[str] = field(default_factory=set)
    requests: list[tuple[str, str, str]] = field(default_factory=list)
    drops: dict[str, tuple[int, int]] = field(default_factory=dict)
    ignore_range: set[str] = field(default_factory=set)
    url: str = ""
    cdn_url: str = ""
    lock: threading.Lock = field(default_factory=threading.Lock)
    blobs: dict[str, bytes] = field(default_factory=dict)

    def log(self, method: str, path: str, asked: str) -> None:
        with self.lock:
            self.requests.append((method, path, asked))

    def paths(self) -> list[str]:
        with self.lock:
            return [path for _, path, _ in self.requests]

    def clear(self) -> None:
        with self.lock:
            self.requests.clear()


def archive(repo: str, commit: str, files: dict[str, bytes]) -> bytes:
    """A GitHub-style tar.gz of a commit: every file below ``<repo name>-<commit>/``."""
    buffer = io.BytesIO()
    top = f"{repo.split('/')[1]}-{commit}"
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        folder = tarfile.TarInfo(top)
        folder.type = tarfile.DIRTYPE
        tar.addfile(folder)
        for path, data in sorted(files.items()):
            info = tarfile.TarInfo(f"{top}/{path}")
            info.size = len(data)
            info.mtime = 1_700_000_000
            tar.addfile(info, io.BytesIO(data))
    return buffer.getvalue()


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    hub: FakeHub

    def log_message(self, format: str, *args: object) -> None:  # quiet
        return

    def do_HEAD(self) -> None:
        self._route("HEAD")

    def do_GET(self) -> None:
        self._route("GET")

    # -- helpers ---------------------------------------------------------------------------
    def _send(self, status: int, body: bytes = b"", headers: dict[str, str] | None = None,
              head: bool = False) -> None:  # fmt: skip
        self.send_response(status)
        for key, value in (headers or {}).items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not head and body:
            self.wfile.write(body)

    def _json(self, status: int, value: object, headers: dict[str, str] | None = None) -> None:
        body = json.dumps(value).encode()
        self._send(status, body, {"Content-Type": "application/json", **(headers or {})})

    def _error(self, status: int, code: str, head: bool, commit: str | None = None) -> None:
        headers = {"X-Error-Code": code, "X-Error-Message": code}
        if commit:
            headers["X-Repo-Commit"] = commit
        self._send(status, b"" if head else json.dumps({"error": code}).encode(), headers, head)

    def _body(self, path: str, data: bytes, headers: dict[str, str], head: bool) -> None:
        """Serve ``data`` with Range support and the configured faults."""
        start = 0
        status = 200
        asked = self.headers.get("Range")
        extra = dict(headers)
        extra["Accept-Ranges"] = "bytes"
        if asked and path not in self.hub.ignore_range:
            found = re.fullmatch(r"bytes=(\d+)-(\d*)", asked.strip())
            if found:
                start = int(found.group(1))
                status = 206
                extra["Content-Range"] = f"bytes {start}-{len(data) - 1}/{len(data)}"
        part = data[start:]
        self.send_response(status)
        for key, value in extra.items():
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(part)))
        self.end_headers()
        if head:
            return
        with self.hub.lock:
            cut, times = self.hub.drops.get(path, (None, 0))
            if times > 1:
                self.hub.drops[path] = (cut or 0, times - 1)
            else:
                self.hub.drops.pop(path, None)
        if cut is not None:
            self.wfile.write(part[:cut])
            self.wfile.flush()
            self.close_connection = True
            return
        self.wfile.write(part)

    def _token(self) -> str | None:
        value = self.headers.get("Authorization", "")
        return value.removeprefix("Bearer ").strip() or None

    # -- routes ----------------------------------------------------------------------------
    def _route(self, method: str) -> None:
        path = unquote(urlsplit(self.path).path)
        self.hub.log(method, path, self.headers.get("Range", ""))
        head = method == "HEAD"
        if found := re.fullmatch(r"/api/datasets/([^/]+/[^/]+)/revision/(.+)", path):
            return self._revision(found.group(1), found.group(2))
        if found := re.fullmatch(r"/datasets/([^/]+/[^/]+)/resolve/([^/]+)/(.+)", path):
            return self._resolve(found.group(1), found.group(2), found.group(3), head)
        if found := re.fullmatch(r"/cdn/([0-9a-f]{64})", path):
            data = self.hub.blobs.get(found.group(1))
            if data is None:
                return self._send(404, head=head)
            return self._body(path, data, {"Content-Type": "application/octet-stream"}, head)
        if found := re.fullmatch(r"/gh-api/repos/([^/]+/[^/]+)/commits/(.+)", path):
            repo = self.hub.github.get(found.group(1))
            sha = repo.resolve(found.group(2)) if repo else None
            if sha is None:
                return self._json(404, {"message": "No commit found for SHA"})
            return self._json(200, {"sha": sha})
        if found := re.fullmatch(r"/codeload/([^/]+/[^/]+)/tar\.gz/([0-9a-f]{40})", path):
            repo = self.hub.github.get(found.group(1))
            if repo is None or found.group(2) not in repo.commits:
                return self._send(404, b"Not Found", head=head)
            data = archive(found.group(1), found.group(2), repo.commits[found.group(2)])
            return self._body(path, data, {"Content-Type": "application/x-gzip"}, head)
        return self._send(404, b"no such route", head=head)

    def _revision(self, name: str, revision: str) -> None:
        repo = self.hub.datasets.get(name)
        if repo is None:
            return self._error(401, "RepoNotFound", False)
        sha = repo.resolve(revision)
        if sha is None:
            return self._error(404, "RevisionNotFound", False)
        siblings = []
        for path, data in sorted(repo.commits[sha].items()):
            entry: dict[str, object] = {"rfilename": path}
            if path.endswith(LFS_SUFFIXES):
                entry["lfs"] = {"size": len(data), "sha256": hashlib.sha256(data).hexdigest(),
                                "pointerSize": 134}  # fmt: skip
            siblings.append(entry)
        self._json(200, {"id": name, "sha": sha, "private": False,
                         "gated": "auto" if repo.gated else False, "siblings": siblings})  # fmt: skip

    def _resolve(self, name: str, revision: str, file: str, head: bool) -> None:
        repo = self.hub.datasets.get(name)
        if repo is None:
            return self._error(401, "RepoNotFound", head)
        if repo.gated:
            token = self._token()
            if token is None:
                return self._error(401, "GatedRepo", head)
            if token not in self.hub.tokens_with_access:
                return self._error(403, "GatedRepo", head)
        sha = repo.resolve(revision)
        if sha is None:
            return self._error(404, "RevisionNotFound", head)
        data = repo.commits[sha].get(file)
        if data is None:
            return self._error(404, "EntryNotFound", head, commit=sha)
        if file.endswith(LFS_SUFFIXES):
            digest = hashlib.sha256(data).hexdigest()
            with self.hub.lock:
                self.hub.blobs[digest] = data
            headers = {"X-Repo-Commit": sha, "X-Linked-Etag": f'"{digest}"',
                       "X-Linked-Size": str(len(data)), "ETag": f'"{digest}"',
                       "Location": f"{self.hub.cdn_url}/cdn/{digest}"}  # fmt: skip
            return self._send(302, b"", headers, head)
        etag = hashlib.sha1(data).hexdigest()
        headers = {"X-Repo-Commit": sha, "ETag": f'"{etag}"', "Content-Type": "text/plain"}
        self._body(f"/datasets/{name}/resolve/{revision}/{file}", data, headers, head)


class Server:
    """The hub port and the CDN port, each served by a thread; stop() closes both."""

    def __init__(self, hub: FakeHub) -> None:
        handler = type("Handler", (_Handler,), {"hub": hub})
        self.servers = [ThreadingHTTPServer(("127.0.0.1", 0), handler) for _ in range(2)]
        for server in self.servers:
            server.daemon_threads = True
        hub.url = f"http://127.0.0.1:{self.servers[0].server_address[1]}"
        hub.cdn_url = f"http://127.0.0.1:{self.servers[1].server_address[1]}"
        self.threads = [
            threading.Thread(target=s.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
            for s in self.servers
        ]
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        for server in self.servers:
            server.shutdown()
            server.server_close()
        for thread in self.threads:
            thread.join(timeout=5)


TOKEN = "hf_fixture_token_with_access"


def hub_env(hub: FakeHub, root: Path, **extra: str) -> dict[str, str]:
    return {
        "HF_ENDPOINT": hub.url,
        "HF_HOME": str(root / "hf"),
        "SRBENCH_CACHE": str(root / "cache"),
        "SRBENCH_GITHUB_ENDPOINT": hub.url + "/codeload",
        "SRBENCH_GITHUB_API": hub.url + "/gh-api",
        "HF_HUB_DISABLE_PROGRESS_BARS": "1",
        **extra,
    }
