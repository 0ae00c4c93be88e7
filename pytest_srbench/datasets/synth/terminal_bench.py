"""terminal-bench-2.1 rows: shell tasks on generated files; the last reference command does the work."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_srbench.datasets.synth.common import Rng, Row, made_up_word, native_id, surname

_STEMS = ("data", "records", "inventory", "visits", "samples", "orders", "readings", "entries")
_OUTPUTS = ("report.txt", "count.txt", "result.txt", "answer.txt", "out.txt")


def _file_text(*lines: str) -> str:
    """A task file's text: ``lines``, each ended by a newline."""
    return "".join(line + "\n" for line in lines)


def _expect_lines(path: str, lines: Sequence[str]) -> str:
    """A verifier: ``path`` exists and holds exactly ``lines``."""
    quoted = " ".join(f"'{line}'" for line in lines)
    return f'test -f {path} && test "$(cat {path})" = "$(printf \'%s\\n\' {quoted})"'


def _expect_value(path: str, value: str) -> str:
    """A verifier: ``path`` exists and holds ``value`` (blanks and newlines ignored)."""
    return f'test -f {path} && test "$(tr -d " \\n" < {path})" = "{value}"'


def _tb_count(r: Rng) -> Row:
    name, out = f"{r.choice(_STEMS)}.csv", r.choice(_OUTPUTS)
    rows = [f"{surname(r)},{r.randint(1, 999)}" for _ in range(r.randint(3, 40))]
    return {
        "category": "file-operations",
        "files": {name: _file_text("name,value", *rows)},
        "instruction": f"The task directory holds {name} (a header line, then one record per line). Write the "
        f"number of records (not counting the header) to a new file {out}, as its only line.",
        "reference_commands": [
            f"head -n 3 {name}",
            f"tail -n +2 {name} | wc -l | tr -d ' ' > {out}",
        ],
        "verifier": _expect_value(out, str(len(rows))),
    }


def _tb_sum(r: Rng) -> Row:
    name, out = f"{r.choice(_STEMS)}.csv", r.choice(("total.txt", "sum.txt", *_OUTPUTS))
    column, field = r.choice((("quantity", 2), ("price", 3)))
    rows = [
        (made_up_word(r, 2), r.randint(1, 99), r.randint(1, 500)) for _ in range(r.randint(3, 30))
    ]
    total = sum(quantity if field == 2 else price for _, quantity, price in rows)
    return {
        "category": "data-processing",
        "files": {name: _file_text("item,quantity,price", *(f"{a},{b},{c}" for a, b, c in rows))},
        "instruction": f"{name} in the task directory has the columns item, quantity and price (with a header "
        f"line). Write the sum of the {column} column, as a plain integer, to a new file {out}.",
        "reference_commands": [
            f"head -n 3 {name}",
            f"awk -F, 'NR > 1 {{ s += ${field} }} END {{ print s }}' {name} > {out}",
        ],
        "verifier": _expect_value(out, str(total)),
    }


def _tb_filter(r: Rng) -> Row | None:
    log, out = (
        r.choice(("app.log", "server.log", "events.log", "system.log")),
        r.choice(("errors.txt", "selected.txt", "matches.txt")),
    )
    level = r.choice(("INFO", "WARN", "ERROR"))
    lines = []
    for _ in range(r.randint(6, 20)):
        clock = f"{r.randint(0, 23):02d}:{r.randint(0, 59):02d}:{r.randint(0, 59):02d}"
        words = " ".join(made_up_word(r, r.randint(1, 3)) for _ in range(r.randint(2, 5)))
        lines.append(f"{clock} {r.choice(('INFO', 'WARN', 'ERROR'))} {words}")
    chosen = [line for line in lines if line.split()[1] == level]
    if not chosen:
        return None
    return {
        "category": "text-processing",
        "files": {log: _file_text(*lines)},
        "instruction": f"{log} in the task directory holds one event per line (time, level, message). Copy every "
        f"line whose level is {level} into a new file {out}, unchanged and in their original order.",
        "reference_commands": [f"grep -c ' {level} ' {log}", f"grep ' {level} ' {log} > {out}"],
        "verifier": _expect_lines(out, chosen),
    }


def _tb_unique(r: Rng) -> Row:
    source, out = (
        r.choice(("words.txt", "names.txt", "tags.txt")),
        r.choice(("unique.txt", "sorted.txt", "distinct.txt")),
    )
    pool = [made_up_word(r, r.randint(1, 3)) for _ in range(r.randint(3, 10))]
    words = [r.choice(pool) for _ in range(r.randint(8, 25))]
    return {
        "category": "text-processing",
        "files": {source: _file_text(*words)},
        "instruction": f"{source} in the task directory holds one lowercase word per line, with repeats. Write each "
        f"distinct word once, sorted alphabetically, one per line, to a new file {out}.",
        "reference_commands": [f"wc -l {source}", f"sort -u {source} > {out}"],
        "verifier": _expect_lines(out, sorted(set(words))),
    }


def _tb_archive(r: Rng) -> Row | None:
    folder = r.choice(("archive", "old_logs", "logs", "backup"))
    names = list(dict.fromkeys(made_up_word(r, 2) for _ in range(8)))
    if len(names) < 4:
        return None
    logs, keep = names[: len(names) // 2], names[len(names) // 2 :]
    files = {f"{name}.log": f"log of {name}\n" for name in logs} | {
        f"{name}.txt": f"notes on {name}\n" for name in keep
    }
    checks = [f"test -d {folder}"] + [
        f"test -f {folder}/{n}.log && test ! -e {n}.log" for n in logs
    ]
    checks += [f"test -f {n}.txt" for n in keep]
    return {
        "category": "file-operations",
        "files": files,
        "instruction": f"Move every .log file in the task directory into a new subdirectory named {folder}, and "
        "leave all other files where they are.",
        "reference_commands": ["ls", f"mkdir -p {folder} && mv *.log {folder}/"],
        "verifier": " && ".join(checks),
    }


def _tb_top(r: Rng) -> Row:
    source, out = (
        r.choice(("scores.csv", "results.csv", "points.csv")),
        r.choice(("top.txt", "winner.txt", "best.txt")),
    )
    names = list(dict.fromkeys(surname(r) for _ in range(r.randint(4, 15))))
    scores = r.sample(range(1, 1000), len(names))
    best = names[scores.index(max(scores))]
    return {
        "category": "data-processing",
        "files": {
            source: _file_text(
                "name,score", *(f"{n},{s}" for n, s in zip(names, scores, strict=True))
            )
        },
        "instruction": f"{source} in the task directory lists names and integer scores (with a header line). Write "
        f"the name with the highest score to a new file {out}, as its only line.",
        "reference_commands": [
            f"head -n 3 {source}",
            f"tail -n +2 {source} | sort -t, -k2 -n | tail -n 1 | cut -d, -f1 > {out}",
        ],
        "verifier": _expect_value(out, best),
    }


TERMINAL_FAMILIES: tuple[Callable[[Rng], Row | None], ...] = (
    _tb_count,
    _tb_sum,
    _tb_filter,
    _tb_unique,
    _tb_archive,
    _tb_top,
)


def terminal_bench_row(rng: Rng, index: int) -> Row | None:
    """Row ``index``: a task of the index's family (the families take turns); None when the
    family gave up."""
    row = TERMINAL_FAMILIES[index % len(TERMINAL_FAMILIES)](rng)
    if row is None:
        return None
    return {**row, "max_steps": 10, "task_id": native_id(index)}
