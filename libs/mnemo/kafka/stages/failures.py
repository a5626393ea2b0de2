"""Dead-lettering a record that failed for a reason that is not transient.

Which failures are transient, and the error text, are `mnemo.core.failures`' (one rule for
both modes). A poison record goes to the DLQ with its error, and its runs are marked failed
as the embedded worker marks a failing record's runs.
"""

from __future__ import annotations

from datetime import datetime

from pydantic import ValidationError

from mnemo.contracts.llm import LLMError
from mnemo.core.failures import describe
from mnemo.domain.memory import RunState
from mnemo.kafka.events.dlq import DlqRecord, Reason
from mnemo.kafka.events.status import RunStatusEvent
from mnemo.store.commits import CommitError


def reason_of(exc: BaseException) -> Reason:
    """The DLQ reason of a failure that is not transient."""
    if isinstance(exc, ValidationError | UnicodeDecodeError):
        return "invalid_payload"
    if isinstance(exc, LLMError):
        return "llm"
    if isinstance(exc, CommitError):
        return "commit"
    return "step"


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
    replay_of: str | None = None,
) -> tuple[DlqRecord, RunStatusEvent | None]:
    """The DLQ record for a poison record (consumed from Kafka `topic`), and the `failed`
    status of its runs (if known)."""
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
        replay_of=replay_of,
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
