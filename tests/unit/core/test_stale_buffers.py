"""A buffer step the group no longer has, named the same way on both transports."""

from __future__ import annotations

from typing import Any

import pytest

from mnemo.core.stale_buffers import current_buffer
from mnemo.domain.group import GroupConfig
from mnemo.domain.pipeline import MissingStep


def group(hold: dict[str, Any]) -> GroupConfig:
    return GroupConfig.model_validate({
        "name": "notes",
        "topics": [{"name": "Note", "description": "x", "scoping": {"user_scoped": True}}],
        "pipeline": {"steps": [
            {"id": "extract", "kind": "extract", "input_type": "string", "next": hold["id"]},
            {**hold, "next": "commit"},
            {"id": "commit", "kind": "commit"},
        ]},
    })  # fmt: skip


def test_the_buffer_as_the_group_stands() -> None:
    step = current_buffer(group({"id": "hold", "kind": "buffer", "triggers": {"count": 2}}), "hold")
    assert step.id == "hold" and step.triggers is not None and step.triggers.count == 2


def test_a_renamed_buffer_is_missing_naming_step_and_group() -> None:
    renamed = group({"id": "hold_v2", "kind": "buffer", "triggers": {"count": 2}})
    with pytest.raises(MissingStep, match=r"'hold'.*'notes'.*retry"):
        current_buffer(renamed, "hold")


def test_a_step_that_is_no_longer_a_buffer_is_missing() -> None:
    replaced = group({"id": "hold", "kind": "transform", "instructions": "x",
                      "output_topics": ["Note"]})  # fmt: skip
    with pytest.raises(MissingStep, match="'hold' of group 'notes' is no longer a buffer"):
        current_buffer(replaced, "hold")
