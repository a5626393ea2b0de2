"""Idempotent adds: an `Idempotency-Key` names one add per project for a window of time.

A repeat of the add (same key, same request) within the window returns the run the first
one started, and nothing is processed twice; the same key with another request is refused
(409). The request is compared by a fingerprint of its validated form, so two spellings of
one request (a `group` left out or given as "default", keys in another order, a time in
another offset) are the same request.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from mnemo.domain.requests import AddRequest
from mnemo.errors import MnemoError

KEY_PATTERN = r"^[\x20-\x7e]+$"  # printable ASCII, as HTTP header values safely carry
KEY_CHARS = 255
HEADER = "Idempotency-Key"


def request_fingerprint(request: AddRequest) -> str:
    """A digest of the request's meaning (SHA-256 of its canonical JSON)."""
    canonical = json.dumps(
        request.model_dump(exclude_none=True),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
        default=_canonical_time,
    )
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _canonical_time(value: object) -> str:
    """One spelling per instant: aware times in UTC (naive ones as given)."""
    if not isinstance(value, datetime):
        raise TypeError(f"{type(value).__name__} is not part of an add request")
    return (value.astimezone(UTC) if value.tzinfo else value).isoformat()


@dataclass(frozen=True)
class IdempotencyClaim:
    """What a new add with a key records beside its run, in the run's own transaction."""

    project: str
    key: str
    fingerprint: str
    run_id: str
    created_at: datetime
    expires_at: datetime

    @classmethod
    def new(
        cls,
        project: str,
        key: str,
        request: AddRequest,
        run_id: str,
        now: datetime,
        window_seconds: float,
    ) -> IdempotencyClaim:
        return cls(
            project=project,
            key=key,
            fingerprint=request_fingerprint(request),
            run_id=run_id,
            created_at=now,
            expires_at=now + timedelta(seconds=window_seconds),
        )

    def to_row(self) -> dict[str, object]:
        return {
            "project": self.project,
            "key": self.key,
            "fingerprint": self.fingerprint,
            "run_id": self.run_id,
            "created_at": self.created_at,
            "expires_at": self.expires_at,
        }


class KeyTaken(MnemoError):
    """The add's key was claimed by another add first (a concurrent or earlier one that is
    still in its window): this add stored nothing."""

    def __init__(self, claim: IdempotencyClaim) -> None:
        super().__init__(f"idempotency key {claim.key!r} is taken")
        self.claim = claim
