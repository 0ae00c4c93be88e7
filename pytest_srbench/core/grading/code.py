"""Code answers: extracting ```python blocks and building the test programs a sandbox runs.

Everything here is text; running happens in the sandbox (``pytest_srbench.sandbox``)."""

from __future__ import annotations

import json
import re

_BLOCK = re.compile(r"```(?:python|py|python3)[^\n]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
RESULT_MARKER = "SRBENCH-RESULT:"


def extract_python(text: str) -> str | None:
    """All python-tagged fenced blocks joined, or None when there is none."""
    blocks = [block.strip("\n") for block in _BLOCK.findall(text)]
    blocks = [block for block in blocks if block.strip()]
    return "\n\n".join(blocks) if blocks else None


def answer_code(text: str) -> str | None:
    """The code of an answer a test body returned: its python blocks as ``extract_python``
    takes them from a reply, else the text itself when it is plain Python source (it
    compiles); None when it is neither (prose without a code block)."""
    code = extract_python(text)
    if code is not None or not text.strip():
        return code
    try:
        compile(text, "<answer>", "exec", dont_inherit=True)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return text


def normalise_output(text: str) -> list[str]:
    """Output lines with trailing whitespace removed and trailing blank lines dropped."""
    lines = [line.rstrip() for line in text.replace("\r\n", "\n").split("\n")]
    while lines and not lines[-1]:
        lines.pop()
    return lines


def outputs_match(actual: str, expected: str) -> bool:
    """Stdin/stdout comparison: lines equal after trimming, or equal as numbers when both parse."""
    got, want = normalise_output(actual), normalise_output(expected)
    if got == want:
        return True
    if len(got) != len(want):
        return False
    for left, right in zip(got, want, strict=True):
        if left.strip() == right.strip():
            continue
        left_tokens, right_tokens = left.split(), right.split()
        if len(left_tokens) != len(right_tokens):
            return False
        for a, b in zip(left_tokens, right_tokens, strict=True):
            if a == b:
                continue
            try:
                if abs(float(a) - float(b)) > 1e-6 * max(1.0, abs(float(b))):
                    return False
            except ValueError:
                return False
    return True


def functional_program(solution: str, func_name: str, arguments: str, expected: str) -> str:
    """A script that calls ``func_name`` (a function or a method of ``Solution``) with the
    JSON-lines ``arguments`` and prints a marker line with the JSON comparison result."""
    return (
        f"{solution}\n\n"
        "import json as __json\n"
        f"__args = [__json.loads(__line) for __line in {arguments!r}.splitlines() if __line.strip()]\n"
        f"__expected = __json.loads({expected!r})\n"
        f"__target = Solution().{func_name} if 'Solution' in globals() else {func_name}\n"
        "__got = __target(*__args)\n"
        "__same = __got == __expected or __json.loads(__json.dumps(__got)) == __expected\n"
        f"print({RESULT_MARKER!r} + __json.dumps(bool(__same)))\n"
    )


def functional_passed(stdout: str) -> bool:
    """Whether the functional test program reported a match."""
    for line in reversed(stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            return bool(json.loads(line[len(RESULT_MARKER) :]))
    return False


def assertion_program(code: str, tests: list[str]) -> str:
    """The cumulative code followed by test snippets (asserts); exit 0 means every test passed."""
    return code + "\n\n" + "\n\n".join(tests) + "\n"


def targets_program(
    code: str, tests: list[str], targets_file: str, step: str, reader_module: str
) -> str:
    """SciCode's test program for one step: the cumulative code, the step's targets read from
    the HDF5 file, then each test snippet with ``target`` bound to its own target."""
    lines = [
        code,
        "",
        f"from {reader_module} import read_targets as _srbench_read_targets",
        f"targets = _srbench_read_targets({targets_file!r}, {step!r}, {len(tests)})",
    ]
    for index, test in enumerate(tests):
        lines += ["", f"target = targets[{index}]", test]
    return "\n".join(lines) + "\n"


def code_prompt(question: str, starter: str | None, *, functional: bool) -> str:
    """A LiveCodeBench-style instruction asking for one python block."""
    how = (
        "Complete the given function (keep its name and signature)."
        if functional
        else "Read the input from standard input and write the answer to standard output."
    )
    starter_text = f"\n\nStarter code:\n```python\n{starter}\n```" if starter else ""
    return f"{question.strip()}{starter_text}\n\n{how} Answer with one ```python code block.\n"
