"""The HTTP status of each kind of refusal: the domain's errors carry none (issue 36).

Pure (no FastAPI), so the embedded client maps a refusal to the same error class as the
HTTP clients.
"""

from __future__ import annotations

from mnemo.domain.requests import InvalidRequest, Refusal

STATUS_OF: dict[Refusal, int] = {
    Refusal.invalid: 400,
    Refusal.missing: 404,
    Refusal.conflict: 409,
    Refusal.stale: 412,
    Refusal.too_large: 413,
    Refusal.unprocessable: 422,
    Refusal.overloaded: 429,
    Refusal.unavailable: 503,
}


def status_of(exc: InvalidRequest) -> int:
    """The status the API answers `exc` with."""
    return STATUS_OF[exc.kind]
