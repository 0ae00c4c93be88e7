"""Where each sr-bench benchmark's released data lives: pure data, no I/O.

One ``Release`` per benchmark names its canonical home (a Hugging Face Hub dataset or a GitHub
repository), the files to take (glob patterns over paths in the repository), the licence,
whether the Hub gates it behind accepted terms, and which folder of the fetched files the
benchmark's converter (``datasets.formats.FORMATS``) reads. A release may have more than one
part: SciCode's rows come from one repository and its numeric targets (``test_data.h5``, a
suite asset) from another. Each part is pinned on its own in the fetch lock, under its key.

Revision policy, the same for every part: a commit id, never a moving branch. Without an
explicit ``--revision`` the commit recorded in the lock is used; a branch or tag given with
``--revision`` is resolved to its commit id, which is then recorded. docs/suites.md
("Canonical sources") says what was checked for each entry and when.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Literal

Host = Literal["huggingface", "github"]
HF_HOME_URL = "https://huggingface.co/datasets/{repo}"
GITHUB_HOME_URL = "https://github.com/{repo}"


@dataclass(frozen=True)
class Part:
    """One repository's files of a release, pinned on its own (``key`` in the lock)."""

    key: str
    host: Host
    repo: str
    patterns: tuple[str, ...]  # paths in the repository; ``*`` within a segment, ``**`` any depth
    gated: bool = False
    asset: str | None = None  # a suite asset path ("assets/…") for a single-file part
    note: str = ""

    @property
    def home(self) -> str:
        template = HF_HOME_URL if self.host == "huggingface" else GITHUB_HOME_URL
        return template.format(repo=self.repo)


@dataclass(frozen=True)
class Release:
    """A benchmark's released data: its parts, the converter's input and its licence."""

    benchmark: str
    parts: tuple[Part, ...]
    root: str  # the folder (or file) of the main part the converter reads; "" = the repo root
    file_format: str
    license: str
    options: dict[str, str] = field(default_factory=dict)  # converter options (str values)
    note: str = ""
    # how the fetched release falls short of the data sr-bench 1.0 scores ("" = it does not):
    # recorded in the origin, it keeps such a run's score from the sr-bench 1.0 label
    srbench_gap: str = ""

    @property
    def main(self) -> Part:
        return self.parts[0]

    @property
    def gated(self) -> bool:
        return any(part.gated for part in self.parts)


def _hf(key: str, repo: str, *patterns: str, gated: bool = False, asset: str | None = None,
        note: str = "") -> Part:  # fmt: skip
    return Part(key, "huggingface", repo, patterns, gated=gated, asset=asset, note=note)


def _gh(key: str, repo: str, *patterns: str) -> Part:
    return Part(key, "github", repo, patterns)


TAU_DOMAINS = ("airline",)  # the domains the tau3 adapter runs (retail and telecom: not yet)

