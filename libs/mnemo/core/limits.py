"""The configurable admission limits (`InputLimits`), as located field errors.

Pure functions: each returns every limit a request breaks, so one answer names them all.
Locations are those of the HTTP body (`body.input.pre_extracted.items[3].content`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mnemo.domain.group import GroupConfig
from mnemo.domain.inputs import AddInput
from mnemo.domain.limits import InputLimits
from mnemo.domain.pipeline import ExtractStep, TransformStep, TransformWithContextStep
from mnemo.domain.requests import FieldError
from mnemo.domain.search import TopicSelector


def _texts(raw: AddInput) -> tuple[str, str, list[str]]:
    """(location, noun, texts) of an add's units."""
    if raw.string is not None:
        return "body.input.string.content", "strings", list(raw.string.content)
    if raw.conversation is not None:
        return (
            "body.input.conversation.messages",
            "messages",
            [m.content for m in raw.conversation.messages],
        )
    assert raw.pre_extracted is not None
    return "body.input.pre_extracted.items", "items", [i.content for i in raw.pre_extracted.items]


def add_errors(
    raw: AddInput, properties: Mapping[str, str] | None, limits: InputLimits
) -> list[FieldError]:
    """Units and characters of an add, each pre_extracted item, and its properties."""
    where, noun, texts = _texts(raw)
    errors: list[FieldError] = []
    if raw.pre_extracted is not None:
        for index, text in enumerate(texts):
            item = f"{where}[{index}].content"
            if not text.strip():
                errors.append(FieldError(location=item, message="a memory needs some text"))
            elif len(text) > limits.memory_chars:
                errors.append(
                    FieldError(
                        location=item,
                        message=f"a memory holds at most {limits.memory_chars} characters "
                        f"(got {len(text)})",
                    )
                )
    if len(texts) > limits.add_units:
        errors.append(
            FieldError(
                location=where,
                message=f"at most {limits.add_units} {noun} per add (got {len(texts)})",
            )
        )
    total = sum(len(text) for text in texts)
    if total > limits.add_chars:
        errors.append(
            FieldError(
                location=where,
                message=f"at most {limits.add_chars} characters of text per add (got {total})",
            )
        )
    errors += _property_errors("body.properties", properties, limits)
    return errors


def query_errors(
    topics: Sequence[str | TopicSelector] | None,
    properties: Mapping[str, str] | None,
    limits: InputLimits,
) -> list[FieldError]:
    """Topic selectors and property filters of a search or list."""
    errors = _property_errors("body.properties", properties, limits)
    if topics is None:
        return errors
    if len(topics) > limits.topic_selectors:
        errors.append(
            FieldError(
                location="body.topics",
                message=f"at most {limits.topic_selectors} topic selectors (got {len(topics)})",
            )
        )
        return errors
    for index, selector in enumerate(topics):
        if isinstance(selector, TopicSelector):
            errors += _property_errors(
                f"body.topics[{index}].properties", selector.properties, limits
            )
    return errors


def _property_errors(
    where: str, properties: Mapping[str, object] | None, limits: InputLimits
) -> list[FieldError]:
    if properties is None or len(properties) <= limits.properties:
        return []
    message = f"at most {limits.properties} properties (got {len(properties)})"
    return [FieldError(location=where, message=message)]


def group_errors(group: GroupConfig, limits: InputLimits) -> list[FieldError]:
    """Topics, steps and instructions of a group about to be stored."""
    errors: list[FieldError] = []
    if len(group.topics) > limits.topics_per_group:
        errors.append(
            FieldError(
                location="body.topics",
                message=f"at most {limits.topics_per_group} topics per group "
                f"(got {len(group.topics)})",
            )
        )
    steps = group.pipeline.steps
    if len(steps) > limits.pipeline_steps:
        errors.append(
            FieldError(
                location="body.pipeline.steps",
                message=f"at most {limits.pipeline_steps} steps per pipeline (got {len(steps)})",
            )
        )
    for index, step in enumerate(steps):
        if isinstance(step, ExtractStep | TransformStep | TransformWithContextStep):
            if len(step.instructions) > limits.instructions_chars:
                errors.append(
                    FieldError(
                        location=f"body.pipeline.steps[{index}].instructions",
                        message=f"at most {limits.instructions_chars} characters of "
                        f"instructions per step (got {len(step.instructions)})",
                    )
                )
    return errors
