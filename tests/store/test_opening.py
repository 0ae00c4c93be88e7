"""``open_store``: a folder is SQLite, a ``postgresql://`` URL is PostgreSQL; a URL with a
password, or of another scheme, is refused without repeating it."""

from __future__ import annotations

import pytest

from pytest_srbench.store import StoreError, open_store
from pytest_srbench.store.opening import check_location, describe_location
from pytest_srbench.store.postgres import PostgresStore
from pytest_srbench.store.sqlite import SqliteStore
from tests.optional import import_extra


@pytest.mark.parametrize(
    "location",
    [
        "postgresql://me:hunter2@db.example.com/srbench",
        "postgres://db.example.com/srbench?password=hunter2",
    ],
)
def test_a_location_with_a_password_is_refused_without_printing_it(location):
    with pytest.raises(StoreError) as error:
        open_store(location)
    assert "hunter2" not in str(error.value)
    assert "PGPASSWORD" in str(error.value) and "service" in str(error.value)


def test_other_urls_are_refused_without_repeating_them():
    with pytest.raises(StoreError) as error:
        check_location("mysql://me:hunter2@db/x")
    assert "mysql://…" in str(error.value) and "hunter2" not in str(error.value)


def test_the_location_is_shown_without_secrets():
    assert describe_location("postgresql://me@db:5433/runs?sslmode=require&service=x") == (
        "postgresql://me@db:5433/runs?service=x"
    )


def test_each_location_opens_its_backend(store_location, tmp_path):
    store = open_store(store_location, local_dir=tmp_path / "local")
    if store_location.startswith("postgresql://"):
        assert isinstance(store, PostgresStore)
        assert store.run_dir("r") == tmp_path / "local" / "runs" / "r"
    else:
        assert isinstance(store, SqliteStore)
        assert store.run_dir("r") == tmp_path / "s" / "runs" / "r"


def test_an_unreachable_database_is_one_clear_error(tmp_path):
    import_extra("psycopg", "postgres")  # without it, opening says psycopg is missing
    with pytest.raises(StoreError, match=r"cannot connect to the store postgresql:///x\?host="):
        open_store(f"postgresql:///x?host={tmp_path}&connect_timeout=2")
