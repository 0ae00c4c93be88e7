"""Files of one GitHub repository at one commit, from the commit's archive, cached by commit id.

Base URLs are read when a fetch runs: ``SRBENCH_GITHUB_ENDPOINT`` for archives (default
``https://codeload.github.com``, fetched as ``<endpoint>/<owner>/<repo>/tar.gz/<commit>``) and
``SRBENCH_GITHUB_API`` to resolve a branch or tag to its commit (default
``https://api.github.com``); ``GITHUB_TOKEN``, when set, goes to the API only (a higher rate
limit) and is never written anywhere. ``HF_HUB_OFFLINE`` forbids every request here too.

The archive is kept as ``<cache>/github/<owner>/<repo>/<commit>.tar.gz`` (``$SRBENCH_CACHE``,
else ``~/.cache/pytest-srbench``, the same folder as the real model parts): it is downloaded
into a temporary file beside it (a dropped connection is resumed with a Range request, or the
download restarts when the server ignores the range), checked (size, gzip and tar structure)
and only then renamed into place, so a partial download never carries the final name.
"""

from __future__ import annotations

import functools
import hashlib
import os
import tarfile
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING

from pytest_srbench.datasets.formats._common import DatasetError
from pytest_srbench.datasets.sources import Part, wanted

if TYPE_CHECKING:
    import httpx

DEFAULT_ARCHIVES = "https://codeload.github.com"
DEFAULT_API = "https://api.github.com"
ATTEMPTS = 3
CHUNK = 1 << 16


@dataclass(frozen=True)
class GithubSettings:
    """The GitHub settings of one fetch, read from the environment."""

    archives: str
    api: str
    token: str | None
    offline: bool
    cache_dir: Path

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> GithubSettings:
        env = dict(os.environ if env is None else env)
        # the same rule as managed.common.cache_root (datasets may not import managed)
        cache = (
            Path(env["SRBENCH_CACHE"])
            if env.get("SRBENCH_CACHE")
            else Path.home() / ".cache" / "pytest-srbench"
        )
        offline = (env.get("HF_HUB_OFFLINE") or "").strip().lower() in {"1", "true", "yes", "on"}
        return cls(
            archives=(env.get("SRBENCH_GITHUB_ENDPOINT") or DEFAULT_ARCHIVES).rstrip("/"),
            api=(env.get("SRBENCH_GITHUB_API") or DEFAULT_API).rstrip("/"),
            token=env.get("GITHUB_TOKEN") or None,
            offline=offline,
            cache_dir=cache / "github",
        )


@functools.cache
def _client() -> httpx.Client:
    """One client for the process (building its TLS context costs a tenth of a second)."""
    import httpx

    return httpx.Client(follow_redirects=True, timeout=httpx.Timeout(30.0, read=120.0))


def close() -> None:
    """Close the shared client (the next request opens a new one)."""
    if _client.cache_info().currsize:
        _client().close()
        _client.cache_clear()


def resolve_ref(part: Part, ref: str, settings: GithubSettings) -> str:
    """The commit id a branch, tag or short commit names (one API request)."""
    if settings.offline:
        raise DatasetError(
            f"{part.repo}: HF_HUB_OFFLINE is set, so {ref!r} cannot be resolved to a commit; "
            "fetch once online, or use the pins recorded in the fetch lock"
        )
    import httpx

    url = f"{settings.api}/repos/{part.repo}/commits/{ref}"
    headers = {"Accept": "application/vnd.github+json"}
    if settings.token:
        headers["Authorization"] = f"Bearer {settings.token}"
    try:
        response = _client().get(url, headers=headers)
    except httpx.HTTPError as error:
        raise DatasetError(f"{part.repo}: cannot reach {settings.api} ({error})") from None
    if response.status_code in (404, 422):
        raise DatasetError(f"{part.repo} has no branch, tag or commit {ref!r}")
    if response.status_code in (401, 403, 429):
        raise DatasetError(
            f"{part.repo}: the GitHub API refused to resolve {ref!r} (HTTP "
            f"{response.status_code}, probably its rate limit): set GITHUB_TOKEN, or pass the "
            "commit id itself as --revision"
        )
    try:
        sha = response.json()["sha"] if response.status_code == 200 else None
    except (ValueError, KeyError, TypeError):
        sha = None
    if not isinstance(sha, str) or len(sha) != 40:
        raise DatasetError(
            f"{part.repo}: {url} answered HTTP {response.status_code} without a commit id"
        )
    return sha.lower()


