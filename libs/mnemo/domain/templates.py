"""Group templates shipped as YAML config inside the package."""

from __future__ import annotations

from importlib import resources
from typing import Any

import yaml

from mnemo.domain.group import GroupConfig

TEMPLATE_NAMES = (
    "default",
    "personalization",
    "continual_learning",
    "coding_assistant",
    "daily_rollup",
    "engram_quickstart",
)


def template_document(template: str) -> dict[str, Any]:
    if template not in TEMPLATE_NAMES:
        raise LookupError(f"unknown template '{template}'; known: {', '.join(TEMPLATE_NAMES)}")
    text = resources.files("mnemo.templates").joinpath(f"{template}.yaml").read_text("utf-8")
    document: dict[str, Any] = yaml.safe_load(text)
    return document


def group_from_template(name: str, template: str) -> GroupConfig:
    return GroupConfig.model_validate(
        {**template_document(template), "name": name, "template": template}
    )


def group_from_document(name: str, document: dict[str, Any]) -> GroupConfig:
    """A group from a YAML/JSON document: either `{template}` (with an optional description
    and `retention`) or the full configuration `{topics, pipeline, ...}`.

    A full configuration may also name its `template` (the console's editor shows a
    template group that way): the group keeps that label while its topics, pipeline and
    memory-over-time sections are still the template's, and becomes custom otherwise.
    """
    template = document.get("template")
    if template and "topics" not in document and "pipeline" not in document:
        extra = set(document) - {"template", "description", "retention"}
        if extra:
            raise ValueError(
                f"a template group takes only description and retention (got {sorted(extra)})"
            )
        expanded = {**template_document(template), "name": name}
        if document.get("retention") is not None:
            expanded["retention"] = document["retention"]
        return GroupConfig.model_validate({**expanded, "template": template})
    body = {k: v for k, v in document.items() if k != "template"}
    group = GroupConfig.model_validate({**body, "name": name})
    if template and group.same_shape(group_from_template(name, template)):
        return group.model_copy(update={"template": template})
    return group
