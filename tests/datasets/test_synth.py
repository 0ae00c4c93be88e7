"""``srbench datasets synth``: synthetic suites for the quick and standard profiles.

Determinism, counts, the loader's sha256 check, rendering through every adapter, independent
checks of the generated answers, and one end-to-end quick run on the simulator in which an
always-right target must score every case and an always-wrong one none."""

from __future__ import annotations

import collections
import contextlib
import copy
import datetime
import io
import json
import math
import re
import subprocess
from pathlib import Path

import pytest

from pytest_srbench.app.config import SrbenchConfig
from pytest_srbench.app.planning import build_draft
from pytest_srbench.app.run_options import RunOptions
from pytest_srbench.benchmarks.registry import default_registry
from pytest_srbench.benchmarks.tau_library import LibraryState
from pytest_srbench.cli.datasets import main
from pytest_srbench.core.grading.code import (
    assertion_program,
    functional_passed,
    functional_program,
    outputs_match,
)
from pytest_srbench.core.plan.srbench import PROFILE_COUNTS
from pytest_srbench.datasets.suites import discover_suites, load_suite
from pytest_srbench.datasets.synth import (
    SYNTH_BENCHMARKS,
    SynthError,
    run_stdin_solution,
    synth_count,
    synth_files,
    write_synthetic_suites,
)
from pytest_srbench.simulator.play import registration_key

SEED = 20260918
QUICK_TOTAL = sum(counts["quick"] for counts in PROFILE_COUNTS.values())


@pytest.fixture(scope="module")
def standard_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """All nine synthetic suites sized for the standard profile (quick + standard rows)."""
    root = tmp_path_factory.mktemp("synth") / "suites"
    write_synthetic_suites(root, profile="standard", seed=SEED)
    return root


def rows_of(root: Path, benchmark: str) -> list[dict]:
    return [row for _, row in load_suite(root / benchmark).rows]


# ------------------------------------------------------------------ format, counts, determinism


def test_same_seed_gives_byte_identical_files_and_another_seed_other_items(tmp_path):
    first = write_synthetic_suites(tmp_path / "a", profile="quick", seed=SEED)
    write_synthetic_suites(tmp_path / "b", profile="quick", seed=SEED)
    assert [s.benchmark for s in first] == list(SYNTH_BENCHMARKS)
    for benchmark in SYNTH_BENCHMARKS:
        for name in ("cases.jsonl", "suite.json"):
            a = (tmp_path / "a" / benchmark / name).read_bytes()
            assert a == (tmp_path / "b" / benchmark / name).read_bytes(), (benchmark, name)
        other = synth_files(benchmark, "quick", seed=SEED + 1)
        assert other["cases.jsonl"] != (tmp_path / "a" / benchmark / "cases.jsonl").read_bytes()


@pytest.mark.parametrize("profile", ["quick", "standard"])
def test_counts_per_benchmark(profile):
    for benchmark, counts in PROFILE_COUNTS.items():
        expected = counts["quick"] + (counts["standard"] if profile == "standard" else 0)
        assert synth_count(benchmark, profile) == expected
    assert sum(synth_count(b, "quick") for b in SYNTH_BENCHMARKS) == QUICK_TOTAL == 740


def test_suites_load_with_the_real_loader_and_say_they_are_synthetic(standard_root):
    for benchmark in SYNTH_BENCHMARKS:
        suite = load_suite(standard_root / benchmark)  # verifies the sha256 of cases.jsonl
        meta = suite.meta
        assert len(suite.rows) == meta["count"] == synth_count(benchmark, "standard")
        assert meta["benchmark"] == benchmark and meta["version"] == "1"
        assert meta["revision"] == f"synthetic-{SEED}" and meta["license"] == "Apache-2.0"
        assert (
            "procedurally generated" in meta["source"] and f"not {benchmark} data" in meta["source"]
        )
        assert meta["synthetic"] == {
            "generator": "pytest-srbench-synth-v1",
            "profile": "standard",
            "seed": SEED,
        }
    # a tampered file is refused by the loader
    cases = standard_root / "hle" / "cases.jsonl"
    original = cases.read_bytes()
    try:
        cases.write_bytes(original.replace(b'"answer":"', b'"answer":"9', 1))
        with pytest.raises(ValueError, match="sha256 mismatch"):
            load_suite(standard_root / "hle")
    finally:
        cases.write_bytes(original)


