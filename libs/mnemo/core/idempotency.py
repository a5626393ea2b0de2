"""Idempotent adds, the Engine's half: find the add an `Idempotency-Key` already names.

The key's claim is written by the transport with the run's row (`RunTransport.submit`);
here a repeat finds it and answers with the first add's run, or is refused when the key
names another request.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.domain.idempotency import HEADER, request_fingerprint
from mnemo.domain.memory import Run
from mnemo.domain.requests import AddRequest, FieldError, InvalidRequest, Refusal
from mnemo.store import idempotency, runs


@dataclass(frozen=True)
class Admission:
    """An add's run; `replayed` when an earlier add with the same key had started it."""

    run: Run
    replayed: bool = False


async def earlier_run(
    db: AsyncEngine, project: str, key: str, request: AddRequest, now: datetime, window: float
) -> Run | None:
    """The run of the earlier add `key` names in `project` within its window, None when the
    key is free. InvalidRequest (409) when that add was another request."""
    async with db.connect() as conn:
        found = await idempotency.find(conn, project, key, now)
        if found is None:
            return None
        if found.fingerprint != request_fingerprint(request):
            raise _reused(key, found.created_at, window)
        return await runs.get(conn, project, found.run_id)


def _reused(key: str, first_used: datetime, window: float) -> InvalidRequest:
    message = (
        f"this key was first used at {first_used.isoformat()} for a different request; an "
        f"{HEADER} names one add for {window:g} s (MNEMO_IDEMPOTENCY_WINDOW_SECONDS): send a "
        "new key for a new add"
    )
    return InvalidRequest(
        f"{HEADER} '{key}' was already used for a different request",
        [FieldError(location=f"header.{HEADER}", value=key, message=message)],
        kind=Refusal.conflict,
    )


def still_contended(key: str) -> InvalidRequest:
    """Another add with the key kept winning and losing its claim (its transport refused
    it each time): the caller may retry."""
    return InvalidRequest(
        f"another add with {HEADER} '{key}' is in progress; retry shortly",
        [FieldError(location=f"header.{HEADER}", value=key, message="key in use")],
        kind=Refusal.conflict,
    )
