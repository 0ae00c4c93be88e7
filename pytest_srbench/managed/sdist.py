"""The ``llama-cpp-python`` source distribution that every real part is built from: its pinned
version and SHA-256 digest, its download into ``<cache>/sdist/`` (once, then reused), the
check of that file against the digest, and the unpacking of the llama.cpp tree it vendors.

The sdist vendors the whole llama.cpp tree: ``llama.py`` compiles llama-server and llama.cpp's
shared libraries from it, ``venvs.py`` installs llama-cpp-python's Python package from the same
file. It is found through the package index's JSON listing (PEP 691, what pip itself reads;
PyPI's ``/pypi/<name>/<version>/json`` answered 404 from this machine) and fetched with
``urllib``. Asking pip to download it would make pip build the sdist in an isolated
environment only to read its metadata, and ``--no-binary :all:`` (needed to keep pip from
taking a wheel) compiles that environment's build tools from source too: here ninja, where it
is not on PATH (69 s of wall time and 40 s of CPU instead of 10 s, 2026-12-07).
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import tarfile
import tempfile
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from pathlib import Path

from pytest_srbench.managed.common import RealPartError, cache_root

PROJECT = "llama-cpp-python"
VERSION = "0.3.36"
FILENAME = f"llama_cpp_python-{VERSION}.tar.gz"
# The digest PyPI lists for FILENAME (its listing and the file must both agree with it): a
# changed file is refused, so every machine compiles the same llama.cpp. Updated by hand with
# VERSION and the side environment's lock (scripts/lock).
SHA256 = "832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e"
INDEX_URL = "https://pypi.org/simple"
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"
CHUNK = 1 << 20


def sdist_path(cache: Path | None = None) -> Path:
    """Where the downloaded sdist is kept (``<cache>/sdist/<file name>``)."""
    return (cache or cache_root()) / "sdist" / FILENAME


def file_digest(path: Path) -> str:
    """The SHA-256 of a file, as hex."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def sdist_url(index_url: str = INDEX_URL, timeout_s: float = 60.0) -> str:
    """The download URL of ``FILENAME`` in the index's JSON listing of ``PROJECT``."""
    listing_url = f"{index_url.rstrip('/')}/{PROJECT}/"
    request = urllib.request.Request(listing_url, headers={"Accept": SIMPLE_JSON})
    try:
        with urllib.request.urlopen(request, timeout=timeout_s) as response:
            listing = json.loads(response.read())
        files = listing["files"]
    except (OSError, ValueError, KeyError, TypeError) as error:
        raise RealPartError(
            f"could not read the {PROJECT} listing at {listing_url}: {type(error).__name__}: {error}"
        ) from None
    for entry in files if isinstance(files, list) else []:
        if isinstance(entry, dict) and entry.get("filename") == FILENAME:
            listed = (entry.get("hashes") or {}).get("sha256")
            if listed is not None and listed != SHA256:
                raise RealPartError(
                    f"{listing_url} lists {FILENAME} with sha256 {listed}, not the pinned {SHA256}"
                )
            return urllib.parse.urljoin(listing_url, str(entry["url"]))
    raise RealPartError(f"{listing_url} does not list {FILENAME}")


def download(url: str, target: Path, *, timeout_s: float = 300.0) -> None:
    """Fetch ``url`` into ``target`` if its bytes have the pinned digest; otherwise nothing is
    left behind and a ``RealPartError`` says which digest came instead."""
    target.parent.mkdir(parents=True, exist_ok=True)
    digest = hashlib.sha256()
    handle, partial = tempfile.mkstemp(prefix=f".{FILENAME}.", dir=target.parent)
    try:
        with (
            os.fdopen(handle, "wb") as out,
            urllib.request.urlopen(url, timeout=timeout_s) as response,
        ):
            while chunk := response.read(CHUNK):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != SHA256:
            raise RealPartError(
                f"{url} has sha256 {digest.hexdigest()}, not the pinned {SHA256}: refused"
            )
        os.replace(partial, target)
    except (OSError, urllib.error.URLError) as error:
        raise RealPartError(f"downloading {url}: {type(error).__name__}: {error}") from None
    finally:
        Path(partial).unlink(missing_ok=True)


def configured_index_url() -> str:
    """The package index the sdist is listed in: pip's own ``PIP_INDEX_URL`` when set (a
    mirror), else PyPI."""
    return os.environ.get("PIP_INDEX_URL") or INDEX_URL


def fetch_sdist(
    cache: Path | None = None,
    *,
    index_url: str | None = None,
    log: Callable[[str], None] = print,
) -> Path:
    """The sdist in the cache, downloaded first when it is missing or its digest is wrong
    (from ``index_url``, default ``configured_index_url()``)."""
    target = sdist_path(cache)
    if target.is_file():
        if file_digest(target) == SHA256:
            return target
        log(f"{target} does not have the pinned sha256: downloading it again")
        target.unlink()
    url = sdist_url(index_url or configured_index_url())
    log(f"downloading {url} (it vendors llama.cpp)")
    download(url, target)
    return target


def unpack_llama_cpp(archive: Path, source: Path) -> None:
    """Replace the folder ``source`` with the ``vendor/llama.cpp`` tree of the sdist
    ``archive``: only that tree is unpacked (next to ``source``, then moved in place), with the
    archive's file times, so a build folder made from an earlier unpacking stays up to date."""
    prefix = f"{archive.name.removesuffix('.tar.gz')}/vendor/llama.cpp/"
    source.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix=".srbench-unpack-", dir=source.parent) as scratch:
        with tarfile.open(archive) as tar:
            members = [member for member in tar.getmembers() if member.name.startswith(prefix)]
            if not members:
                raise RealPartError(f"{archive} has no {prefix.rstrip('/')} tree")
            tar.extractall(scratch, members=members, filter="data")
        if source.exists():
            shutil.rmtree(source)
        os.replace(Path(scratch) / prefix, source)
