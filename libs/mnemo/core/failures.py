"""Failure classification and error text: one rule for the embedded and the Kafka mode.

Only connection-level and resource failures are transient: the database or the broker is
unreachable or does not answer in time, a connection broke, Postgres is shutting down or not
accepting connections yet, or it lacks a resource for the moment (a full disk, memory,
connection slots; a statement cancelled by its timeout). They are
retried in place, with backoff, while the outage lasts, so a scope keeps its order. Any
other error is deterministic (bad data, a refused step, an LLM that stayed down, a value
Postgres cannot store) and fails the run at once with its error; retrying it would only
wedge the scope behind it.
"""

from __future__ import annotations

import errno
import socket

import psycopg
from sqlalchemy import exc as sa_exc

from mnemo.errors import MAX_ERROR_CHARS, MnemoError, connection_cause, describe

# Postgres SQLSTATEs of a server that went away or is not taking connections yet
# (class 08 is matched by prefix), and of a transaction the server aborted only because of
# a concurrent one (serialization failure, deadlock), which succeeds when run again.
# Class 53 (insufficient resources: disk full, out of memory, too many connections) and
# 57014 (a statement cancelled by statement_timeout: a stalled server) pass once an operator
# or time has freed what is missing; failing the run for good would lose an acknowledged add.
_TRANSIENT_SQLSTATES = frozenset({"57P01", "57P02", "57P03", "57014", "40001", "40P01"})
_TRANSIENT_SQLSTATE_CLASSES = ("08", "53")
_CONNECTION_ERRNOS = frozenset(
    {
        errno.ECONNREFUSED,
        errno.ECONNRESET,
        errno.ECONNABORTED,
        errno.EHOSTUNREACH,
        errno.ENETUNREACH,
        errno.ENETDOWN,
        errno.ETIMEDOUT,
        errno.EPIPE,
    }
)


def is_transient(exc: BaseException) -> bool:
    """True when `exc` says the database or the broker is unavailable right now (or a
    mnemo error is `transient`: an in-memory queue full for the moment)."""
    if isinstance(
        exc, MnemoError
    ):  # mnemo's own errors say it (a full queue, an unavailable queue)
        return exc.transient
    if isinstance(exc, sa_exc.DBAPIError):
        if exc.connection_invalidated or isinstance(exc, sa_exc.InterfaceError):
            return True
        return _is_transient_dbapi(exc.orig)
    if isinstance(exc, sa_exc.TimeoutError):  # no pooled connection came free in time
        return True
    if _is_transient_dbapi(exc) or _is_transient_kafka(exc):
        return True
    return _is_connection_oserror(exc)


def _is_transient_dbapi(exc: BaseException | None) -> bool:
    if isinstance(exc, psycopg.InterfaceError):
        return True
    if not isinstance(exc, psycopg.OperationalError):
        return False
    sqlstate = exc.sqlstate
    # No SQLSTATE: the client could not reach the server at all (refused, reset, DNS).
    return (
        sqlstate is None
        or sqlstate.startswith(_TRANSIENT_SQLSTATE_CLASSES)
        or sqlstate in _TRANSIENT_SQLSTATES
    )


def _is_transient_kafka(exc: BaseException) -> bool:
    try:
        from aiokafka import errors as kafka_errors
    except ImportError:  # the kafka extra is not installed: no Kafka errors to classify
        return False
    if isinstance(exc, kafka_errors.KafkaConnectionError | kafka_errors.KafkaTimeoutError):
        return True
    return isinstance(exc, kafka_errors.KafkaError) and bool(exc.retriable)


def _is_connection_oserror(exc: BaseException) -> bool:
    if isinstance(exc, ConnectionError | TimeoutError | socket.gaierror):
        return True
    return isinstance(exc, OSError) and exc.errno in _CONNECTION_ERRNOS


class Backoff:
    """Exponential waits between retries of a transient failure: `initial`, doubling,
    at most `cap` seconds; `reset` after a success."""

    def __init__(self, initial: float, cap: float = 30.0) -> None:
        self.initial = initial
        self.cap = cap
        self._next = initial

    def next(self) -> float:
        wait = self._next
        self._next = min(self._next * 2, self.cap)
        return wait

    def reset(self) -> None:
        self._next = self.initial


__all__ = ["MAX_ERROR_CHARS", "Backoff", "connection_cause", "describe", "is_transient"]