def test_quick_rows_are_the_first_rows_of_standard(standard_root, tmp_path):
    write_synthetic_suites(
        tmp_path, profile="quick", seed=SEED, benchmarks=["gpqa-diamond", "tau3"]
    )
    for benchmark in ("gpqa-diamond", "tau3"):
        quick = (tmp_path / benchmark / "cases.jsonl").read_bytes().splitlines()
        standard = (standard_root / benchmark / "cases.jsonl").read_bytes().splitlines()
        assert quick == standard[: len(quick)]


def test_every_row_renders_through_its_adapter_with_unique_ids_and_simulator_keys(standard_root):
    registry = default_registry(with_entry_points=False)
    keys: dict[str, str] = {}
    for benchmark in SYNTH_BENCHMARKS:
        adapter = registry.get(benchmark)
        ids = set()
        for row in rows_of(standard_root, benchmark):
            case = adapter.render(row, SEED)
            assert case.id not in ids
            ids.add(case.id)
            for first, script in adapter.simulator_scripts(case):
                key = registration_key(first)
                assert key not in keys, f"{case.id} shares a simulator prompt with {keys.get(key)}"
                keys[key] = case.id
                assert script is not None
        assert len(ids) == synth_count(benchmark, "standard")


def test_the_planner_selects_quick_and_standard_from_the_synthetic_suites(standard_root):
    config = SrbenchConfig(suites=[standard_root.name])
    registry = default_registry(with_entry_points=False)
    found = discover_suites([standard_root], "standard")
    assert set(found) == set(SYNTH_BENCHMARKS)
    seen = {}
    for profile in ("quick", "standard"):
        draft = build_draft(config, RunOptions(profile=profile), registry, standard_root.parent)
        counts = collections.Counter(case.benchmark for case in draft.cases)
        assert counts == {b: PROFILE_COUNTS[b][profile] for b in SYNTH_BENCHMARKS}
        assert all(s["location"] == "project" for s in draft.dataset.suites)
        seen[profile] = {case.id for case in draft.cases}
    assert not seen["quick"] & seen["standard"]


# ------------------------------------------------------------------ the stated answers are right

ROMAN = {"M": 1000, "D": 500, "C": 100, "L": 50, "X": 10, "V": 5, "I": 1}
WEEKDAYS = ["Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"]


def from_roman(text: str) -> int:
    total = 0
    for here, after in zip(text, [*text[1:], None], strict=True):
        value = ROMAN[here]
        total += -value if after is not None and ROMAN[after] > value else value
    return total


def atoms(formula: str) -> int:
    return sum(int(n or 1) for _, n in re.findall(r"([A-Z])(\d*)", formula))


def truth_count(formula: str) -> int:
    expression = re.sub(r"not ([PQR])", r"(not \1)", formula)
    expression = expression.replace(" if and only if ", " == ").replace(" implies ", " <= ")
    return sum(
        bool(eval(expression, {}, {"P": p, "Q": q, "R": r}))
        for p in (True, False)
        for q in (True, False)
        for r in (True, False)
    )


def digits(text: str) -> int:
    return int(re.sub(r"\D", "", text))


