"""The ``srbench datasets`` sub-commands: fetch, prepare, synth, list and show suite folders.

Registering the parser imports nothing but the command-line choices: each command imports the
converters, pyarrow, huggingface_hub and the suite writers when it runs.
"""

from __future__ import annotations

import argparse
import itertools
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_srbench.core.errors import InputError
from pytest_srbench.core.plan.choices import (
    DEFAULT_SEED,
    EXTENSION_NAMES,
    PACKAGE_NAMES,
    PROFILES,
    SR_BENCH_NAMES,
    SYNTH_PROFILES,
)

if TYPE_CHECKING:
    from pytest_srbench.datasets.fetch import FetchSummary
    from pytest_srbench.datasets.prepare import PrepareSummary

DEFAULT_ROOT = "suites"
PREVIEW_CHARS = 60


def _error(message: object) -> int:
    print(f"srbench: {message}", file=sys.stderr)
    return 2


def cmd_datasets_prepare(args: argparse.Namespace) -> int:
    try:
        summary = _prepare(args)
    except InputError as error:
        return _error(error)
    except OSError as error:
        return _error(f"{error.filename or ''}: {error.strerror or error}")
    for line in _summary_lines(summary):
        print(line)
    return 0


def _prepare(args: argparse.Namespace) -> PrepareSummary:
    from pytest_srbench.datasets.formats._common import DatasetError
    from pytest_srbench.datasets.prepare import prepare
    from pytest_srbench.datasets.realdata import prepare_from_package

    root = Path(args.output_root)
    if args.from_package:
        given = [flag for flag, value in (("--source-path", args.source_path),
                 ("--revision", args.revision), ("--split", args.split),
                 ("--tools-source", args.tools_source), ("--license", args.license)) if value]  # fmt: skip
        if given:
            raise DatasetError(
                f"--from-package takes no {', '.join(given)} (the package pins them)"
            )
        return prepare_from_package(
            args.benchmark, profile=args.profile, seed=args.seed, limit=args.limit, output_root=root
        )
    if not args.source_path or not args.revision:
        raise DatasetError(
            "pass --source-path FILE_OR_DIR and --revision REV, or --from-package "
            f"(available for {', '.join(PACKAGE_NAMES)})"
        )
    return prepare(
        args.benchmark,
        Path(args.source_path),
        revision=args.revision,
        profile=args.profile,
        seed=args.seed,
        limit=args.limit,
        output_root=root,
        license=args.license,
        split=args.split,
        tools_source=Path(args.tools_source) if args.tools_source else None,
    )


def _summary_lines(summary: PrepareSummary) -> list[str]:
    dropped = ", ".join(f"{n} {reason}" for reason, n in sorted(summary.dropped.items()))
    subset = " (custom subset)" if summary.custom_subset else ""
    return [
        f"prepared {summary.benchmark} {summary.profile}{subset}: {summary.count} of "
        f"{summary.source_rows} rows, seed {summary.seed}, split {summary.split}"
        + (f" (dropped: {dropped})" if dropped else ""),
        f"  folder   {summary.folder}",
        f"  revision {summary.revision}",
        f"  sha256   {summary.sha256}",
    ]


def cmd_datasets_synth(args: argparse.Namespace) -> int:
    from pytest_srbench.datasets.suites import SUITE_META
    from pytest_srbench.datasets.synth import SynthError, write_synthetic_suites
    from pytest_srbench.render.terminal import table

    root = Path(args.out)
    released = _released_suites(root, args.benchmark or SR_BENCH_NAMES) if args.force else []
    if released:
        return _error(
            f"{', '.join(released)} hold{'s' if len(released) == 1 else ''} released data "
            "(fetched or from a package): --force would replace it with synthetic items; "
            "move it away first, or write the synthetic suites elsewhere with --out"
        )
    try:
        summaries = write_synthetic_suites(
            root, profile=args.profile, seed=args.seed, benchmarks=args.benchmark, force=args.force
        )
    except SynthError as error:
        return _error(error)
    except OSError as error:
        return _error(f"{error.filename or ''}: {error.strerror or error}")
    print(
        f"wrote {len(summaries)} synthetic suite(s) for the {args.profile} profile "
        f"(generator seed {args.seed}) under {root}"
    )
    rows = [[s.benchmark, str(s.count), str(s.folder), s.sha256[:16]] for s in summaries]
    for line in table(["benchmark", "rows", "folder", "sha256"], rows):
        print(f"  {line}")
    prepared = [root / f"{s.benchmark}.{args.profile}" for s in summaries]
    shadowing = [str(folder) for folder in prepared if (folder / SUITE_META).is_file()]
    if shadowing:
        print(
            f"note: {', '.join(shadowing)} (prepared for {args.profile}) take precedence over "
            f"the synthetic suite(s) in a {args.profile} run"
        )
    print(
        "These items are procedurally generated: a score on them measures the harness and the "
        "model on synthetic items, not the benchmarks."
    )
    return 0


