"""What only the SQLite store has: WAL files with private permissions, schema upgrades of old
folders, read-only and locked folders, evidence pack files (the guarantees both backends
share are tested in ``test_store.py``)."""

import json
import multiprocessing
import sqlite3
import subprocess
import sys

import pytest

from pytest_srbench.store import GroupCommitWriter, StoreError, open_store
from pytest_srbench.store.sqlite import SCHEMA_VERSION
from pytest_srbench.store.writes import AppendEvent, InsertCall
from tests.core.helpers import case, manifest, target
from tests.permissions import make_read_only, make_writable, unprivileged


@pytest.fixture
def plan():
    return manifest([case("mmlu-pro", "1"), case("mmlu-pro", "2")], [target("t")])


def test_store_is_wal_and_private(tmp_path, plan):
    store = open_store(tmp_path / "s")
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert (tmp_path / "s").stat().st_mode & 0o777 == 0o700
    assert (tmp_path / "s" / "journal.sqlite3").stat().st_mode & 0o777 == 0o600
    version = store.db.execute("SELECT value FROM meta WHERE key='schema_version'").fetchone()[0]
    assert int(version) == SCHEMA_VERSION


def test_newer_schema_is_refused(tmp_path):
    open_store(tmp_path / "s")
    db = sqlite3.connect(tmp_path / "s" / "journal.sqlite3")
    db.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    db.commit()
    with pytest.raises(StoreError, match="newer than this pytest-srbench supports"):
        open_store(tmp_path / "s")


def test_store_written_before_accounting_columns_is_migrated(tmp_path, plan):
    """An older store (no call accounting columns, no outlines) opens, gains the columns
    filled from the saved receipts, and answers recovery queries the same way."""
    store = open_store(tmp_path / "s")
    store.create_run("run-1", plan)
    with store.transaction():
        store.insert_call("run-1", {"id": "c1", "case_id": "mmlu-pro/1", "target_id": "t",
                                    "role": "subject", "status": "sent"})  # fmt: skip
        store.update_call("c1", {"id": "c1", "case_id": "mmlu-pro/1", "target_id": "t",
                                 "role": "subject", "status": "completed", "cost_usd": 0.25,
                                 "usage": {"input_tokens": 3}, "finish_reason": "stop"})  # fmt: skip
        store.insert_call("run-1", {"id": "c2", "case_id": "mmlu-pro/2", "target_id": "t",
                                    "role": "subject", "status": "sent_unknown", "cost_usd": None})  # fmt: skip
    expected = store.call_facts("run-1")
    assert expected == [("c1", "mmlu-pro/1", "t", "completed", 1, 0.25, "stop"),
                        ("c2", "mmlu-pro/2", "t", "sent_unknown", 0, None, None)]  # fmt: skip
    store.close()
    db = sqlite3.connect(tmp_path / "s" / "journal.sqlite3")
    for column in ("usage_known", "cost_usd", "finish_reason"):
        db.execute(f"ALTER TABLE calls DROP COLUMN {column}")
    db.execute("ALTER TABLE runs DROP COLUMN outline")
    db.commit()
    db.close()
    reopened = open_store(tmp_path / "s")
    assert reopened.call_facts("run-1") == expected
    assert reopened.plan_outline("run-1").cells == [("mmlu-pro/1", "t"), ("mmlu-pro/2", "t")]


def test_a_schema_1_store_keeping_plans_in_run_rows_is_read_and_upgraded(tmp_path, plan):
    """Before schema 2 a run's plan and outline were columns of its row; such a store still
    reads (plan, outline, listing, copy) once opened with write access, which upgrades it,
    and runs written afterwards keep their plan apart. Read-only, it asks for that first."""
    from pytest_srbench.store.copy import export_run
    from pytest_srbench.store.run_listing import plan_facts

    store = open_store(tmp_path / "s")
    store.create_run("run-1", plan)
    expected = export_run(store, "run-1").run
    store.close()
    db = sqlite3.connect(tmp_path / "s" / "journal.sqlite3")
    db.execute("UPDATE runs SET manifest = (SELECT CAST(manifest AS TEXT) FROM run_plans"
               " WHERE run_id = id),"
               " outline = (SELECT outline FROM run_plans WHERE run_id = id)")  # fmt: skip
    db.execute("DROP TABLE run_plans")
    db.execute("UPDATE meta SET value = '1' WHERE key = 'schema_version'")
    db.commit()
    db.close()
    with pytest.raises(StoreError, match="written by an older pytest-srbench"):
        open_store(tmp_path / "s", read_only=True)
    old = open_store(tmp_path / "s")
    version = old.db.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    assert int(version[0]) == SCHEMA_VERSION == 3
    assert old.get_manifest("run-1") == plan
    assert old.plan_outline("run-1").cells == [("mmlu-pro/1", "t"), ("mmlu-pro/2", "t")]
    assert plan_facts(old, ["run-1"])["run-1"].targets[0]["id"] == "t"
    assert export_run(old, "run-1").run == expected
    other = plan.model_copy(update={"name": "second"})
    old.create_run("run-2", other)
    kept = old.db.execute("SELECT id, length(manifest) FROM runs ORDER BY id").fetchall()
    assert [tuple(row) for row in kept] == [("run-1", len(expected["manifest"])), ("run-2", 0)]
    assert old.get_manifest("run-2") == other
    assert plan_facts(old, ["run-2"])["run-2"].name == "second"