def check_numeric(question: str, answer: str) -> bool | None:
    """True / False for a question whose answer this test can recompute, None otherwise."""
    rules = [
        (r"What is (\d+) × (\d+)\?", lambda a, b: int(a) * int(b)),
        (r"What is (\d+) \+ (\d+)\?", lambda a, b: int(a) + int(b)),
        (r"remainder when (\d+) is divided by (\d+)\?", lambda a, b: int(a) % int(b)),
        (
            r"remainder when (\d+)\^(\d+) is divided by (\d+)\?",
            lambda a, b, m: pow(int(a), int(b), int(m)),
        ),
        (r"Solve for x: (\d+)x \+ (\d+) = (\d+)\.", lambda a, b, c: (int(c) - int(b)) // int(a)),
        (r"binary number ([01]+)\?", lambda b: int(b, 2)),
        (r"hexadecimal number ([0-9A-F]+)\?", lambda h: int(h, 16)),
        (r"Roman numerals as ([MDCLXVI]+)\?", from_roman),
        (r"year (\d+) CE fall\?", lambda y: math.ceil(int(y) / 100)),
        (r"one molecule of ([A-Z0-9]+)\?", atoms),
        (r"formula '(.+)' true\?", truth_count),
        (r"sum of the integers from 1 to (\d+)\?", lambda n: sum(range(int(n) + 1))),
        (r"square root of (\d+)\?", lambda n: math.isqrt(int(n))),
        (r"made-up word '(\w+)' have\?", len),
        (
            r"vowels \(a, e, i, o, u\) does the made-up word '(\w+)' contain\?",
            lambda w: sum(c in "aeiou" for c in w),
        ),
        (r"days are there in (\d+) weeks\?", lambda n: 7 * int(n)),
        (r"grams are there in (\d+) kilograms\?", lambda n: 1000 * int(n)),
        (r"minutes are there in (\d+) hours\?", lambda n: 60 * int(n)),
        (r"centimetres are there in (\d+) metres\?", lambda n: 100 * int(n)),
        (r"diagonals does a convex polygon with (\d+) sides", lambda n: int(n) * (int(n) - 3) // 2),
        (r"angles add up to (\d+) degrees", lambda s: int(s) // 180 + 2),
        (r"a (\d+) cm by (\d+) cm rectangle", lambda a, b: int(a) * int(b)),
        (
            r"positive divisors does (\d+) have\?",
            lambda n: sum(int(n) % d == 0 for d in range(1, int(n) + 1)),
        ),
        (r"trailing zeros does (\d+)!", lambda n: sum(_fives(k) for k in range(1, int(n) + 1))),
        (r"from \(0, 0\) to \((\d+), (\d+)\)", lambda a, b: math.comb(int(a) + int(b), int(a))),
        (r"decimal digits of 2\^(\d+)\?", lambda n: sum(map(int, str(2 ** int(n))))),
        (r"complete graph on (\d+) labelled", lambda n: int(n) ** (int(n) - 2)),
        (r"parts of (\d+) and (\d+), with an edge", lambda a, b: int(a) * int(b)),
        (
            r"bit strings ([01]+) and ([01]+)\?",
            lambda x, y: sum(a != b for a, b in zip(x, y, strict=True)),
        ),
        (r"The (\d+)(?:st|nd|rd|th) prime number", lambda k: _nth_prime(int(k))),
        (r"length (\d+) contain no two adjacent 1s", lambda n: _no_adjacent_ones(int(n))),
        (r"rearranging all the letters of the string '(\w+)'", _arrangements),
        (r"at (\d+) m/s\^2\. What is its speed after (\d+) s\?", lambda a, t: int(a) * int(t)),
        (
            r"at (\d+) m/s\^2\. How far does it travel in the first (\d+) s\?",
            lambda a, t: int(a) * int(t) ** 2 // 2,
        ),
        (
            r"resistor of (\d+) ohms carries a steady current of (\d+) A\. What is the voltage",
            lambda r, i: int(r) * int(i),
        ),
        (
            r"resistor of (\d+) ohms carries a steady current of (\d+) A\. What power",
            lambda r, i: int(r) * int(i) ** 2,
        ),
        (r"metres are there in (\d+\.\d) kilometres\?", lambda km: round(float(km) * 1000)),
        (r"dosed at (\d+) mg per kg .* weighing (\d+) kg", lambda d, w: int(d) * int(w)),
        (
            r"beats (\d+) times per minute\. How many times does it beat in (\d+) hours",
            lambda b, h: int(b) * 60 * int(h),
        ),
        (
            r"H = 1, C = 12, N = 14 and O = 16 g/mol, what is the molar mass of ([A-Z0-9]+)\?",
            _molar_mass,
        ),
        (
            r"penalty of \$(\d+) per day .* capped at \$([\d,]+) in total\. Delivery was (\d+) days",
            lambda p, c, d: min(int(p) * int(d), digits(c)),
        ),
        (
            r"seconds are there in (\d+) hours and (\d+) minutes",
            lambda h, m: 3600 * int(h) + 60 * int(m),
        ),
    ]
    for pattern, compute in rules:
        match = re.search(pattern, question, flags=re.IGNORECASE)
        if match and compute is not None:
            return digits(answer) == compute(*match.groups())
    week = re.search(r"Which day of the week is (\d+) days after a (\w+)\?", question)
    if week:
        return answer == WEEKDAYS[(WEEKDAYS.index(week.group(2)) + int(week.group(1))) % 7]
    backwards = re.search(r"made-up word '(\w+)' spelled backwards", question)
    if backwards:
        return answer == "".join(reversed(backwards.group(1)))
    day = re.search(r"day number of (\d+) (\w+) \(", question)
    if day:
        date = datetime.datetime.strptime(f"{day.group(1)} {day.group(2)} 2027", "%d %B %Y").date()
        return int(answer) == (date - datetime.date(2027, 1, 1)).days + 1
    return None


def _molar_mass(formula: str) -> int:
    masses = {"H": 1, "C": 12, "N": 14, "O": 16}
    return sum(masses[e] * int(n or 1) for e, n in re.findall(r"([A-Z])(\d*)", formula))


def _fives(k: int) -> int:
    count = 0
    while k % 5 == 0:
        k //= 5
        count += 1
    return count


def _nth_prime(k: int) -> int:
    found, candidate = 0, 1
    while found < k:
        candidate += 1
        if all(candidate % d for d in range(2, math.isqrt(candidate) + 1)):
            found += 1
    return candidate


def _no_adjacent_ones(n: int) -> int:
    table = {0: 1, 1: 2}
    for length in range(2, n + 1):
        table[length] = table[length - 1] + table[length - 2]  # ends in 0, or ends in 01
    return table[n]


def _arrangements(word: str) -> int:
    total = math.factorial(len(word))
    for count in collections.Counter(word).values():
        total //= math.factorial(count)
    return total


def test_multiple_choice_items_have_one_right_distinct_option(standard_root):
    checked = collections.Counter()
    for row in rows_of(standard_root, "mmlu-pro"):
        options = row["options"]
        assert len(options) == 10 == len(set(options))
        assert row["answer"] == "ABCDEFGHIJ"[row["answer_index"]]
        verdict = check_numeric(row["question"], options[row["answer_index"]])
        if verdict is not None:
            assert verdict, row
            checked[row["category"]] += 1
    assert sum(checked.values()) > 1000 and len(checked) >= 9
    for row in rows_of(standard_root, "gpqa-diamond"):
        options = [row["correct_answer"], *row["incorrect_answers"]]
        assert len(set(options)) == 4 and row["domain"] in {"Physics", "Chemistry", "Biology"}
    letters = collections.Counter(row["answer"] for row in rows_of(standard_root, "mmlu-pro"))
    assert len(letters) == 10 and min(letters.values()) > 150  # the right letter is spread out


def test_short_answers_are_right(standard_root):
    checked = 0
    for benchmark, field in (("simpleqa-verified", "problem"), ("hle", "question")):
        for row in rows_of(standard_root, benchmark):
            verdict = check_numeric(row[field], row["answer"])
            if verdict is not None:
                assert verdict, row
                checked += 1
    assert checked > 700


def _arc_rules(train_in, train_out):
    """Every catalogue rule (geometric, roll, gravity, colour map) consistent with one pair."""
    geometric = {
        "flip-lr": lambda g: [r[::-1] for r in g],
        "flip-ud": lambda g: g[::-1],
        "transpose": lambda g: [list(r) for r in zip(*g, strict=True)],
        "rotate": lambda g: [list(r) for r in zip(*g[::-1], strict=True)],
        "half-turn": lambda g: [r[::-1] for r in g[::-1]],
        "shift-1": lambda g: [r[-1:] + r[:-1] for r in g],
        "shift-2": lambda g: [r[-2:] + r[:-2] for r in g],
        "gravity": lambda g: [list(r) for r in zip(*[
            [0] * col.count(0) + [c for c in col if c] for col in map(list, zip(*g, strict=True))
        ], strict=True)],
    }  # fmt: skip
    return {name for name, rule in geometric.items() if rule(train_in) == train_out}


def test_arc_outputs_follow_one_rule_shared_with_the_training_pairs(standard_root):
    for row in rows_of(standard_root, "arc-agi-2"):
        pairs = row["train"] + row["test"]
        common = set.intersection(*(_arc_rules(p["input"], p["output"]) for p in pairs))
        if common:
            continue
        mapping = {}  # otherwise a consistent cell-wise colour map
        for pair in pairs:
            assert len(pair["input"]) == len(pair["output"])
            for a_row, b_row in zip(pair["input"], pair["output"], strict=True):
                for a, b in zip(a_row, b_row, strict=True):
                    assert mapping.setdefault(a, b) == b, row["id"]
        assert any(a != b for a, b in mapping.items()), row["id"]


def test_code_references_pass_and_wrong_solutions_fail_as_the_grader_judges(standard_root):
    def passes(row: dict, code: str) -> bool:
        for test in row["tests"]:
            if test["testtype"] == "functional":
                program = functional_program(code, row["func_name"], test["input"], test["output"])
                out = io.StringIO()
                try:
                    with contextlib.redirect_stdout(out):
                        exec(program, {"__name__": "__main__"})
                except Exception:
                    return False
                if not functional_passed(out.getvalue()):
                    return False
            else:
                try:
                    stdout = run_stdin_solution(code, test["input"])
                except Exception:
                    return False
                if not outputs_match(stdout, test["output"]):
                    return False
        return True

    rows = rows_of(standard_root, "livecodebench")
    for row in rows:
        assert passes(row, row["reference_solution"]), row["question_id"]
        assert not passes(row, row["wrong_solution"]), row["question_id"]
    assert {row["difficulty"] for row in rows} == {"easy", "medium", "hard"}
    assert any(row.get("func_name") for row in rows) and any(
        not row.get("func_name") for row in rows
    )


def test_scicode_reference_steps_pass_and_the_simulated_wrong_last_step_fails(standard_root):
    def runs(code: str) -> bool:
        try:
            exec(code, {"__name__": "__main__"})
        except Exception:
            return False
        return True

    for row in rows_of(standard_root, "scicode"):
        steps, written = row["sub_steps"], []
        for step, code in zip(steps, row["reference_steps"], strict=True):
            written.append(code)
            program = assertion_program(
                row["required_dependencies"] + "\n\n" + "\n\n".join(written), step["tests"]
            )
            assert runs(program), (row["problem_id"], step["step_number"])
            assert code.startswith(step["function_header"])
        broken = [*written[:-1], written[-1].replace("return ", "return None and ", 1)]
        program = assertion_program(
            row["required_dependencies"] + "\n\n" + "\n\n".join(broken), steps[-1]["tests"]
        )
        assert not runs(program), row["problem_id"]


def test_terminal_reference_commands_satisfy_the_verifier_and_dropping_the_last_does_not(
    standard_root, tmp_path
):
    def solved(row: dict, commands: list[str], where: Path) -> bool:
        where.mkdir()
        for name, text in row["files"].items():
            (where / name).write_text(text)
        for command in commands:
            subprocess.run(["/bin/sh", "-c", command], cwd=where, capture_output=True, timeout=20)
        verdict = subprocess.run(["/bin/sh", "-c", row["verifier"]], cwd=where, timeout=20)
        return verdict.returncode == 0

    rows = rows_of(standard_root, "terminal-bench-2.1")
    for index, row in enumerate(rows):
        commands = row["reference_commands"]
        assert solved(row, commands, tmp_path / f"right-{index}"), row["task_id"]
        assert not solved(row, commands[:-1], tmp_path / f"wrong-{index}"), row["task_id"]
    assert len({row["category"] for row in rows}) == 3


def test_tau_plans_reach_the_expected_database_and_the_wrong_plan_does_not(standard_root):
    def final(db: dict, calls: list[dict]) -> dict:
        state = LibraryState(copy.deepcopy(db))
        for call in calls:
            ok, text = state.call(call["name"], dict(call["arguments"]))
            assert ok, text
        return state.snapshot()

    kinds = set()
    for row in rows_of(standard_root, "tau3"):
        plan = row["reference_dialogue"]["agent"]
        user = row["reference_dialogue"]["user"]
        expected = final(row["initial_db"], row["expected_actions"])
        calls = [call for step in plan for call in step.get("tool_calls", [])]
        assert final(row["initial_db"], calls) == expected
        last = max(i for i, step in enumerate(plan) if step.get("tool_calls"))
        wrong = [
            call for step in plan[:last] + plan[last + 1 :] for call in step.get("tool_calls", [])
        ]
        assert final(row["initial_db"], wrong) != expected
        said = " ".join(step.get("say", "") for step in plan).lower()
        assert all(text.lower() in said for text in row["required_outputs"])
        assert user[-1] == "###STOP###" and len(user) == sum("say" in step for step in plan) + 1
        assert row["domain"] == "library" and row["policy"]
        kinds.add(tuple(action["name"] for action in row["expected_actions"]))
    assert len(kinds) >= 5


# ------------------------------------------------------------------ the command line


def test_cli_writes_refuses_to_overwrite_and_forces(tmp_path, capsys):
    out = tmp_path / "suites"
    args = ["datasets", "synth", "--profile", "quick", "--out", str(out)]
    assert main([*args, "--benchmark", "tau3", "--benchmark", "scicode", "--seed", "5"]) == 0
    printed = capsys.readouterr().out
    assert "wrote 2 synthetic suite(s) for the quick profile (generator seed 5)" in printed
    assert "not the benchmarks" in printed
    assert sorted(p.name for p in out.iterdir()) == ["scicode", "tau3"]
    before = (out / "tau3" / "cases.jsonl").read_bytes()
    assert main([*args, "--benchmark", "tau3", "--benchmark", "hle"]) == 2
    error = capsys.readouterr().err
    assert "refusing to overwrite existing suite folder(s) tau3" in error and "--force" in error
    assert not (out / "hle").exists()  # nothing is written when a folder is refused
    assert (out / "tau3" / "cases.jsonl").read_bytes() == before
    assert main([*args, "--benchmark", "tau3", "--force"]) == 0
    assert json.loads((out / "tau3" / "suite.json").read_text())["revision"] == f"synthetic-{SEED}"
    assert (out / "tau3" / "cases.jsonl").read_bytes() != before
    assert not (out / ".staging").exists()
    with pytest.raises(SynthError, match="unknown profile"):
        write_synthetic_suites(out, profile="smoke")
    with pytest.raises(SystemExit):
        main([*args, "--benchmark", "mmlu"])


# ------------------------------------------------------------------ end to end on the simulator

SIM_CONFIG = """
default_targets = ["synth-oracle", "synth-contrarian"]

[[targets]]
id = "synth-oracle"
model = "synth-oracle"
simulated = true
[targets.prices.synth-oracle]
input = 1.0
cached_input = 0.5
cache_write = 1.0
output = 2.0

[[targets]]
id = "synth-contrarian"
model = "synth-contrarian"
simulated = true
[targets.prices.synth-contrarian]
input = 0.5
cached_input = 0.25
cache_write = 0.5
output = 1.0

[simulator.models.synth-oracle]
accuracy = 1.0
latency_s = 0
[simulator.models.synth-oracle.prices]
input = 1.0
cached_input = 0.5
cache_write = 1.0
output = 2.0

[simulator.models.synth-contrarian]
accuracy = 0.0
latency_s = 0
[simulator.models.synth-contrarian.prices]
input = 0.5
cached_input = 0.25
cache_write = 0.5
output = 1.0
"""


@pytest.mark.slow
def test_quick_profile_runs_end_to_end_on_synthetic_suites(pytester):
    """Every item is consistent with its grader: the always-right simulated target gets all 740
    cases right, the always-wrong one none, in all nine benchmarks, with no failed cell."""
    pytester.makefile(".toml", srbench=SIM_CONFIG)
    assert (
        main(["datasets", "synth", "--profile", "quick", "--out", str(pytester.path / "suites")])
        == 0
    )
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "--srbench-profile=quick", "--srbench-concurrency", "64",
        "--srbench-json=report.json",
    )  # fmt: skip
    assert result.ret == 0, result.stdout.str()[-3000:]
    report = json.loads((pytester.path / "report.json").read_text())
    assert report["status"] == "completed"
    assert {row["benchmark"] for row in report["benchmarks"]} == set(SYNTH_BENCHMARKS)
    targets = {t["id"]: t for t in report["summary"]["targets"]}
    for metric in targets.values():
        assert metric["total"] == QUICK_TOTAL and metric["failed"] == 0 and metric["complete"]
    oracle, contrarian = targets["synth-oracle"], targets["synth-contrarian"]
    assert oracle["correct"] == QUICK_TOTAL and oracle["macro_accuracy"] == 1.0
    assert contrarian["correct"] == 0 and contrarian["macro_accuracy"] == 0.0
    assert oracle["macro_accuracy"] > contrarian["macro_accuracy"]
    for row in report["benchmarks"]:
        assert row["failed"] == 0 and row["total"] == PROFILE_COUNTS[row["benchmark"]]["quick"]
    suites = {s["benchmark"]: s for s in report["provenance"]["dataset"]["suites"]}
    assert all(
        s["location"] == "project" and s["revision"] == f"synthetic-{SEED}" for s in suites.values()
    )
