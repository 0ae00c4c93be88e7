"""``srbench datasets fetch``: each benchmark's release from its canonical home, pinned and hashed.

For every part of a release (``datasets.sources``) the commit is chosen first: a ``--revision``
that is a commit id is used as is, a branch or tag is resolved to its commit id (one request),
and without ``--revision`` the commit recorded in the fetch lock is used; with neither the
fetch is refused and the message says what to pass. The part's files then come from the
Hugging Face cache or Hub (``hubfetch``) or from the commit's cached GitHub archive
(``githubfetch``); each file's sha256 is compared with the lock when the pin came from it.
The files are converted by the benchmark's format converter and written as a suite selected
for a profile (``<out>/<benchmark>.<profile>/``, through ``prepare_conversion``) or whole
(``<out>/<benchmark>/``), with an ``origin`` naming the source, the commit and every file's
hash. The lock is rewritten after each benchmark that succeeds, so a failure (a gated set
without a token, say) loses nothing already fetched.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_srbench.core.errors import InputError
from pytest_srbench.core.plan.choices import DEFAULT_SEED, PROFILES
from pytest_srbench.datasets import githubfetch, hubfetch
from pytest_srbench.datasets.fetchlock import Pin, lock_path, read_lock, write_lock
from pytest_srbench.datasets.formats import FORMATS
from pytest_srbench.datasets.formats._common import DatasetError
from pytest_srbench.datasets.prepare import prepare_conversion, write_full_suite
from pytest_srbench.datasets.sources import PART_KEYS, RELEASES, Part, Release, wanted
from pytest_srbench.datasets.suites import SUITE_META

COMMIT = re.compile(r"[0-9a-f]{40}")
ALL_PARTS = "*"
VIA = "srbench datasets fetch"
GATED_IGNORE = b"# gated data: keep it out of version control\n*\n"
Log = Callable[[str], None]


@dataclass(frozen=True)
class FetchRequest:
    """What to fetch and where to write it."""

    benchmarks: tuple[str, ...]
    revisions: Mapping[str, str] = field(default_factory=dict)  # part key or "*" -> revision
    profile: str | None = None
    seed: int = DEFAULT_SEED
    out: Path = Path("suites")


@dataclass
class FetchedPart:
    """One part's pinned commit and its files (path in the repository -> local file)."""

    part: Part
    commit: str
    resolved_from: str | None
    files: dict[str, Path]
    hashes: dict[str, str]
    downloads: int


@dataclass(frozen=True)
class FetchSummary:
    """What one benchmark's fetch wrote."""

    benchmark: str
    folder: Path
    count: int
    source_rows: int
    profile: str | None
    revisions: dict[str, str]
    downloads: int
    dropped: dict[str, int]
    replaced: str | None = None
    shadowed_by: tuple[Path, ...] = ()  # prepared suites of another revision that still win


def parse_revisions(values: Sequence[str] | None) -> dict[str, str]:
    """``REV`` (every part of the named benchmarks) or ``KEY=REV`` (one part)."""
    found: dict[str, str] = {}
    for value in values or ():
        key, sep, revision = value.partition("=")
        if sep and key in PART_KEYS:
            target, revision = key, revision.strip()
        elif sep and re.fullmatch(r"[a-z0-9.-]+", key):
            raise DatasetError(
                f"--revision {value}: {key!r} is no source key (known: "
                f"{', '.join(sorted(PART_KEYS))})"
            )
        else:
            target, revision = ALL_PARTS, value.strip()
        if not revision:
            raise DatasetError(f"--revision {value}: the revision is empty")
        if target in found and found[target] != revision:
            raise DatasetError(f"--revision given twice for {target}")
        found[target] = revision
    return found


def benchmarks_to_fetch(names: Sequence[str], every: bool) -> tuple[str, ...]:
    unknown = [name for name in names if name not in RELEASES]
    if unknown:
        raise DatasetError(
            f"no canonical source is known for {', '.join(unknown)} "
            f"(fetch knows: {', '.join(RELEASES)})"
        )
    if every or not names:
        return tuple(RELEASES)
    return tuple(dict.fromkeys(names))