def _released_suites(root: Path, benchmarks: Sequence[str]) -> list[str]:
    """The raw suite folders under ``root`` whose suite.json says released data."""
    from pytest_srbench.datasets.suites import data_kind

    return [str(root / b) for b in benchmarks if data_kind(root / b) == "released"]


def _suite_folders(root: Path) -> list[Path]:
    from pytest_srbench.datasets.formats._common import DatasetError
    from pytest_srbench.datasets.suites import SUITE_META

    if not root.is_dir():
        raise DatasetError(f"{root}: no such folder")
    return [
        child
        for child in sorted(root.iterdir())
        if child.is_dir() and not child.name.startswith(".") and (child / SUITE_META).is_file()
    ]


def _meta(folder: Path) -> dict[str, Any]:
    from pytest_srbench.datasets.formats._common import DatasetError
    from pytest_srbench.datasets.suites import SUITE_META

    try:
        meta = json.loads((folder / SUITE_META).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise DatasetError(f"{folder / SUITE_META}: unreadable ({error})") from None
    if not isinstance(meta, dict):
        raise DatasetError(f"{folder / SUITE_META}: the top level must be a JSON object")
    return meta


def _rows(folder: Path, meta: dict[str, Any]) -> str:
    from pytest_srbench.datasets.suites import SUITE_CASES

    if isinstance(meta.get("count"), int):
        return str(meta["count"])
    try:
        return str(
            sum(1 for line in (folder / SUITE_CASES).read_bytes().split(b"\n") if line.strip())
        )
    except OSError:
        return "?"


def cmd_datasets_list(args: argparse.Namespace) -> int:
    from pytest_srbench.render.terminal import table

    try:
        folders = _suite_folders(Path(args.root))
        rows = []
        for folder in folders:
            meta = _meta(folder)
            prepared = meta.get("prepared")
            if not isinstance(prepared, dict):
                prepared = {}
            rows.append(
                [folder.name, str(meta.get("benchmark", "?")), str(prepared.get("profile", "raw")),
                 _rows(folder, meta), str(prepared.get("seed", "-")), str(meta.get("source", "?")),
                 str(meta.get("revision", "?"))]
            )  # fmt: skip
    except InputError as error:
        return _error(error)
    if rows:
        header = ["suite", "benchmark", "profile", "rows", "seed", "source", "revision"]
        for line in table(header, rows):
            print(line)
    else:
        print(f"no suites under {args.root}")
    return _list_controlled(Path(args.root), args.kind)


def _list_controlled(root: Path, kind: str | None) -> int:
    """The RAG and agent datasets (``<id>.json``) of the shipped and the project folder; a
    corrupt file is reported, never fatal."""
    from pytest_srbench.datasets.controlled import DatasetDirectory  # pydantic: when listed
    from pytest_srbench.datasets.suites import shipped_suites_dir
    from pytest_srbench.render.terminal import table

    directory = DatasetDirectory([shipped_suites_dir(), root])
    found = directory.list(kind)
    if found:
        print()
        rows = [[d["dataset_id"], d["kind"], str(d["version"]), str(d["cases"]),
                 str(d["sha256"])[:12], str(d["location"])] for d in found]  # fmt: skip
        for line in table(["dataset", "kind", "version", "cases", "sha256", "location"], rows):
            print(line)
    for problem in directory.problems():
        print(
            f"skipped {problem['location']}: {problem['code']}: {problem['message']}",
            file=sys.stderr,
        )
    return 0


def _short(value: Any) -> Any:
    if isinstance(value, str) and len(value) > PREVIEW_CHARS:
        return value[: PREVIEW_CHARS - 1] + "…"
    if isinstance(value, list):
        return value if len(json.dumps(value)) <= PREVIEW_CHARS else f"[{len(value)} items]"
    if isinstance(value, dict):
        return value if len(json.dumps(value)) <= PREVIEW_CHARS else f"{{{len(value)} keys}}"
    return value


def _preview(row: dict[str, Any]) -> str:
    """The row with long strings cut and large lists / objects summarised."""
    return json.dumps({key: _short(value) for key, value in row.items()}, ensure_ascii=False)


def cmd_datasets_show(args: argparse.Namespace) -> int:
    from pytest_srbench.datasets.prepare import load_prepared
    from pytest_srbench.datasets.suites import SUITE_META

    folder = Path(args.root) / args.name
    if not (folder / SUITE_META).is_file():
        return _error(
            f"{folder}: no suite here (expected {SUITE_META}); see `srbench datasets list`"
        )
    try:
        suite = load_prepared(folder)
    except InputError as error:
        return _error(error)
    print(json.dumps(suite.meta, indent=2, sort_keys=True, ensure_ascii=False))
    shown = list(itertools.islice(suite.rows, args.rows))
    print(f"first {len(shown)} of {len(suite.rows)} rows:")
    for number, row in shown:
        print(f"  {number}: {_preview(row)}")
    return 0


def cmd_datasets_fetch(args: argparse.Namespace) -> int:
    from pytest_srbench.datasets.fetch import (
        FetchRequest,
        benchmarks_to_fetch,
        fetch_all,
        parse_revisions,
    )

    try:
        request = FetchRequest(
            benchmarks=benchmarks_to_fetch(args.benchmarks, args.all),
            revisions=parse_revisions(args.revision),
            profile=args.profile,
            seed=args.seed,
            out=Path(args.out),
        )
    except InputError as error:
        return _error(error)
    summaries, failures = fetch_all(request, log=print)
    for summary in summaries:
        print(_fetch_line(summary))
    for benchmark, message in failures:
        named = message if message.startswith(benchmark) else f"{benchmark}: {message}"
        print(f"srbench: fetch {named}", file=sys.stderr)
    if summaries:
        print(f"pins and file hashes: {Path(args.out) / 'fetch-lock.json'}")
    return 2 if failures else 0


def _fetch_line(summary: FetchSummary) -> str:
    dropped = ", ".join(f"{n} {reason}" for reason, n in sorted(summary.dropped.items()))
    rows = (
        f"{summary.count} of {summary.source_rows} rows for {summary.profile}"
        if summary.profile
        else f"all {summary.count} rows (a run selects its profile's cases)"
    )
    revisions = ", ".join(f"{key}@{commit}" for key, commit in summary.revisions.items())
    line = f"fetched {summary.benchmark} -> {summary.folder}: {rows}; {revisions}"
    if dropped:
        line += f" (dropped: {dropped})"
    if summary.replaced:
        line += f"; replaced: {summary.replaced}"
    for folder in summary.shadowed_by:
        line += (
            f"\n  note: {folder} (prepared for {folder.name.rpartition('.')[2]} from another "
            "revision) still takes precedence in that profile's runs; fetch it again with "
            "--profile to replace it"
        )
    return line


def add_datasets_commands(subparsers: Any) -> None:
    """Register ``datasets fetch|prepare|synth|list|show`` on an argparse sub-parsers object."""
    datasets = subparsers.add_parser(
        "datasets", help="fetch, prepare, synthesise, list and show benchmark suites"
    )
    sub = datasets.add_subparsers(dest="datasets_command", required=True)

    fetch = sub.add_parser(
        "fetch",
        help="download benchmarks' released data from their canonical homes, pinned and hashed",
        description="Downloads each benchmark's release (the Hugging Face Hub or GitHub), pins "
        "the commit in <out>/fetch-lock.json with every file's sha256, converts it and writes "
        "<out>/<benchmark>.<profile>/ (--profile) or the whole converted suite <out>/<benchmark>/"
        ". Without names: all nine. Without --revision the lock's commit is used; a branch or "
        "tag given with --revision is resolved to its commit id and recorded. Gated sets "
        "(gpqa-diamond, hle) need HF_TOKEN. docs/suites.md lists each source.",
    )
    fetch.add_argument(
        "benchmarks", nargs="*", metavar="BENCHMARK", help=f"any of: {', '.join(SR_BENCH_NAMES)}"
    )
    fetch.add_argument("--all", action="store_true", help="all nine benchmarks (the default)")
    fetch.add_argument(
        "--revision",
        action="append",
        metavar="[KEY=]REV",
        help="a commit id, or a branch or tag to resolve (e.g. main), for every source of the "
        "named benchmarks; KEY=REV for one source (a benchmark, or scicode-targets); repeatable",
    )
    fetch.add_argument("--profile", choices=PROFILES, help="write the suite selected for it")
    fetch.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"default {DEFAULT_SEED}")
    fetch.add_argument("--out", default=DEFAULT_ROOT, help="default ./suites (holds the lock)")
    fetch.set_defaults(func=cmd_datasets_fetch)

    prep = sub.add_parser(
        "prepare",
        help="convert a public release (or a data package) into a frozen, selected suite",
        description="Writes <output-root>/<benchmark>.<profile>/ (cases.jsonl + suite.json).",
    )
    prep.add_argument(
        "--benchmark", required=True, choices=sorted((*SR_BENCH_NAMES, *EXTENSION_NAMES))
    )
    prep.add_argument("--source-path", help="the public release file or folder")
    prep.add_argument("--revision", help="the pinned source revision (commit, tag or version)")
    prep.add_argument(
        "--from-package",
        action="store_true",
        help=f"read the real items of an installed data package ({', '.join(PACKAGE_NAMES)})",
    )
    prep.add_argument("--profile", required=True, choices=PROFILES)
    prep.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"default {DEFAULT_SEED}")
    prep.add_argument("--limit", type=int, help="keep only the first K cases (a custom subset)")
    prep.add_argument("--output-root", default=DEFAULT_ROOT, help="default ./suites")
    prep.add_argument("--license", help="the source's licence, recorded in suite.json")
    prep.add_argument("--split", help="arc-agi-2: the split of a split-keyed task file")
    prep.add_argument("--tools-source", help="tau3: the domain's tools.py (parsed, not imported)")
    prep.set_defaults(func=cmd_datasets_prepare)

    synth = sub.add_parser(
        "synth",
        help="write synthetic suites (generated items) so quick / standard run offline",
        description="Writes <out>/<benchmark>/ (cases.jsonl + suite.json) holding procedurally "
        "generated items in each benchmark's row format: the quick count for quick, the quick "
        "plus standard counts for standard. They exercise the harness; they are not benchmark data.",
    )
    synth.add_argument("--profile", required=True, choices=SYNTH_PROFILES)
    synth.add_argument("--out", default=DEFAULT_ROOT, help="default ./suites")
    synth.add_argument(
        "--seed", type=int, default=DEFAULT_SEED, help=f"generator seed (default {DEFAULT_SEED})"
    )
    synth.add_argument(
        "--benchmark",
        action="append",
        choices=SR_BENCH_NAMES,
        help="repeatable; default: all nine sr-bench benchmarks",
    )
    synth.add_argument(
        "--force",
        action="store_true",
        help="replace existing suite folders (never one holding released data)",
    )
    synth.set_defaults(func=cmd_datasets_synth)

    listing = sub.add_parser("list", help="the suites under a folder, raw and prepared")
    listing.add_argument("--root", default=DEFAULT_ROOT, help="default ./suites")
    listing.add_argument(
        "--kind", choices=("rag", "agent"), help="only RAG or agent datasets (<id>.json files)"
    )
    listing.set_defaults(func=cmd_datasets_list)

    show = sub.add_parser("show", help="a suite's suite.json and its first rows")
    show.add_argument("name", help="the suite folder name, e.g. mmlu-pro.quick")
    show.add_argument("--root", default=DEFAULT_ROOT, help="default ./suites")
    show.add_argument("--rows", type=int, default=3, help="rows to preview (default 3)")
    show.set_defaults(func=cmd_datasets_show)


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``datasets …`` on its own (the ``srbench`` command wires in the same parser)."""
    parser = argparse.ArgumentParser(prog="srbench")
    add_datasets_commands(parser.add_subparsers(dest="command", required=True))
    args = parser.parse_args(argv)
    code: int = args.func(args)
    return code


if __name__ == "__main__":
    sys.exit(main())
