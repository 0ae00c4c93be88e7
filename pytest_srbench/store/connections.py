"""One database connection per thread, nested write transactions and read snapshots: the
connection and transaction handling both store backends share (``SqliteStore``,
``PostgresStore`` inherit ``ThreadConnections``).

Each thread opens its own connection on first use (``db``) and closes it with ``close``.
``transaction()`` is one write transaction; a nested call joins the outer one, and only the
outermost commits (or rolls back when its block raises). ``snapshot()`` is one read
transaction whose reads agree with each other; inside a transaction it joins it. A driver
error at the start or the commit of a write transaction becomes the backend's one-line
``store_error``.

What differs between the databases stays in each backend: how a connection is opened, the
statements that begin a write or a read transaction, whether a connection is still usable,
how a failed transaction is rolled back and a snapshot ended, and (PostgreSQL) the run locks a
transaction holds."""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Iterator
from contextlib import contextmanager
from typing import ClassVar, Generic, Protocol, TypeVar


class _Connection(Protocol):
    """What this module uses of a driver's connection (``sqlite3``'s and psycopg's both)."""

    def execute(self, statement: str, /) -> object: ...

    def close(self) -> None: ...


Connection = TypeVar("Connection", bound=_Connection)


class ThreadConnections(ABC, Generic[Connection]):
    """A connection per thread, ``transaction()`` and ``snapshot()`` over it (see the module
    docstring for what a backend supplies)."""

    _BEGIN_WRITE: ClassVar[str]  # the statement that starts a write transaction

    def __init__(self) -> None:
        self._local = threading.local()

    @abstractmethod
    def _connect(self) -> Connection:
        """A new connection for this thread (a failure is a one-line ``StoreError``)."""

    @abstractmethod
    def store_error(self, error: Exception) -> Exception:
        """The one-line ``StoreError`` for a failure the user can cause; any other error is
        returned unchanged (a bug to see)."""

    @property
    @abstractmethod
    def _driver_error(self) -> type[Exception]:
        """The driver's errors that a write transaction's start or commit turns into
        ``store_error``."""

    @abstractmethod
    def _in_transaction(self, connection: Connection) -> bool:
        """Whether this thread is already in a transaction that a snapshot joins."""

    @abstractmethod
    def _rollback(self, connection: Connection) -> None:
        """Roll back the failed write transaction of ``connection``."""

    @abstractmethod
    def _begin_snapshot(self, connection: Connection) -> None:
        """Start the read transaction of ``snapshot()``."""

    @abstractmethod
    def _end_snapshot(self, connection: Connection) -> None:
        """End the read transaction of ``snapshot()``."""

    def _usable(self, connection: Connection) -> bool:
        """Whether this thread's connection can still be used (else a new one is opened)."""
        return True

    def _forget_locks(self) -> None:
        """Forget what this thread's transaction had locked (a new connection or transaction
        holds nothing yet); nothing by default."""

    @property
    def db(self) -> Connection:
        connection: Connection | None = getattr(self._local, "connection", None)
        if connection is None or not self._usable(connection):
            connection = self._connect()
            self._local.connection = connection
            self._local.depth = 0
            self._forget_locks()
        return connection

    def close(self) -> None:
        """Close this thread's connection."""
        connection: Connection | None = getattr(self._local, "connection", None)
        if connection is not None:
            connection.close()
            self._local.connection = None

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction (nested calls join the outer one)."""
        db = self.db
        depth = getattr(self._local, "depth", 0)
        if depth:
            self._local.depth = depth + 1
            try:
                yield
            finally:
                self._local.depth = depth
            return
        self._forget_locks()
        try:
            db.execute(self._BEGIN_WRITE)
        except self._driver_error as error:
            raise self.store_error(error) from None
        self._local.depth = 1
        try:
            yield
            db.execute("COMMIT")
        except self._driver_error as error:
            self._rollback(db)
            raise self.store_error(error) from None
        except BaseException:
            self._rollback(db)
            raise
        finally:
            self._local.depth = 0
            self._forget_locks()

    @contextmanager
    def snapshot(self) -> Iterator[None]:
        """Reads that agree with each other: one read transaction (joined when this thread is
        already in a transaction)."""
        db = self.db
        if self._in_transaction(db):
            yield
            return
        self._begin_snapshot(db)
        try:
            yield
        finally:
            self._end_snapshot(db)
