"""One error root (issue 36): mnemo's errors derive from MnemoError, say whether they are
transient, and carry no HTTP status (the API maps each kind of refusal to one)."""

from __future__ import annotations

import builtins
import warnings

import pytest

import mnemo.client
from mnemo.api.statuses import STATUS_OF, status_of
from mnemo.batching import QueueFull
from mnemo.client import errors as client_errors
from mnemo.contracts.llm import LLMError
from mnemo.core.failures import is_transient
from mnemo.domain.paging import InvalidCursor
from mnemo.domain.requests import InvalidRequest, NotFound, Refusal
from mnemo.domain.scope import InvalidUserId
from mnemo.errors import MnemoError
from mnemo.steps.answer_guards import UnsafeAnswer
from mnemo.store.commits import CommitError


@pytest.mark.parametrize(
    "error",
    [
        InvalidRequest("x"),
        NotFound("x"),
        InvalidUserId("x"),
        InvalidCursor("x"),
        LLMError("x"),
        UnsafeAnswer("x"),
        CommitError("x"),
        QueueFull("x"),
    ],
    ids=lambda e: type(e).__name__,
)
def test_mnemo_errors_share_one_root(error: Exception) -> None:
    assert isinstance(error, MnemoError)


def test_the_transient_marker_decides_the_retry() -> None:
    assert QueueFull("full").transient and is_transient(QueueFull("full"))
    assert not LLMError("down").transient and not is_transient(LLMError("down"))
    assert not is_transient(InvalidRequest("bad"))


def test_a_refusal_carries_a_kind_and_the_api_maps_every_kind_to_a_status() -> None:
    refused = InvalidRequest("stale", kind=Refusal.stale)
    assert not hasattr(refused, "status")
    assert status_of(refused) == 412
    assert set(STATUS_OF) == set(Refusal)
    assert status_of(InvalidRequest("bad")) == 400


def test_the_client_connection_error_no_longer_shadows_the_builtin() -> None:
    error = client_errors.MnemoConnectionError("refused")
    assert isinstance(error, MnemoError) and isinstance(error, builtins.ConnectionError)
    assert error.transient
    assert client_errors.MnemoError is MnemoError
    assert "ConnectionError" not in mnemo.client.__all__
    assert "ConnectionError" not in client_errors.__all__


def test_the_old_client_name_is_a_deprecated_alias() -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        alias = mnemo.client.ConnectionError  # type: ignore[attr-defined]
    assert alias is client_errors.MnemoConnectionError
    assert any(issubclass(w.category, DeprecationWarning) for w in caught)


@pytest.mark.parametrize(("status", "transient"), [(503, True), (429, True), (409, False)])
def test_api_errors_say_whether_they_are_transient(status: int, transient: bool) -> None:
    assert client_errors.error_for(status, {"detail": "x"}).transient is transient
