"""Files of one Hugging Face Hub dataset at one commit, through ``huggingface_hub`` and its cache.

The environment is read when a fetch runs (not when the library was imported): ``HF_ENDPOINT``
(the Hub or a mirror), ``HF_TOKEN`` (gated sets; a stored ``hf auth login`` token also works),
``HF_HUB_OFFLINE`` (no request at all: every file must be cached) and the cache folder
(``HF_HUB_CACHE``, else ``HF_HOME``/hub, else ``~/.cache/huggingface/hub``). A file already
cached for the commit is taken from the cache without any request; the library downloads into
a temporary file that it renames into place, resuming an interrupted transfer with a Range
request; a transfer the library gives up on (releases before 1.0 do not retry a body cut
short) is asked for again, up to ``DOWNLOAD_ATTEMPTS`` times in all, from the bytes kept.
Its errors become ``DatasetError`` messages that say what to do.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_srbench.datasets.formats._common import DatasetError
from pytest_srbench.datasets.sources import Part

DEFAULT_ENDPOINT = "https://huggingface.co"
INSTALL = "pip install 'pytest-srbench[fetch]'"
DOWNLOAD_ATTEMPTS = 3
# what a connection cut, refused or timed out raises in requests, httpx, http.client and the
# standard library (by class name: huggingface_hub uses requests before 1.0, httpx from 1.0);
# not httpx's TransportError as a whole, whose LocalProtocolError and UnsupportedProtocol would
# only repeat
_TRANSFER_ERRORS = frozenset(
    {
        "ChunkedEncodingError",
        "ConnectionError",
        "ConnectTimeout",
        "IncompleteRead",
        "NetworkError",
        "ReadTimeout",
        "RemoteProtocolError",
        "Timeout",
        "TimeoutException",
    }
)


@dataclass(frozen=True)
class HubSettings:
    """The Hub settings of one fetch, read from the environment."""

    endpoint: str
    token: str | None
    offline: bool
    cache_dir: Path

    @classmethod
    def from_env(cls, env: dict[str, str] | None = None) -> HubSettings:
        env = dict(os.environ if env is None else env)
        if env.get("HF_HUB_CACHE"):
            cache = Path(env["HF_HUB_CACHE"]).expanduser()
        else:
            home = env.get("HF_HOME") or os.path.join(
                env.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache"),
                "huggingface",
            )
            cache = Path(home).expanduser() / "hub"
        offline = (env.get("HF_HUB_OFFLINE") or "").strip().lower() in {"1", "true", "yes", "on"}
        return cls(
            endpoint=(env.get("HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/"),
            token=env.get("HF_TOKEN") or None,
            offline=offline,
            cache_dir=cache,
        )


@dataclass(frozen=True)
class Listing:
    """A repository's files at one commit (and the Hub's sha256 of its LFS files)."""

    commit: str
    files: tuple[str, ...]
    lfs_sha256: dict[str, str]


def _hub() -> Any:
    try:
        import huggingface_hub
    except ImportError:
        raise DatasetError(
            f"fetching from the Hugging Face Hub needs huggingface_hub: {INSTALL}"
        ) from None
    return huggingface_hub


def terms_message(part: Part, settings: HubSettings) -> str:
    page = f"{settings.endpoint}/datasets/{part.repo}"
    return (
        f"{part.repo} is gated on the Hugging Face Hub: log in at {page}, accept its terms of "
        f"access, create a read token at {settings.endpoint}/settings/tokens, then "
        f"`export HF_TOKEN=<your token>` and fetch {part.key} again (the data stays in your "
        "caches and suites folder: never commit or publish it)"
    )


def _explain(error: Exception, part: Part, settings: HubSettings, what: str) -> DatasetError:
    """A library error as one sentence that says what to do."""
    _hub()
    from huggingface_hub import errors

    if isinstance(error, errors.GatedRepoError):
        return DatasetError(terms_message(part, settings))
    if isinstance(error, errors.RevisionNotFoundError):
        return DatasetError(f"{part.repo} has no revision {what!r} on {settings.endpoint}")
    missing_entry = getattr(errors, "RemoteEntryNotFoundError", errors.EntryNotFoundError)
    if isinstance(error, missing_entry):
        return DatasetError(f"{part.repo}: {what} does not exist at that revision")
    if isinstance(error, errors.RepositoryNotFoundError):
        status = getattr(getattr(error, "response", None), "status_code", None)
        if part.gated or status in (401, 403):
            return DatasetError(terms_message(part, settings))
        return DatasetError(f"{part.repo} is not a dataset on {settings.endpoint}")
    offline = (
        errors.LocalEntryNotFoundError,
        getattr(errors, "OfflineModeIsEnabled", errors.LocalEntryNotFoundError),
    )
    if isinstance(error, offline):
        return DatasetError(
            f"{part.repo}: {what} is not in the Hugging Face cache ({settings.cache_dir}) and "
            "HF_HUB_OFFLINE is set (or the Hub cannot be reached): fetch it once online"
        )
    if isinstance(error, errors.HfHubHTTPError):
        return DatasetError(f"{part.repo}: the Hub answered {error}".replace("\n", " "))
    return DatasetError(f"{part.repo}: {what}: {type(error).__name__}: {error}")


def list_revision(part: Part, revision: str, settings: HubSettings) -> Listing:
    """The commit id a revision names and the repository's files there (one request)."""
    if settings.offline:
        raise DatasetError(
            f"{part.repo}: HF_HUB_OFFLINE is set, so revision {revision!r} cannot be looked up; "
            "fetch once online, or use the pins recorded in the fetch lock"
        )
    hub = _hub()
    api = hub.HfApi(endpoint=settings.endpoint, token=settings.token)
    try:
        info = api.dataset_info(part.repo, revision=revision)
    except Exception as error:  # the library's errors, translated
        raise _explain(error, part, settings, revision) from None
    if not info.sha:
        raise DatasetError(f"{part.repo}: the Hub named no commit for revision {revision!r}")
    files: list[str] = []
    lfs: dict[str, str] = {}
    for sibling in info.siblings or []:
        files.append(sibling.rfilename)
        if sibling.lfs is not None and sibling.lfs.sha256:
            lfs[sibling.rfilename] = sibling.lfs.sha256
    return Listing(commit=str(info.sha), files=tuple(sorted(files)), lfs_sha256=lfs)


