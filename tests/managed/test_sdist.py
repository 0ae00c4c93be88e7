"""The llama-cpp-python sdist fetched without pip: found in an index's JSON listing (a real HTTP
server on 127.0.0.1 stands in for PyPI), downloaded once into the cache, refused when its bytes
or its listed digest differ from the pinned one; and its vendored llama.cpp tree unpacked."""

from __future__ import annotations

import hashlib
import io
import json
import os
import tarfile
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from pytest_srbench.managed import sdist
from pytest_srbench.managed.common import RealPartError

ARCHIVE_MTIME = 1_700_000_000


def _archive(files: dict[str, bytes]) -> bytes:
    """A gzip'd tar of ``files`` (path inside the archive → content), dated ARCHIVE_MTIME."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w:gz") as tar:
        for name, content in files.items():
            info = tarfile.TarInfo(name)
            info.size, info.mtime = len(content), ARCHIVE_MTIME
            tar.addfile(info, io.BytesIO(content))
    return buffer.getvalue()


ROOT = f"llama_cpp_python-{sdist.VERSION}"
GOOD = _archive(
    {
        f"{ROOT}/CMakeLists.txt": b"project(llama_cpp)\n",
        f"{ROOT}/.git/objects/pack/pack.pack": b"not wanted",
        f"{ROOT}/vendor/llama.cpp/CMakeLists.txt": b"project(llama.cpp)\n",
        f"{ROOT}/vendor/llama.cpp/src/llama.cpp": b"int main() {}\n",
    }
)


class Index:
    """A package index on a free loopback port: ``/simple/llama-cpp-python/`` (PEP 691 JSON)
    lists ``/files/<FILENAME>``, which serves ``body``; ``requests`` records every path asked."""

    def __init__(self, body: bytes, listed_sha256: str | None) -> None:
        self.body, self.listed_sha256, self.filename = body, listed_sha256, sdist.FILENAME
        self.requests: list[str] = []
        index = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                index.requests.append(self.path)
                if self.path == f"/simple/{sdist.PROJECT}/":
                    hashes = {"sha256": index.listed_sha256} if index.listed_sha256 else {}
                    files = [
                        {"filename": "llama_cpp_python-0.1.0.tar.gz", "url": "/files/old", "hashes": {}},
                        {"filename": index.filename, "url": f"../../files/{index.filename}", "hashes": hashes},
                    ]  # fmt: skip
                    self._send(json.dumps({"meta": {"api-version": "1.1"}, "files": files}).encode(),
                               sdist.SIMPLE_JSON)  # fmt: skip
                elif self.path == f"/files/{index.filename}":
                    self._send(index.body, "application/octet-stream")
                else:
                    self.send_error(404)

            def _send(self, body: bytes, kind: str) -> None:
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}/simple"
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join()


@pytest.fixture
def pinned(monkeypatch: pytest.MonkeyPatch) -> str:
    """The test archive's digest, pinned in place of the real sdist's."""
    digest = hashlib.sha256(GOOD).hexdigest()
    monkeypatch.setattr(sdist, "SHA256", digest)
    return digest


@pytest.fixture
def index(request: pytest.FixtureRequest, pinned: str) -> Iterator[Index]:
    body, listed = getattr(request, "param", (GOOD, pinned))
    served = Index(body, listed)
    yield served
    served.close()


def _quiet(_line: str) -> None:
    pass


def test_the_sdist_is_downloaded_once_then_reused(tmp_path, index, pinned):
    path = sdist.fetch_sdist(tmp_path, index_url=index.url, log=_quiet)
    assert path == sdist.sdist_path(tmp_path) == tmp_path / "sdist" / sdist.FILENAME
    assert path.read_bytes() == GOOD and sdist.file_digest(path) == pinned
    assert index.requests == [f"/simple/{sdist.PROJECT}/", f"/files/{sdist.FILENAME}"]
    assert sdist.fetch_sdist(tmp_path, index_url=index.url, log=_quiet) == path
    assert len(index.requests) == 2  # the checked file in the cache: no network
    assert os.listdir(path.parent) == [sdist.FILENAME]  # no partial file left


def test_a_damaged_file_in_the_cache_is_downloaded_again(tmp_path, index):
    damaged = sdist.sdist_path(tmp_path)
    damaged.parent.mkdir(parents=True)
    damaged.write_bytes(GOOD[:-10])
    said: list[str] = []
    assert sdist.fetch_sdist(tmp_path, index_url=index.url, log=said.append).read_bytes() == GOOD
    assert "does not have the pinned sha256" in said[0]


@pytest.mark.parametrize("index", [(GOOD + b"tampered", None)], indirect=True)
def test_a_file_with_another_digest_is_refused_and_not_kept(tmp_path, index, pinned):
    with pytest.raises(RealPartError) as refused:
        sdist.fetch_sdist(tmp_path, index_url=index.url, log=_quiet)
    message = str(refused.value)
    assert "\n" not in message
    assert f"not the pinned {pinned}: refused" in message
    assert hashlib.sha256(GOOD + b"tampered").hexdigest() in message
    assert os.listdir(tmp_path / "sdist") == []


@pytest.mark.parametrize("index", [(GOOD, "0" * 64)], indirect=True)
def test_a_listing_with_another_digest_is_refused_before_downloading(tmp_path, index, pinned):
    with pytest.raises(RealPartError, match=f"with sha256 0{{64}}, not the pinned {pinned}"):
        sdist.fetch_sdist(tmp_path, index_url=index.url, log=_quiet)
    assert index.requests == [f"/simple/{sdist.PROJECT}/"]


def test_an_index_that_does_not_list_the_file_or_does_not_answer_is_one_line(
    tmp_path, index, monkeypatch
):
    monkeypatch.setattr(sdist, "FILENAME", "llama_cpp_python-9.9.9.tar.gz")
    with pytest.raises(RealPartError, match=r"does not list llama_cpp_python-9\.9\.9\.tar\.gz"):
        sdist.fetch_sdist(tmp_path, index_url=index.url, log=_quiet)
    url = index.url
    index.close()
    with pytest.raises(RealPartError, match=r"could not read the llama-cpp-python listing"):
        sdist.fetch_sdist(tmp_path, index_url=url, log=_quiet)


def test_only_the_vendored_llama_cpp_tree_is_unpacked_with_the_archives_times(tmp_path):
    archive = tmp_path / sdist.FILENAME
    archive.write_bytes(GOOD)
    source = tmp_path / "llama-server" / "src"
    source.mkdir(parents=True)
    (source / "stale.c").write_text("from an earlier unpacking")
    sdist.unpack_llama_cpp(archive, source)
    unpacked = sorted(str(p.relative_to(source)) for p in source.rglob("*") if p.is_file())
    assert unpacked == ["CMakeLists.txt", "src/llama.cpp"]
    assert (source / "src" / "llama.cpp").stat().st_mtime == ARCHIVE_MTIME
    assert os.listdir(source.parent) == ["src"]  # the scratch folder is gone
    empty = tmp_path / sdist.FILENAME.replace(".tar.gz", "-empty.tar.gz")
    empty.write_bytes(_archive({"other/CMakeLists.txt": b""}))
    with pytest.raises(RealPartError, match=r"has no .*vendor/llama\.cpp tree"):
        sdist.unpack_llama_cpp(empty, tmp_path / "elsewhere")


def test_the_side_environments_lock_pins_the_same_version():
    from pytest_srbench.managed import venvs

    lock = venvs.lock_file(venvs.LLAMA_CPP_PYTHON[0]).read_text().splitlines()
    assert f"llama-cpp-python=={sdist.VERSION}" in lock
    assert f"llama_cpp_python-{sdist.VERSION}.tar.gz" == sdist.FILENAME
    assert len(sdist.SHA256) == 64 and int(sdist.SHA256, 16) >= 0


def test_the_index_is_pips_own_mirror_when_one_is_configured(monkeypatch):
    monkeypatch.delenv("PIP_INDEX_URL", raising=False)
    assert sdist.configured_index_url() == sdist.INDEX_URL
    monkeypatch.setenv("PIP_INDEX_URL", "https://mirror.example/simple")
    assert sdist.configured_index_url() == "https://mirror.example/simple"
