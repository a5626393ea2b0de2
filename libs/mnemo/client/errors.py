"""Typed errors of the mnemo clients; server errors carry the RFC 7807 problem document."""

from __future__ import annotations

import builtins
import warnings
from typing import Any

# One root for the server's errors and the clients' (issue 36); `transient` marks an error
# that may pass if the same call is made again later.
from mnemo.errors import MnemoError

__all__ = [
    "APIError",
    "AuthenticationError",
    "ConflictError",
    "MnemoConnectionError",
    "MnemoError",
    "NotFoundError",
    "RunTimeoutError",
    "ValidationError",
    "error_for",
]


class APIError(MnemoError):
    """The server answered with an error status. `problem` is its problem+json body."""

    def __init__(self, status: int, problem: dict[str, Any] | None = None) -> None:
        self.status = status
        self.problem = problem or {}
        self.detail = str(self.problem.get("detail") or self.problem.get("title") or status)
        super().__init__(f"HTTP {status}: {self.detail}")

    @property
    def transient(self) -> bool:  # type: ignore[override]
        """429 (slow down) and 502-504 (the server or its queue is unavailable for now)."""
        return self.status in (429, 502, 503, 504)

    @property
    def errors(self) -> list[dict[str, Any]]:
        """Field errors: [{location, message, value}]."""
        return list(self.problem.get("errors") or [])


class AuthenticationError(APIError):
    """401: missing, unknown or revoked API key."""


class PermissionDeniedError(APIError):
    """403: the credential is valid but may not do this (read-only, or bound to one user)."""


class NotFoundError(APIError):
    """404: missing, or belonging to another user, group or project."""


class ValidationError(APIError):
    """400/413/422: the request was refused; nothing was stored."""


class ConflictError(APIError):
    """409: the operation does not fit the resource's state (e.g. retrying a completed run)."""


class MnemoConnectionError(MnemoError, builtins.ConnectionError):
    """The server could not be reached. Also a builtin `ConnectionError`, so code that
    catches that one catches this too; the name no longer shadows it."""

    transient = True


class RunTimeoutError(MnemoError):
    """A run did not complete or fail within the wait timeout."""

    def __init__(self, run_id: str, timeout: float) -> None:
        super().__init__(f"run {run_id!r} did not finish within {timeout}s")
        self.run_id = run_id
        self.timeout = timeout


_BY_STATUS: dict[int, type[APIError]] = {
    400: ValidationError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: ValidationError,
    422: ValidationError,
}


def error_for(status: int, problem: dict[str, Any] | None) -> APIError:
    return _BY_STATUS.get(status, APIError)(status, problem)


def __getattr__(name: str) -> Any:
    # `ConnectionError` was this module's name for MnemoConnectionError until 2026-12; it
    # shadowed the builtin in `from mnemo.client.errors import *`.
    if name == "ConnectionError":
        warnings.warn(
            "mnemo.client.ConnectionError is deprecated: use mnemo.client.MnemoConnectionError",
            DeprecationWarning,
            stacklevel=2,
        )
        return MnemoConnectionError
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