def fetch_all(
    request: FetchRequest, env: Mapping[str, str] | None = None, log: Log = print
) -> tuple[list[FetchSummary], list[tuple[str, str]]]:
    """Fetch every requested benchmark; returns the summaries and (benchmark, error) pairs."""
    environment = dict(os.environ if env is None else env)
    hub = hubfetch.HubSettings.from_env(environment)
    github = githubfetch.GithubSettings.from_env(environment)
    out = Path(request.out)
    path = lock_path(out)
    pins = read_lock(path)
    summaries: list[FetchSummary] = []
    failures: list[tuple[str, str]] = []
    try:
        for benchmark in request.benchmarks:
            try:
                summary, new_pins = fetch_one(RELEASES[benchmark], request, pins, hub, github, log)
            except (InputError, OSError) as error:
                message = str(error) if isinstance(error, InputError) else _os_error(error)
                failures.append((benchmark, message))
                continue
            pins.update(new_pins)
            write_lock(path, pins)
            summaries.append(summary)
    finally:
        githubfetch.close()
    return summaries, failures


def _os_error(error: OSError) -> str:
    return f"{error.filename or ''}: {error.strerror or error}".strip(": ")


def fetch_one(
    release: Release,
    request: FetchRequest,
    pins: Mapping[str, Pin],
    hub: hubfetch.HubSettings,
    github: githubfetch.GithubSettings,
    log: Log,
) -> tuple[FetchSummary, dict[str, Pin]]:
    """Fetch, check and convert one release; write its suite. Returns the new pins."""
    with tempfile.TemporaryDirectory(prefix="srbench-fetch-") as scratch:
        work = Path(scratch)
        fetched = [
            _fetch_part(part, request, pins.get(part.key), hub, github, work / part.key, log)
            for part in release.parts
        ]
        main = fetched[0]
        fmt = FORMATS[release.benchmark]
        root = work / main.part.key / release.root if release.root else work / main.part.key
        conversion = fmt.convert(root, **release.options)
        for extra in fetched[1:]:
            if extra.part.asset:
                (only,) = extra.files.values()
                conversion.assets[extra.part.asset] = only
        origin = _origin(release, fetched, hub, github)
        source = _source_text(main)
        extra_files = {".gitignore": GATED_IGNORE} if release.gated else {}
        out = Path(request.out)
        replaced = _describe_existing(out / release.benchmark) if request.profile is None else None
        if request.profile is None:
            folder, count, _ = write_full_suite(
                release.benchmark, conversion, source=source, revision=main.commit,
                output_root=out, license=release.license, origin=origin, extra_files=extra_files,
            )  # fmt: skip
        else:
            summary = prepare_conversion(
                release.benchmark, conversion, source=source, revision=main.commit,
                profile=request.profile, seed=request.seed, output_root=out,
                license=release.license, origin=origin, extra_files=extra_files,
                source_files=[{"name": name if item is main else f"{item.part.key}:{name}",
                               "sha256": digest}
                              for item in fetched for name, digest in sorted(item.hashes.items())],
            )  # fmt: skip
            folder, count = summary.folder, summary.count
    new_pins = {
        item.part.key: Pin(release.benchmark, item.part.host, item.part.repo, item.part.home,
                           item.commit, dict(item.hashes))
        for item in fetched
    }  # fmt: skip
    return (
        FetchSummary(
            benchmark=release.benchmark,
            folder=folder,
            count=count,
            source_rows=len(conversion.rows),
            profile=request.profile,
            revisions={item.part.key: item.commit for item in fetched},
            downloads=sum(item.downloads for item in fetched),
            dropped=dict(conversion.dropped),
            replaced=replaced,
            shadowed_by=_stale_prepared(out, release.benchmark, main.commit)
            if request.profile is None
            else (),
        ),
        new_pins,
    )