def test_a_runs_status_and_runner_updates_do_not_rewrite_its_plan(tmp_path):
    """SQLite writes a whole row again on any update: the plan lives apart from the run's row,
    so a status or runner change writes a page or two, not the plan (WAL bytes measured)."""
    cases = [case("mmlu-pro", str(n)).model_copy(update={"metadata": {"letters": "ABCD",
             "pad": "x" * 2000}}) for n in range(1000)]  # fmt: skip
    big = manifest(cases, [target("t")])
    store = open_store(tmp_path / "s")
    store.create_run("run-1", big)
    store.db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    wal = tmp_path / "s" / "journal.sqlite3-wal"
    store.set_runner("run-1", {"pid": 1})
    store.set_run_status("run-1", "running")
    assert wal.stat().st_size < 100_000, wal.stat().st_size  # the plan is over 2 MB
    assert store.get_manifest("run-1") == big


def test_a_plan_is_written_in_pieces_into_a_reserved_last_column(tmp_path):
    """A large plan's text is never one SQLite parameter (bound by copying, then copied into
    the row): its room is a zero blob in the row's last column, written a megabyte at a time,
    and every reader gets the same text back."""
    from pytest_srbench.core.plan.build import manifest_json
    from pytest_srbench.store.copy import export_run, import_run
    from pytest_srbench.store.run_listing import plan_facts

    cases = [case("mmlu-pro", str(n)).model_copy(update={"metadata": {"letters": "ABCD",
             "pad": "é" * 1500}}) for n in range(1000)]  # fmt: skip
    big = manifest(cases, [target("t")])
    store = open_store(tmp_path / "s")
    columns = [row[1] for row in store.db.execute("PRAGMA table_info(run_plans)")]
    assert columns[-1] == "manifest", columns
    store.create_run("run-1", big)
    kind, size = store.db.execute(
        "SELECT typeof(manifest), length(manifest) FROM run_plans WHERE run_id = 'run-1'"
    ).fetchone()
    text = manifest_json(big)
    assert (kind, size) == ("blob", len(text.encode("utf-8"))) and size > 3 * (1 << 20)
    assert store.get_manifest("run-1") == big
    assert store.plan_outline("run-1").cells == [(c.id, "t") for c in cases]
    assert [t["id"] for t in plan_facts(store, ["run-1"])["run-1"].targets] == ["t"]
    dump = export_run(store, "run-1")
    assert dump.run["manifest"] == text  # text, as a store of any kind takes it
    other = open_store(tmp_path / "copy")
    import_run(other, dump)
    assert other.get_manifest("run-1") == big


def test_a_plan_table_from_before_the_plan_was_its_last_column_still_works(tmp_path, plan):
    """Stores made by the first schema 2 builds keep the plan in the middle of the row: a
    plan is written into them the same way (the zero blob made whole) and reads back."""
    store = open_store(tmp_path / "s")
    store.db.execute("DROP TABLE run_plans")
    store.db.execute(
        "CREATE TABLE run_plans (run_id TEXT PRIMARY KEY, manifest TEXT NOT NULL, outline TEXT)"
    )
    store.create_run("run-1", plan)
    assert store.get_manifest("run-1") == plan
    assert store.plan_outline("run-1").cells == [("mmlu-pro/1", "t"), ("mmlu-pro/2", "t")]


def test_a_read_only_store_reads_and_says_so_on_a_write(tmp_path, plan):
    store = open_store(tmp_path / "s")
    store.create_run("run-1", plan)
    store.close()
    reader = open_store(tmp_path / "s", read_only=True)
    assert reader.read_only and [run.id for run in reader.list_runs()] == ["run-1"]
    assert reader.get_manifest("run-1").plan_sha256 == plan.plan_sha256
    with pytest.raises(StoreError) as error:
        reader.set_run_status("run-1", "cancelled")
    assert str(error.value) == (
        f"the store {tmp_path / 's'} is read-only: listing and reading runs work, but this "
        "needs to write to it (use a writable copy, or --store / --srbench-store DIR)"
    )
    assert reader.require_run("run-1").status == "queued"  # nothing was written
    with pytest.raises(StoreError, match="no store at"):
        open_store(tmp_path / "missing", read_only=True)