def cached_file(part: Part, path: str, commit: str, settings: HubSettings) -> Path | None:
    """The cached copy of ``path`` at ``commit``, found without any request."""
    found = _hub().try_to_load_from_cache(
        part.repo, path, cache_dir=str(settings.cache_dir), revision=commit, repo_type="dataset"
    )
    return Path(found) if isinstance(found, str) else None


def has_token(settings: HubSettings) -> bool:
    return bool(settings.token or _hub().get_token())


def download(
    part: Part,
    path: str,
    commit: str,
    settings: HubSettings,
    on_download: Callable[[str], None] | None = None,
) -> Path:
    """The file ``path`` at ``commit``: from the cache, else downloaded into it."""
    cached = cached_file(part, path, commit, settings)
    if cached is not None:
        return cached
    if settings.offline:
        raise DatasetError(
            f"{part.repo}: {path} at {commit} is not in the Hugging Face cache "
            f"({settings.cache_dir}) and HF_HUB_OFFLINE is set: fetch it once online"
        )
    if on_download is not None:
        on_download(path)
    hub = _hub()
    attempt = 1
    while True:
        try:
            local = hub.hf_hub_download(
                part.repo,
                path,
                repo_type="dataset",
                revision=commit,
                cache_dir=str(settings.cache_dir),
                endpoint=settings.endpoint,
                token=settings.token,
            )
        except Exception as error:  # the library's errors, translated
            if attempt < DOWNLOAD_ATTEMPTS and is_transfer_error(error):
                time.sleep(0.5 * attempt)
                attempt += 1
                continue
            raise _explain(error, part, settings, path) from None
        return Path(local)


def is_transfer_error(error: BaseException) -> bool:
    """Whether ``error`` is a connection cut, refused or timed out (worth asking again), as
    opposed to an answer from the Hub (gated, missing, a status) that would only repeat."""
    _hub()
    from huggingface_hub import errors

    if isinstance(error, errors.HfHubHTTPError):
        return False
    return any(kind.__name__ in _TRANSFER_ERRORS for kind in type(error).__mro__)