def _stale_prepared(out: Path, benchmark: str, commit: str) -> tuple[Path, ...]:
    """``<out>/<benchmark>.<profile>/`` folders whose revision is not ``commit``."""
    stale = []
    for profile in PROFILES:
        folder = out / f"{benchmark}.{profile}"
        try:
            meta = json.loads((folder / SUITE_META).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(meta, dict) and meta.get("revision") != commit:
            stale.append(folder)
    return tuple(stale)


def _describe_existing(folder: Path) -> str | None:
    """What a whole-suite fetch is about to replace (its source line), if anything."""
    try:
        meta = json.loads((folder / SUITE_META).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return str(meta.get("source")) if isinstance(meta, dict) else None


def _requested_revision(part: Part, request: FetchRequest) -> str | None:
    return request.revisions.get(part.key) or request.revisions.get(ALL_PARTS)


def _choose_commit(
    part: Part, request: FetchRequest, pin: Pin | None, resolve: Callable[[str], str], log: Log
) -> tuple[str, str | None]:
    """(commit, the branch or tag it was resolved from, if it was)."""
    asked = _requested_revision(part, request)
    if asked is None:
        if pin is None:
            raise DatasetError(
                f"{part.key}: no pinned revision of {part.repo} yet (nothing in "
                f"{lock_path(request.out)}). Pass --revision main to take the current commit of "
                f"its default branch (resolved to a commit id and recorded in the lock), or "
                f"--revision <40-hex commit id>; browse its history at {part.home}"
            )
        return pin.revision, None
    if COMMIT.fullmatch(asked.lower()):
        return asked.lower(), None
    commit = resolve(asked)
    log(f"{part.key}: revision {asked!r} of {part.repo} is commit {commit}")
    return commit, asked


def _fetch_part(
    part: Part,
    request: FetchRequest,
    pin: Pin | None,
    hub: hubfetch.HubSettings,
    github: githubfetch.GithubSettings,
    dest: Path,
    log: Log,
) -> FetchedPart:
    dest.mkdir(parents=True, exist_ok=True)
    if pin is not None and (pin.host != part.host or pin.repo != part.repo):
        pin = None  # the release moved: the old pin names another repository
    if part.host == "huggingface":
        fetched = _hub_part(part, request, pin, hub, dest, log)
    else:
        fetched = _github_part(part, request, pin, github, dest, log)
    _check_against_lock(part, fetched, pin, request)
    return fetched


def _hub_part(
    part: Part,
    request: FetchRequest,
    pin: Pin | None,
    settings: hubfetch.HubSettings,
    dest: Path,
    log: Log,
) -> FetchedPart:
    listings: dict[str, hubfetch.Listing] = {}

    def resolve(revision: str) -> str:
        listing = hubfetch.list_revision(part, revision, settings)
        listings[listing.commit] = listing
        return listing.commit

    commit, resolved_from = _choose_commit(part, request, pin, resolve, log)
    lfs: dict[str, str] = {}
    if pin is not None and pin.revision == commit:
        names = sorted(pin.files)
    else:
        listing = listings.get(commit) or hubfetch.list_revision(part, commit, settings)
        names = [name for name in listing.files if wanted(name, part)]
        lfs = listing.lfs_sha256
        if not names:
            raise DatasetError(
                f"{part.key}: no file of {part.repo} at {commit} matches "
                f"{', '.join(part.patterns)} (it holds: "
                f"{', '.join(listing.files[:12]) or 'nothing'})"
            )
    uncached = [n for n in names if hubfetch.cached_file(part, n, commit, settings) is None]
    if part.gated and uncached and not hubfetch.has_token(settings):
        raise DatasetError(hubfetch.terms_message(part, settings))
    downloads = 0

    def count(_: str) -> None:
        nonlocal downloads
        downloads += 1

    files: dict[str, Path] = {}
    hashes: dict[str, str] = {}
    for name in names:
        local = hubfetch.download(part, name, commit, settings, on_download=count)
        digest = githubfetch.sha256_file(local)
        if name in lfs and lfs[name] != digest:
            raise DatasetError(
                f"{part.key}: {name} at {part.repo}@{commit} has sha256 {digest}, but the Hub "
                f"lists {lfs[name]} for it: the download is damaged; delete {local} and fetch again"
            )
        files[name] = _link(local, dest / name)
        hashes[name] = digest
    log(
        f"{part.key}: {len(names)} file(s) of {part.repo}@{commit[:12]} "
        f"({downloads} downloaded, {len(names) - downloads} from the cache)"
    )
    return FetchedPart(part, commit, resolved_from, files, hashes, downloads)


def _github_part(
    part: Part,
    request: FetchRequest,
    pin: Pin | None,
    settings: githubfetch.GithubSettings,
    dest: Path,
    log: Log,
) -> FetchedPart:
    commit, resolved_from = _choose_commit(
        part, request, pin, lambda ref: githubfetch.resolve_ref(part, ref, settings), log
    )
    downloads = 0

    def count(_: str) -> None:
        nonlocal downloads
        downloads += 1

    archive = githubfetch.archive(part, commit, settings, count)
    files = githubfetch.extract(part, archive, dest)
    if not files:
        raise DatasetError(
            f"{part.key}: the archive of {part.repo}@{commit} holds no file matching "
            f"{', '.join(part.patterns)}"
        )
    hashes = {name: githubfetch.sha256_file(path) for name, path in sorted(files.items())}
    log(
        f"{part.key}: {len(files)} file(s) of {part.repo}@{commit[:12]} "
        f"({'downloaded' if downloads else 'from the cached archive'})"
    )
    return FetchedPart(part, commit, resolved_from, files, hashes, downloads)


def _check_against_lock(
    part: Part, fetched: FetchedPart, pin: Pin | None, request: FetchRequest
) -> None:
    """A file that differs from the lock's pin of the same commit is refused, unless the
    revision was given explicitly (which records the new hashes)."""
    if pin is None or pin.revision != fetched.commit or _requested_revision(part, request):
        return
    where = lock_path(request.out)
    missing = sorted(set(pin.files) - set(fetched.hashes))
    extra = sorted(set(fetched.hashes) - set(pin.files))
    if missing or extra:
        raise DatasetError(
            f"{part.key}: {part.repo}@{fetched.commit} no longer has the files {where} records "
            f"(missing: {', '.join(missing) or '-'}; new: {', '.join(extra) or '-'}); nothing "
            f"was written. To record what is there now: srbench datasets fetch "
            f"{_benchmark_of(part)} --revision {fetched.commit}"
        )
    for name, expected in sorted(pin.files.items()):
        actual = fetched.hashes[name]
        if actual != expected:
            raise DatasetError(
                f"{part.key}: {name} at {part.repo}@{fetched.commit} has sha256 {actual}, but "
                f"{where} records {expected}: the file changed since it was pinned, so nothing "
                f"was written. A damaged cached copy: delete {fetched.files[name].resolve()} and "
                f"fetch again; a change you accept: srbench datasets fetch "
                f"{_benchmark_of(part)} --revision {fetched.commit}"
            )


def _benchmark_of(part: Part) -> str:
    return next(r.benchmark for r in RELEASES.values() if part in r.parts)


def _link(source: Path, target: Path) -> Path:
    """``target`` names the cached file (a symbolic link, or a copy where links fail)."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        target.symlink_to(source.resolve())
    except OSError:
        shutil.copyfile(source, target)
    return target


def _source_text(main: FetchedPart) -> str:
    host = "the Hugging Face Hub" if main.part.host == "huggingface" else "GitHub"
    count = len(main.files)
    shown = next(iter(main.files)) if count == 1 else ", ".join(main.part.patterns)
    return f"{main.part.repo} on {host} ({shown}; {count} file{'s' if count != 1 else ''})"


def _origin(
    release: Release,
    fetched: list[FetchedPart],
    hub: hubfetch.HubSettings,
    github: githubfetch.GithubSettings,
) -> dict[str, Any]:
    main = fetched[0]
    origin: dict[str, Any] = {
        "kind": "released",
        "source": main.part.home,
        "revision": main.commit,
        "files": dict(sorted(main.hashes.items())),
        "license": release.license,
        "via": VIA,
    }
    if release.srbench_gap:
        origin["srbench_gap"] = release.srbench_gap
    mirror = _mirror(main.part, hub, github)
    if mirror:
        origin["endpoint"] = mirror
    assets = {
        item.part.asset: {
            "source": item.part.home,
            "revision": item.commit,
            "files": dict(sorted(item.hashes.items())),
            **({"note": item.part.note} if item.part.note else {}),
        }
        for item in fetched[1:]
        if item.part.asset
    }
    if assets:
        origin["assets"] = assets
    return origin


def _mirror(part: Part, hub: hubfetch.HubSettings, github: githubfetch.GithubSettings) -> str:
    """The base URL actually used when it is not the canonical one (a mirror, a test server)."""
    if part.host == "huggingface":
        return "" if hub.endpoint == hubfetch.DEFAULT_ENDPOINT else hub.endpoint
    return "" if github.archives == githubfetch.DEFAULT_ARCHIVES else github.archives
