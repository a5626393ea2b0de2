"""Typed errors of the mnemo clients; server errors carry the RFC 7807 problem document."""

from __future__ import annotations

from typing import Any


class MnemoError(Exception):
    """Base of every error the mnemo clients raise."""


class APIError(MnemoError):
    """The server answered with an error status. `problem` is its problem+json body."""

    def __init__(self, status: int, problem: dict[str, Any] | None = None) -> None:
        self.status = status
        self.problem = problem or {}
        self.detail = str(self.problem.get("detail") or self.problem.get("title") or status)
        super().__init__(f"HTTP {status}: {self.detail}")

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


class ConnectionError(MnemoError):
    """The server could not be reached."""


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