RELEASES: dict[str, Release] = {
    r.benchmark: r
    for r in (
        Release("mmlu-pro", (_hf("mmlu-pro", "TIGER-Lab/MMLU-Pro", "data/test-*.parquet"),),
                "data", "parquet: question_id int64, question, options list<string>, answer, "
                "answer_index int64, cot_content, category, src", "MIT"),
        Release("gpqa-diamond",
                (_hf("gpqa-diamond", "Idavidrein/gpqa", "gpqa_diamond.csv", gated=True),),
                "gpqa_diamond.csv", "CSV: Question, Correct Answer, Incorrect Answer 1-3, "
                "Record ID, High-level domain, Subdomain, …", "CC-BY-4.0",
                note="gated: accept the terms on the dataset page; do not publish examples"),
        Release("simpleqa-verified",
                (_hf("simpleqa-verified", "google/simpleqa-verified", "simpleqa_verified.csv"),),
                "simpleqa_verified.csv", "CSV: original_index, problem, answer, topic, "
                "answer_type, multi_step, requires_reasoning, urls", "MIT"),
        Release("hle", (_hf("hle", "cais/hle", "data/test-*.parquet", gated=True),), "data",
                "parquet: id, question, image (string), image_preview (image), answer, "
                "answer_type, author_name, rationale, rationale_image (image), raw_subject, "
                "category, canary; rows with an image are dropped", "MIT",
                note="gated: accept the terms on the dataset page; do not re-upload the data"),
        Release("arc-agi-2", (_gh("arc-agi-2", "arcprize/ARC-AGI-2", "data/evaluation/*.json"),),
                "data/evaluation", "one JSON task per file: {train: [{input, output}], "
                "test: [{input, output}]}", "Apache-2.0"),
        Release("livecodebench",
                (_hf("livecodebench", "livecodebench/code_generation_lite", "test*.jsonl"),),
                "", "JSONL (test.jsonl … test6.jsonl = release_v1 … v6): question_title, "
                "question_content, platform, question_id, contest_id, contest_date, "
                "starter_code, difficulty, public_test_cases (JSON), private_test_cases "
                "(JSON or base64 zlib pickle), metadata (JSON)",
                "CC (variant not stated on the dataset card)",
                note="about 4.5 GB in all; the conversion reads every file"),
        Release("scicode",
                (_hf("scicode", "SciCode1/SciCode", "problems_test.jsonl"),
                 _hf("scicode-targets", "Srimadh/Scicode-test-data-h5", "test_data.h5",
                     asset="assets/test_data.h5",
                     note="the numeric targets; the authors release them in a Google Drive "
                     "folder (no versions), this Hub mirror (used by inspect_evals) pins them "
                     "by commit")),
                "problems_test.jsonl", "JSONL: problem_id, problem_name, "
                "problem_description_main, required_dependencies, sub_steps [{step_number, "
                "step_description_prompt, function_header, test_cases, return_line, …}]; "
                "test_data.h5 (HDF5, numeric targets by step and test)", "Apache-2.0"),
        Release("terminal-bench-2.1",
                (_gh("terminal-bench-2.1", "harbor-framework/terminal-bench-2",
                     "*/instruction.md", "*/task.toml", "*/tests/**", "*/environment/**"),),
                "", "one folder per task: instruction.md, task.toml, environment/ "
                "(Dockerfile, files), tests/test.sh (reference solutions are not taken)",
                "Apache-2.0",
                note="formerly laude-institute/terminal-bench-2; harbor's registry pins "
                "terminal-bench@2.0 at a commit of this repository"),
        Release("tau3",
                (_gh("tau3", "sierra-research/tau2-bench",
                     *(f"data/tau2/domains/{d}/{name}" for d in TAU_DOMAINS
                       for name in ("db.json", "policy.md", "tasks.json", "split_tasks.json")),
                     *(f"src/tau2/domains/{d}/tools.py" for d in TAU_DOMAINS),
                     "data/tau2/user_simulator/simulation_guidelines.md"),),
                "data/tau2/domains", "per domain: db.json, policy.md, tasks.json, "
                "split_tasks.json; src/tau2/domains/<d>/tools.py (parsed for the tools' kinds); "
                "data/tau2/user_simulator/simulation_guidelines.md (the user simulator's prompt)",
                "MIT", note="airline only: the retail and telecom domains do not run yet",
                srbench_gap="airline only; sr-bench 1.0's tau3 spans the airline, retail and "
                "telecom-base domains"),
    )
}  # fmt: skip

PART_KEYS: dict[str, Part] = {part.key: part for r in RELEASES.values() for part in r.parts}


def path_matches(path: str, pattern: str) -> bool:
    """``pattern`` matches the whole ``path``: ``*`` and ``?`` within one segment, ``**`` any
    number of segments (zero included)."""
    return _match(path.split("/"), pattern.split("/"))


def _match(parts: list[str], pattern: list[str]) -> bool:
    if not pattern:
        return not parts
    head, rest = pattern[0], pattern[1:]
    if head == "**":
        return any(_match(parts[i:], rest) for i in range(len(parts) + 1))
    return bool(parts) and fnmatchcase(parts[0], head) and _match(parts[1:], rest)


def wanted(path: str, part: Part) -> bool:
    return any(path_matches(path, pattern) for pattern in part.patterns)
