"""The root of mnemo's errors, and the error text that failed runs and DLQ records carry.

Every error mnemo raises on purpose derives from `MnemoError` (the SDK's too), so a caller
can catch mnemo's failures apart from a bug's. `transient` says whether the same call may
succeed later unchanged (an outage, a full queue): the transports retry those in place, and
the HTTP layer answers them 503 with Retry-After. Domain errors carry no HTTP status: the
API maps each kind of refusal to one (`mnemo.api.problems`).

This module imports nothing of mnemo: every layer may use it.
"""

from __future__ import annotations

from typing import ClassVar

MAX_ERROR_CHARS = 2000


class MnemoError(Exception):
    """Base of every error mnemo raises on purpose; `transient` errors may pass if retried."""

    transient: ClassVar[bool] = False


def connection_cause(exc: BaseException) -> OSError | None:
    """The socket error under a client library's error, if any (e.g. a refused connection
    that an HTTP client reports as a connect timeout)."""
    cause = exc.__cause__ or exc.__context__
    while cause is not None:
        if isinstance(cause, OSError) and not isinstance(cause, TimeoutError):
            return cause
        cause = cause.__cause__ or cause.__context__
    return None


def describe(exc: BaseException, limit: int = MAX_ERROR_CHARS) -> str:
    """The error text a failed run or a DLQ record carries: `Type: message`, bounded."""
    name = exc.__class__.__name__
    text = f"{name}: {str(exc) or name}"
    return text if len(text) <= limit else text[: limit - 3] + "..."
