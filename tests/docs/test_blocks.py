"""The docs-test convention itself: parsing, markers, groups, commands, and the checks that
make a documented command fail."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.docs.blocks import groups, parse, shell_commands
from tests.docs.running import environment, run_shell, write_files

PAGE = textwrap.dedent(
    """\
    # A page

    <!-- illustrative: needs a key -->
    ```bash
    OPENAI_API_KEY=… pytest
    ```

    <!-- doc-test: project=demo -->
    ```toml
    [tool.srbench]
    seed = 7
    ```

    1. In a list:

       <!-- doc-test: project=demo file=notes/a.txt -->
       ```text
       hello
       ```

    <!-- doc-test: project=demo exit=3 -->
    ```console
    $ pytest --srbench-profile=smoke \\
    >   --srbench-limit 1
    output line
    $ echo done   # a comment
    ```

    ```python
    print(1)
    ```

    ```json
    {"a": 1}
    ```
    """
)


def test_blocks_markers_and_groups_are_read():
    blocks, problems = parse(PAGE, "page.md")
    assert problems == []
    assert [(b.line, b.lang) for b in blocks] == [
        (4, "bash"),
        (9, "toml"),
        (17, "text"),
        (22, "console"),
        (29, "python"),
        (33, "json"),
    ]
    assert blocks[0].illustrative == "needs a key"
    assert blocks[2].options == {"project": "demo", "file": "notes/a.txt"}
    assert blocks[2].text == "hello\n"  # the list indentation is removed
    found = groups(blocks)
    assert [g.test_id for g in found] == ["page.md:9+17+22", "page.md:29"]
    assert found[0].project == "demo" and found[1].project is None


def test_console_and_shell_commands_join_continuations_and_skip_output_and_comments():
    blocks, _ = parse(PAGE, "page.md")
    # in a console block only "$ " lines (and their continuations) are commands
    assert shell_commands(blocks[3]) == [
        "pytest --srbench-profile=smoke --srbench-limit 1",
        "echo done   # a comment",
    ]
    bash, _ = parse("```bash\n# set-up\na \\\n  b\n\nc\n```\n", "x.md")
    assert shell_commands(bash[0]) == ["a b", "c"]


@pytest.mark.parametrize(
    ("page", "message"),
    [
        ("```\nls\n```\n", "has no language"),
        ("```rust\nfn main() {}\n```\n", "unknown block language 'rust'"),
        ("<!-- illustrative: -->\n```bash\nls\n```\n", "needs a reason"),
        ("<!-- illustrative: why -->\n\n```bash\nls\n```\n", "marker not directly before"),
        ("<!-- doc-test: file=a -->\n```bash\nls\n```\n", "needs project=NAME"),
        ("<!-- doc-test: project=p colour=red -->\n```bash\nls\n```\n", "'colour=red'"),
        ("<!-- doc-test: project=p -->\n```json\n{}\n```\n", "only with file=PATH"),
        ("<!-- doc-test: project=p file=../x -->\n```json\n{}\n```\n", "inside the project"),
        ("<!-- doc-test: project=p exit=x -->\n```bash\nls\n```\n", "exit=N"),
        ("```bash\nls\n", "never closed"),
    ],
)
def test_convention_violations_are_reported_with_their_line(page, message):
    _, problems = parse(page, "bad.md")
    assert any(message in problem and problem.startswith("bad.md:") for problem in problems), (
        problems
    )


def run_page(page: str, folder: Path) -> None:
    blocks, problems = parse(page, "page.md")
    assert not problems
    (group,) = groups(blocks)
    write_files(group, folder)
    for block in group.blocks:
        if block.kind == "shell" and "file" not in block.options:
            run_shell(block, folder, environment())


def test_a_command_that_fails_or_runs_nothing_fails_the_block(tmp_path):
    run_page("```bash\ntrue\n```\n", tmp_path)
    with pytest.raises(AssertionError, match=r"page\.md:1: `exit 3` exited 3 \(documented: 0\)"):
        run_page("```bash\nexit 3\n```\n", tmp_path)
    with pytest.raises(AssertionError, match=r"page\.md:1: `echo no tests ran` ran nothing"):
        run_page("```bash\necho no tests ran\n```\n", tmp_path)
    run_page("<!-- doc-test: project=p exit=3 -->\n```bash\nexit 3\n```\n", tmp_path)


def test_project_files_are_written_before_its_commands_run(tmp_path):
    page = (
        "<!-- doc-test: project=p file=sub/a.txt -->\n```text\nhi\n```\n"
        "<!-- doc-test: project=p -->\n```bash\ngrep -qx hi sub/a.txt\n```\n"
    )
    run_page(page, tmp_path)
    assert (tmp_path / "sub" / "a.txt").read_text() == "hi\n"


def test_no_key_reaches_a_documented_command(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret")
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    env = environment()
    assert "OPENAI_API_KEY" not in env and "PYTEST_XDIST_WORKER" not in env
    assert env["PATH"].split(":")[0].endswith("bin")
