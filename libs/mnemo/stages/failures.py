"""What to do with a record that failed: retry it in place, or dead-letter it.

Transient failures (Postgres or the broker briefly unreachable) are retried in place so the
partition keeps its order. Everything else is poison: the record goes to the DLQ with its
error and its runs are marked failed, like the embedded worker marks a failing record.
"""

from __future__ import annotations

from datetime import datetime

from aiokafka.errors import KafkaError
from pydantic import ValidationError
from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

from mnemo.domain.memory import RunState
from mnemo.events.dlq import DlqRecord, Reason
from mnemo.events.status import RunStatusEvent
from mnemo.llm.base import LLMError
from mnemo.store.commits import CommitError


def is_transient(exc: BaseException) -> bool:
    if isinstance(exc, OperationalError | InterfaceError | KafkaError | ConnectionError):
        return True
    return isinstance(exc, DBAPIError) and bool(exc.connection_invalidated)


def reason_of(exc: BaseException) -> Reason:
    if isinstance(exc, ValidationError | UnicodeDecodeError):
        return "invalid_payload"
    if isinstance(exc, LLMError):
        return "llm"
    if isinstance(exc, CommitError):
        return "commit"
    return "step"


def describe(exc: BaseException) -> str:
    text = str(exc) or exc.__class__.__name__
    return f"{exc.__class__.__name__}: {text}"[:2000]


def dead_letter(
    exc: BaseException,
    *,
    service: str,
    topic: str,
    partition: int,
    offset: int,
    key: str | None,
    payload: bytes | None,
    run_ids: list[str],
    scope_key: str | None,
    now: datetime,
) -> tuple[DlqRecord, RunStatusEvent | None]:
    """The DLQ record for a poison record, and the `failed` status of its runs (if known)."""
    record = DlqRecord(
        source_topic=topic,
        partition=partition,
        offset=offset,
        key=key,
        payload=(payload or b"").decode("utf-8", errors="replace"),
        service=service,
        reason=reason_of(exc),
        error=describe(exc),
        run_ids=run_ids,
        failed_at=now,
    )
    status = None
    if run_ids:
        status = RunStatusEvent(
            run_ids=run_ids,
            status=RunState.failed,
            scope_key=scope_key or key or "",
            at=now,
            service=service,
            error=record.error,
        )
    return record, status
