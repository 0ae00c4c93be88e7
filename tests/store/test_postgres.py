"""What only the PostgreSQL store has: its schema version in the database (created once when
several hosts open a new database at once, a newer one refused), read-only roles, evidence
shared between hosts, and text ordered like SQLite whatever the database's collation."""

from __future__ import annotations

import multiprocessing

import pytest

from pytest_srbench.store import StoreError, open_store
from pytest_srbench.store.postgres import SCHEMA_VERSION
from tests.core.helpers import call, case, manifest, result, target
from tests.optional import import_extra

psycopg = import_extra("psycopg", "postgres")


def _open(location: str, ready, go) -> None:
    ready.wait()
    go.wait(30)
    store = open_store(location)
    store.create_run("run-1", manifest([case("mmlu-pro", "1")], [target("t")]))


def test_hosts_opening_a_new_database_at_once_create_the_schema_once(postgres_url):
    context = multiprocessing.get_context("spawn")
    ready, go = context.Barrier(4), context.Event()
    openers = [context.Process(target=_open, args=(postgres_url, ready, go)) for _ in range(3)]
    for opener in openers:
        opener.start()
    ready.wait()
    go.set()
    for opener in openers:
        opener.join(60)
        assert opener.exitcode == 0
    with psycopg.connect(postgres_url) as connection:
        version = connection.execute("SELECT value FROM meta").fetchall()
    assert version == [(str(SCHEMA_VERSION),)]
    assert [e["kind"] for e in open_store(postgres_url).events("run-1")] == ["created"]


def test_a_newer_schema_is_refused(postgres_url):
    open_store(postgres_url)
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(StoreError, match="newer than this pytest-srbench supports"):
        open_store(postgres_url)


def test_a_read_only_role_reads_and_says_so_on_a_write(postgres_url):
    store = open_store(postgres_url)
    store.create_run("run-1", manifest([case("mmlu-pro", "1")], [target("t")]))
    with psycopg.connect(postgres_url, autocommit=True) as connection:
        connection.execute("CREATE ROLE reader LOGIN")
        connection.execute("GRANT SELECT ON ALL TABLES IN SCHEMA public TO reader")
    reader_url = postgres_url.replace("user=srbench", "user=reader")
    reader = open_store(reader_url, read_only=True)
    assert [run.id for run in reader.list_runs()] == ["run-1"]
    with pytest.raises(StoreError, match=r"is read-only: listing and reading runs work"):
        reader.set_run_status("run-1", "cancelled")
    as_writer = open_store(reader_url)  # the role cannot write: the same clear error
    with pytest.raises(StoreError, match="is read-only"):
        as_writer.set_run_status("run-1", "cancelled")
    assert store.require_run("run-1").status == "queued"


def test_evidence_written_by_one_host_is_read_by_another(postgres_url, monkeypatch):
    monkeypatch.setenv("SRBENCH_HOST_ID", "host-a")
    one = open_store(postgres_url)
    one.create_run("run-1", manifest([case("mmlu-pro", "1")], [target("t")]))
    first = one.append_evidence("run-1", b"data: a\n\n")
    monkeypatch.setenv("SRBENCH_HOST_ID", "host-b")
    two = open_store(postgres_url)
    second = two.append_evidence("run-1", b"data: b\n\n")
    assert first["pack"] != second["pack"] and "host-a" in first["pack"]
    assert (two.read_evidence(first), one.read_evidence(second)) == (b"data: a\n\n", b"data: b\n\n")
    one.close_evidence()
    again = open_store(postgres_url)  # the same host and process: appended after its end
    monkeypatch.setenv("SRBENCH_HOST_ID", "host-a")
    third = again.append_evidence("run-1", b"data: c\n\n")
    assert third["pack"] == first["pack"] and third["offset"] == len(b"data: a\n\n")


def test_text_is_ordered_byte_wise_whatever_the_collation(postgres_server):
    url = postgres_server.url()
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(  # a human collation: "a" < "_"? "b" < "B"? not byte order
            "CREATE DATABASE tcoll TEMPLATE template0 LOCALE 'C'"
            " LOCALE_PROVIDER icu ICU_LOCALE 'en-US'"
        )
    store = open_store(postgres_server.url("tcoll"))
    plan = manifest([case("mmlu-pro", "1")], [target("t")])
    store.create_run("run-1", plan)
    with store.transaction():
        for case_id in ("mmlu-pro/b", "mmlu-pro/B", "mmlu-pro/a", "mmlu-pro/_"):
            store.upsert_result("run-1", result(case_id, "t"))
            store.insert_call("run-1", call(case_id, "z", id=f"c-{case_id}"))
    outside = [c.case_id for c in store.cell_rows("run-1", plan.planned_keys()) if not c.planned]
    expected = sorted(["mmlu-pro/b", "mmlu-pro/B", "mmlu-pro/a", "mmlu-pro/_"])  # bytes
    assert outside == expected + expected  # result rows first, then calls by (target, case)
    assert [r["case_id"] for r in store.results("run-1")] == expected
    with psycopg.connect(postgres_server.url("tcoll")) as connection:
        native = connection.execute("SELECT case_id FROM results ORDER BY case_id").fetchall()
    assert [row[0] for row in native] != expected  # the database alone would order otherwise
