"""A group's retention policy: validated with the group, `max_age` from the days."""

from __future__ import annotations

from datetime import timedelta

import pytest
from pydantic import ValidationError

from mnemo.domain.retention import RetentionPolicy
from mnemo.domain.templates import group_from_document


def test_defaults_keep_raw_input() -> None:
    policy = RetentionPolicy()
    assert policy.max_age is None and not policy.drop_raw_input_at_commit


def test_fractional_days_are_allowed() -> None:
    assert RetentionPolicy(raw_input_days=0.5).max_age == timedelta(hours=12)


@pytest.mark.parametrize("days", [0, -1, 36_501])
def test_days_out_of_range_are_refused(days: float) -> None:
    with pytest.raises(ValidationError):
        RetentionPolicy(raw_input_days=days)


def test_a_group_document_carries_its_retention() -> None:
    group = group_from_document("g", {"template": "default", "retention": {"raw_input_days": 7}})
    assert group.retention.raw_input_days == 7
    assert group_from_document("h", {"template": "default"}).retention == RetentionPolicy()