def test_a_store_the_process_cannot_write_opens_read_only(tmp_path, plan):
    store = open_store(tmp_path / "s")
    store.create_run("run-1", plan)
    store.close()
    make_read_only(tmp_path / "s")
    probe = (
        "import json, sys\n"
        "from pytest_srbench.store import StoreError, open_store\n"
        "store = open_store(sys.argv[1])\n"
        "run = store.require_run('run-1')\n"
        "try:\n"
        "    store.set_run_status('run-1', 'cancelled')\n"
        "except StoreError as error:\n"
        "    print(json.dumps([store.read_only, run.status, str(error)]))\n"
    )
    try:
        done = subprocess.run(
            unprivileged([sys.executable, "-c", probe, str(tmp_path / "s")]),
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        make_writable(tmp_path / "s")
    assert done.returncode == 0, done.stderr
    read_only, status, error = json.loads(done.stdout)
    assert read_only is True and status == "queued" and "is read-only" in error


def _hold_write_lock(path, holding, release):
    """Another connection holding the store's write lock (``BEGIN IMMEDIATE``)."""
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("BEGIN IMMEDIATE")
    holding.set()
    release.wait(60)
    holder.execute("ROLLBACK")
    holder.close()


def test_a_store_locked_longer_than_the_busy_timeout_is_one_clear_error(
    tmp_path, plan, monkeypatch
):
    monkeypatch.setenv("SRBENCH_BUSY_TIMEOUT_S", "0.2")
    store = open_store(tmp_path / "s")
    store.create_run("run-1", plan)
    store.close()
    holding, release = multiprocessing.Event(), multiprocessing.Event()
    holder = multiprocessing.Process(
        target=_hold_write_lock, args=(tmp_path / "s" / "journal.sqlite3", holding, release)
    )
    holder.start()
    try:
        assert holding.wait(60)
        locked = open_store(tmp_path / "s")  # opening an up-to-date store writes nothing
        assert [run.id for run in locked.list_runs()] == ["run-1"]  # reading works
        with pytest.raises(StoreError) as error:
            locked.set_run_status("run-1", "cancelled")
        assert str(error.value).startswith(
            f"the store {tmp_path / 's'} is locked by another process (waited 0.2 s for it)"
        )
        assert "SRBENCH_BUSY_TIMEOUT_S" in str(error.value)
    finally:
        release.set()
        holder.join(60)
    locked.set_run_status("run-1", "cancelled")  # once released, the same store writes
    assert locked.require_run("run-1").status == "cancelled"


@pytest.mark.parametrize("value", ["soon", "-1"])
def test_a_bad_busy_timeout_is_named(tmp_path, monkeypatch, value):
    monkeypatch.setenv("SRBENCH_BUSY_TIMEOUT_S", value)
    with pytest.raises(StoreError, match="SRBENCH_BUSY_TIMEOUT_S must be a number of seconds"):
        open_store(tmp_path / "s")


def test_a_store_that_cannot_be_created_is_one_clear_error(tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(StoreError, match=r"cannot create the store .*afile/s: "):
        open_store(tmp_path / "afile" / "s")


def test_the_writer_redacts_key_values_from_rows_events_and_evidence(tmp_path, plan):
    from pytest_srbench.core.redact import Redactor
    from pytest_srbench.store.writes import FinishCall, UpsertResult

    key = "sk-test-0123456789abcdef"
    store = open_store(tmp_path / "s")
    store.create_run("run-1", plan)
    writer = GroupCommitWriter(store)
    writer.redactor = Redactor([key])
    row = {"id": "c1", "case_id": "mmlu-pro/1", "target_id": "t", "role": "subject"}
    writer.post([InsertCall("run-1", {**row, "status": "sent", "request": {"k": key}})])
    writer.post(
        [
            FinishCall(
                "run-1",
                {**row, "status": "failed", "error": f"echo {key}", "router": {"x-k": key}},
                f'{{"error": "bad key {key}"}}'.encode(),
            ),
            UpsertResult(
                "run-1",
                {"case_id": "mmlu-pro/1", "target_id": "t", "answer": key, "status": "failed"},
            ),
            AppendEvent("run-1", "failure_observed", {"summary": f"key {key}"}),
        ]
    )
    (call,) = store.calls("run-1")
    assert call["error"] == "echo [REDACTED]" and call["router"] == {"x-k": "[REDACTED]"}
    assert store.read_evidence(call["evidence"]) == b'{"error": "bad key [REDACTED]"}'
    assert store.results("run-1")[0]["answer"] == "[REDACTED]"
    store.close()
    for path in (tmp_path / "s").rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path