def archive_path(part: Part, commit: str, settings: GithubSettings) -> Path:
    return settings.cache_dir / part.repo / f"{commit}.tar.gz"


def archive(
    part: Part, commit: str, settings: GithubSettings, on_download: Callable[[str], None] | None
) -> Path:
    """The commit's archive: from the cache, else downloaded into it."""
    target = archive_path(part, commit, settings)
    if target.is_file():
        return target
    if settings.offline:
        raise DatasetError(
            f"{part.repo}: the archive of {commit} is not in {target.parent} and HF_HUB_OFFLINE "
            "is set: fetch it once online"
        )
    url = f"{settings.archives}/{part.repo}/tar.gz/{commit}"
    if on_download is not None:
        on_download(url)
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f"{target.name}.{uuid.uuid4().hex[:8]}.partial")
    try:
        _download(url, partial)
        _check_archive(partial, url)
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    return target


def _download(url: str, partial: Path) -> None:
    """Stream ``url`` into ``partial``; a dropped connection resumes from the bytes written."""
    import httpx

    written = 0
    total: int | None = None
    failure: Exception | None = None
    client = _client()
    for _attempt in range(ATTEMPTS):
        headers = {"Accept-Encoding": "identity"}
        if written:
            headers["Range"] = f"bytes={written}-"
        try:
            with client.stream("GET", url, headers=headers) as response:
                if response.status_code == 404:
                    raise DatasetError(f"{url}: not found (HTTP 404): no such commit archive")
                if response.status_code not in (200, 206):
                    raise DatasetError(f"{url}: HTTP {response.status_code}")
                if response.status_code == 200:
                    written = 0  # a fresh body (the server ignored or was not asked a range)
                    length = response.headers.get("Content-Length")
                    total = int(length) if length and length.isdigit() else None
                else:
                    whole = response.headers.get("Content-Range", "").rpartition("/")[2]
                    total = int(whole) if whole.isdigit() else total
                with open(partial, "ab" if written else "wb") as handle:
                    for chunk in response.iter_raw():
                        handle.write(chunk)
                        written += len(chunk)
                    handle.flush()
                    os.fsync(handle.fileno())
        except httpx.TransportError as error:
            failure = error
            continue
        if total is None or written == total:
            return
        failure = OSError(f"received {written} of {total} bytes")
    raise DatasetError(
        f"{url}: download failed after {ATTEMPTS} attempts ({failure}); nothing kept"
    )


def _check_archive(path: Path, url: str) -> None:
    try:
        with tarfile.open(path, "r:gz") as tar:
            for _member in tar:
                pass
    except (tarfile.TarError, OSError, EOFError) as error:
        raise DatasetError(
            f"{url}: not a complete tar.gz archive ({error}); nothing kept"
        ) from None


def extract(part: Part, archive_file: Path, dest: Path) -> dict[str, Path]:
    """Write the part's files (paths below the archive's top folder) under ``dest``."""
    found: dict[str, Path] = {}
    try:
        with tarfile.open(archive_file, "r:gz") as tar:
            for member in tar:
                _, _, inner = member.name.partition("/")
                if not inner or not member.isfile() or not wanted(inner, part):
                    continue
                relative = PurePosixPath(inner)
                if relative.is_absolute() or ".." in relative.parts:
                    raise DatasetError(f"{archive_file}: unsafe member path {member.name!r}")
                stream = tar.extractfile(member)
                if stream is None:
                    continue
                target = dest.joinpath(*relative.parts)
                target.parent.mkdir(parents=True, exist_ok=True)
                with stream, open(target, "wb") as handle:
                    while chunk := stream.read(CHUNK):
                        handle.write(chunk)
                found[relative.as_posix()] = target
    except (tarfile.TarError, OSError, EOFError) as error:
        raise DatasetError(
            f"{archive_file}: the cached archive is damaged ({error}); delete it and fetch again"
        ) from None
    return found


def sha256_file(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()
