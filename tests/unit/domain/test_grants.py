"""The one policy of scoped credentials (issue 40), as pure functions."""

from __future__ import annotations

import pytest

from mnemo.domain.grants import (
    Forbidden,
    Grant,
    bound,
    is_read_request,
    may_see_user,
    require_project_wide,
    require_write,
    user_for,
)
from mnemo.domain.scope import InvalidUserId


def test_an_unbound_grant_acts_on_the_user_asked_for() -> None:
    grant = Grant("p")
    assert user_for(grant, None) is None and user_for(grant, "bob") == "bob"
    assert may_see_user(grant, None) and may_see_user(grant, "bob")
    require_write(grant, "add")
    require_project_wide(grant, "export")


def test_a_bound_grant_fills_in_its_user_and_refuses_others() -> None:
    grant = bound("p", True, "  ANA ")
    assert grant.user_id == "ana"
    assert user_for(grant, None) == "ana"
    assert user_for(grant, "Ana") == "Ana"  # the same user in another spelling
    with pytest.raises(Forbidden):
        user_for(grant, "bob")
    with pytest.raises(Forbidden):
        user_for(grant, "\u212aate")  # refused ids are another user, not an error page
    assert may_see_user(grant, "ANA") and not may_see_user(grant, "bob")
    assert not may_see_user(grant, None)  # an erased run's user is gone: not shown
    with pytest.raises(Forbidden, match="bound to one user_id"):
        require_project_wide(grant, "export the project")


def test_a_read_only_grant_refuses_writes() -> None:
    grant = Grant("p", writable=False)
    assert grant.scopes == ("mnemo:read",) and "read-only" in grant.describe()
    with pytest.raises(Forbidden, match="read-only"):
        require_write(grant, "add memories")


def test_a_refused_user_id_cannot_be_bound() -> None:
    with pytest.raises(InvalidUserId):
        bound("p", True, "\u212aate")


@pytest.mark.parametrize(
    ("method", "path", "reads"),
    [
        ("GET", "/v1/memories/x", True),
        ("HEAD", "/v1/groups", True),
        ("POST", "/v1/memories/search", True),
        ("POST", "/v1/memories/list", True),
        ("POST", "/v1/memories", False),
        ("POST", "/v1/memories/search/", False),  # anything not known as a read is a write
        ("PUT", "/v1/groups/g", False),
        ("DELETE", "/v1/users/u", False),
        ("PATCH", "/v1/anything", False),
    ],
)
def test_only_known_reads_count_as_reads(method: str, path: str, reads: bool) -> None:
    assert is_read_request(method, path) is reads
