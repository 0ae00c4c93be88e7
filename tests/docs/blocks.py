"""Fenced blocks of the Markdown docs, their doc-test markers, and how they group into runs.

The convention (also in ``docs/contributing-docs.md``): every fenced block has a language.
Blocks in an executable language (``EXECUTABLE``) are run by ``tests/docs/test_docs_run.py``
unless the line right before the fence says why not::

    <!-- illustrative: needs OPENAI_API_KEY and the internet -->

``<!-- doc-test: project=NAME [file=PATH] [exit=N] -->`` joins blocks of one document into one
project folder: ``toml`` blocks (and blocks with ``file=``) are written into it first, then its
shell and Python blocks run in document order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

# language → how it is executed; every other language must be listed in DATA
EXECUTABLE = {
    "bash": "shell",
    "sh": "shell",
    "shell": "shell",
    "console": "shell",
    "python": "python",
    "py": "python",
    "toml": "toml",
}
DATA = frozenset({"text", "json", "jsonl", "yaml", "yml", "markdown", "md", "csv", "diff", "html"})
OPTIONS = frozenset({"project", "file", "exit"})

_FENCE = re.compile(r"^(?P<indent>[ \t]*)(?P<fence>`{3,}|~{3,})(?P<info>.*)$")
_MARKER = re.compile(r"^\s*<!--\s*(?P<kind>illustrative|doc-test)\s*:?(?P<body>.*?)-->\s*$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*$")


@dataclass(frozen=True)
class Block:
    """One fenced block: where it is, its language and text, and the marker before it."""

    doc: str  # the document's path relative to the repository, e.g. "docs/routers.md"
    line: int  # the line of the opening fence (1-based)
    lang: str
    text: str
    illustrative: str | None = None  # the reason, when marked illustrative
    options: dict[str, str] = field(default_factory=dict)  # doc-test options

    @property
    def where(self) -> str:
        return f"{self.doc}:{self.line}"

    @property
    def kind(self) -> str:
        """``shell``, ``python``, ``toml`` or ``data``."""
        return EXECUTABLE.get(self.lang, "data")


@dataclass
class Group:
    """Blocks that run together in one fresh project folder."""

    doc: str
    project: str | None
    blocks: list[Block]

    @property
    def test_id(self) -> str:
        return f"{self.doc}:" + "+".join(str(block.line) for block in self.blocks)


def parse(text: str, doc: str) -> tuple[list[Block], list[str]]:
    """Every fenced block of a Markdown text, and the convention's violations."""
    lines = text.splitlines()
    blocks: list[Block] = []
    problems: list[str] = []
    pending: tuple[int, str, str] | None = None  # (line, kind, body) of a marker
    number = 0
    while number < len(lines):
        line = lines[number]
        number += 1
        marker = _MARKER.match(line)
        if marker:
            if pending is not None:
                problems.append(f"{doc}:{pending[0]}: marker not directly before a fenced block")
            pending = (number, marker["kind"], marker["body"].strip())
            continue
        opened = _FENCE.match(line)
        if not opened:
            if pending is not None:
                problems.append(f"{doc}:{pending[0]}: marker not directly before a fenced block")
                pending = None
            continue
        start, indent, fence = number, len(opened["indent"]), opened["fence"]
        lang = opened["info"].strip().split(" ")[0].lower() if opened["info"].strip() else ""
        body: list[str] = []
        while number < len(lines):
            closing = lines[number]
            number += 1
            stripped = closing.strip()
            if stripped.startswith(fence[0] * len(fence)) and not stripped.strip(fence[0]):
                break
            body.append(closing[indent:] if closing[:indent].strip() == "" else closing.lstrip())
        else:
            problems.append(f"{doc}:{start}: the fenced block is never closed")
        block_text = "\n".join(body) + "\n"
        block, trouble = _make_block(doc, start, lang, block_text, pending)
        pending = None
        blocks.append(block)
        problems.extend(trouble)
    if pending is not None:
        problems.append(f"{doc}:{pending[0]}: marker not directly before a fenced block")
    return blocks, problems


def _make_block(
    doc: str, line: int, lang: str, text: str, marker: tuple[int, str, str] | None
) -> tuple[Block, list[str]]:
    where = f"{doc}:{line}"
    problems: list[str] = []
    if not lang:
        problems.append(
            f"{where}: the block has no language; use text for output, trees and synopses, "
            "or the language it is written in"
        )
    elif lang not in EXECUTABLE and lang not in DATA:
        problems.append(
            f"{where}: unknown block language {lang!r}: add it to EXECUTABLE or DATA in "
            "tests/docs/blocks.py"
        )
    if marker is None:
        return Block(doc, line, lang, text), problems
    _, kind, body = marker
    if kind == "illustrative":
        if not body:
            problems.append(f"{where}: an illustrative block needs a reason")
        if lang not in EXECUTABLE:
            problems.append(f"{where}: only executable blocks are marked illustrative")
        return Block(doc, line, lang, text, illustrative=body or "?"), problems
    options: dict[str, str] = {}
    for word in body.split():
        key, sep, value = word.partition("=")
        if not sep or key not in OPTIONS or not value:
            problems.append(
                f"{where}: doc-test option {word!r} is not one of project=, file=, exit="
            )
            continue
        options[key] = value
    if "project" not in options:
        problems.append(f"{where}: doc-test needs project=NAME")
    elif not _NAME.match(options["project"]):
        problems.append(f"{where}: project name {options['project']!r} is not a plain name")
    if "file" in options:
        path = Path(options["file"])
        if path.is_absolute() or ".." in path.parts:
            problems.append(f"{where}: file= must be a relative path inside the project")
    elif EXECUTABLE.get(lang) not in ("shell", "python", "toml"):
        problems.append(f"{where}: a {lang or 'plain'} block joins a project only with file=PATH")
    if "exit" in options and (EXECUTABLE.get(lang) != "shell" or not options["exit"].isdigit()):
        problems.append(f"{where}: exit=N applies to shell blocks and needs a number")
    return Block(doc, line, lang, text, options=options), problems


def groups(blocks: list[Block]) -> list[Group]:
    """Runs: one per doc-test project, one per unmarked executable block; illustrative and
    unmarked data blocks run nowhere."""
    found: list[Group] = []
    projects: dict[tuple[str, str], Group] = {}
    for block in blocks:
        if block.illustrative is not None:
            continue
        project = block.options.get("project")
        if project is not None:
            key = (block.doc, project)
            if key not in projects:
                projects[key] = Group(block.doc, project, [])
                found.append(projects[key])
            projects[key].blocks.append(block)
        elif block.kind != "data":
            found.append(Group(block.doc, None, [block]))
    return found


def shell_commands(block: Block) -> list[str]:
    """The commands of a shell block: continuation lines joined, comments and blank lines
    dropped; in a ``console`` block only the ``$ `` lines are commands (the rest is output)."""
    commands: list[str] = []
    current = ""
    for raw in block.text.splitlines():
        line = raw.rstrip()
        if block.lang == "console":  # "$ " starts a command, "> " continues it
            if not current and not line.startswith("$ "):
                continue
            if line.startswith(("$ ", "> ")):
                line = line[2:]
        if not current and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            current += line[:-1].strip() + " "
            continue
        commands.append(current + line.strip())
        current = ""
    if current.strip():
        commands.append(current.strip())
    return commands
