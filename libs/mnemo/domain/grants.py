"""What a credential may do: its project, whether it may write, and the one user it may
see (issue 40). One policy for every surface (REST, MCP, console, OAuth tokens).

A grant bound to a user acts only on that user's memories and runs: a request naming no
user is taken as that user's, one naming another user is refused (403), and a run or
memory of another user is not found (404, never saying which). Project-wide reads and
writes (status, export, group changes, the dead-letter queue) are refused to it.
"""

from __future__ import annotations

from dataclasses import dataclass

from mnemo.domain.scope import normalize_user_id

# OAuth scopes (the built-in authorization server issues them; an external issuer's
# tokens carry them in `scope`). A token without `mnemo:write` is read-only.
SCOPE_READ = "mnemo:read"
SCOPE_WRITE = "mnemo:write"
SCOPES = (SCOPE_READ, SCOPE_WRITE)


class Forbidden(PermissionError):
    """The credential is valid but may not do this (403); nothing was done."""


@dataclass(frozen=True)
class Grant:
    project: str
    writable: bool = True
    user_id: str | None = None  # in its compared form (`normalize_user_id`)

    @property
    def scopes(self) -> tuple[str, ...]:
        return SCOPES if self.writable else (SCOPE_READ,)

    def describe(self) -> str:
        access = "read-write" if self.writable else "read-only"
        return access + (f", user {self.user_id}" if self.user_id else "")


def bound(project: str, writable: bool, user_id: str | None) -> Grant:
    """A grant with its user id in compared form (InvalidUserId for a refused one)."""
    return Grant(project, writable, normalize_user_id(user_id))


def require_write(grant: Grant, what: str) -> None:
    if not grant.writable:
        raise Forbidden(f"this credential is read-only: it may not {what}")


def require_project_wide(grant: Grant, what: str) -> None:
    if grant.user_id is not None:
        raise Forbidden(
            f"this credential is bound to one user_id: it may not {what} (project-wide)"
        )


def user_for(grant: Grant, asked: str | None) -> str | None:
    """The user a request acts on: the one asked, or for a user-bound grant its user
    (Forbidden when another user is asked for)."""
    if grant.user_id is None:
        return asked
    if asked is None:
        return grant.user_id
    try:
        same = normalize_user_id(asked) == grant.user_id
    except ValueError:
        same = False
    if not same:
        raise Forbidden("this credential is bound to another user_id")
    return asked


def may_see_user(grant: Grant, owner: str | None) -> bool:
    """Whether a run or memory owned by `owner` is visible to the grant."""
    return grant.user_id is None or (
        owner is not None and normalize_user_id(owner) == grant.user_id
    )


def is_read_request(method: str, path: str) -> bool:
    """Requests a read-only credential may make: GET/HEAD, and the POSTs that only read.
    Everything else (and any method or route added later) counts as a write."""
    if method in ("GET", "HEAD", "OPTIONS"):
        return True
    return method == "POST" and path in ("/v1/memories/search", "/v1/memories/list")
