"""One failure rule for both modes: only connection-level and resource errors are transient."""

from __future__ import annotations

import errno

import psycopg
import pytest
from aiokafka import errors as kafka_errors
from pydantic import BaseModel, ValidationError
from sqlalchemy import exc as sa_exc

from mnemo.contracts.llm import LLMError
from mnemo.core.failures import Backoff, describe, is_transient
from mnemo.errors import connection_cause
from mnemo.kafka.stages.failures import reason_of
from mnemo.store.commits import CommitError


def wrapped(orig: Exception, cls: type[sa_exc.DBAPIError] = sa_exc.OperationalError,
            invalidated: bool = False) -> sa_exc.DBAPIError:  # fmt: skip
    """The error SQLAlchemy raises around a psycopg error."""
    return cls("SELECT 1", {}, orig, connection_invalidated=invalidated)


@pytest.mark.parametrize(
    "error",
    [
        psycopg.OperationalError("connection refused"),  # no SQLSTATE: never reached the server
        psycopg.errors.ConnectionFailure("connection failure"),  # 08006
        psycopg.errors.AdminShutdown("terminating connection due to administrator command"),
        psycopg.errors.CrashShutdown("crash shutdown"),  # 57P02
        psycopg.errors.CannotConnectNow("the database system is starting up"),  # 57P03
        psycopg.errors.SerializationFailure("could not serialize access"),  # 40001
        psycopg.errors.DeadlockDetected("deadlock detected"),  # 40P01
        psycopg.InterfaceError("the connection is closed"),
        # A lack of resources passes (issue 33: a full disk failed acknowledged runs).
        psycopg.errors.DiskFull("could not extend file: No space left on device"),  # 53100
        psycopg.errors.OutOfMemory("out of memory"),  # 53200
        psycopg.errors.TooManyConnections("too many clients already"),  # 53300
        psycopg.errors.InsufficientResources("insufficient resources"),  # 53000
        psycopg.errors.QueryCanceled("canceling statement due to statement timeout"),  # 57014
    ],
)
def test_postgres_connection_errors_are_transient_raw_and_wrapped(error: Exception) -> None:
    assert is_transient(error)
    assert is_transient(wrapped(error))


@pytest.mark.parametrize(
    "error",
    [
        psycopg.errors.ProgramLimitExceeded("string is too long for tsvector (54000)"),
        psycopg.errors.StringDataRightTruncation("value too long"),  # 22001
        psycopg.errors.UniqueViolation("duplicate key"),  # 23505
        psycopg.errors.UndefinedTable("relation does not exist"),  # 42P01
    ],
)
def test_deterministic_postgres_errors_fail_at_once(error: Exception) -> None:
    assert error.sqlstate is not None  # type: ignore[attr-defined]
    assert not is_transient(error)
    # SQLAlchemy maps 54000 to OperationalError: the class alone must not decide.
    assert not is_transient(wrapped(error, sa_exc.OperationalError))
    assert not is_transient(wrapped(error, sa_exc.DatabaseError))


def test_an_invalidated_connection_and_an_interface_error_are_transient() -> None:
    unknown = psycopg.errors.ProgramLimitExceeded("whatever came with it")
    assert is_transient(wrapped(unknown, sa_exc.DBAPIError, invalidated=True))
    assert is_transient(wrapped(psycopg.InterfaceError("closed"), sa_exc.InterfaceError))
    assert is_transient(sa_exc.TimeoutError("QueuePool limit of size 5 overflow 5 reached"))


def test_broker_and_socket_errors_are_transient() -> None:
    assert is_transient(kafka_errors.KafkaConnectionError("no broker"))
    assert is_transient(kafka_errors.KafkaTimeoutError())
    assert is_transient(kafka_errors.NotLeaderForPartitionError())  # retriable by Kafka's word
    assert not is_transient(kafka_errors.MessageSizeTooLargeError())
    assert is_transient(ConnectionRefusedError(errno.ECONNREFUSED, "refused"))
    assert is_transient(TimeoutError())
    assert is_transient(OSError(errno.EHOSTUNREACH, "no route to host"))
    assert not is_transient(FileNotFoundError(errno.ENOENT, "no such file"))


def test_step_errors_are_not_transient() -> None:
    for error in (LLMError("LLM prompt 'extract' failed after 3 attempts: 503"),
                  CommitError("topic 'x' needs properties: a"), ValueError("bad"),
                  KeyError("run_id")):  # fmt: skip
        assert not is_transient(error)


class _Model(BaseModel):
    n: int


def test_reasons_name_what_failed() -> None:
    with pytest.raises(ValidationError) as invalid:
        _Model.model_validate({"n": "x"})
    assert reason_of(invalid.value) == "invalid_payload"
    assert reason_of(UnicodeDecodeError("utf-8", b"\xff", 0, 1, "bad")) == "invalid_payload"
    assert reason_of(LLMError("down")) == "llm"
    assert reason_of(CommitError("scope")) == "commit"
    assert reason_of(RuntimeError("boom")) == "step"


def test_describe_names_the_type_and_is_bounded() -> None:
    assert describe(ValueError("bad value")) == "ValueError: bad value"
    assert describe(KeyError()) == "KeyError: KeyError"
    long = describe(RuntimeError("x" * 5000))
    assert len(long) == 2000 and long.endswith("...")
    assert len(describe(RuntimeError("x" * 5000), 300)) == 300


def test_connection_cause_finds_the_socket_error_under_a_client_error() -> None:
    refused = ConnectionRefusedError(errno.ECONNREFUSED, "refused")
    try:
        try:
            raise refused
        except OSError as exc:
            raise RuntimeError("connect timeout") from exc
    except RuntimeError as outer:
        assert connection_cause(outer) is refused
    assert connection_cause(RuntimeError("alone")) is None


def test_backoff_doubles_up_to_its_cap_and_resets() -> None:
    backoff = Backoff(0.5, cap=3.0)
    assert [backoff.next() for _ in range(5)] == [0.5, 1.0, 2.0, 3.0, 3.0]
    backoff.reset()
    assert backoff.next() == 0.5
