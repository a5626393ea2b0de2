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
    """A group from a YAML/JSON document: either `{template}` or `{topics, pipeline}`, each
    with an optional `retention`."""
    if "template" in document and document.get("template"):
        extra = set(document) - {"template", "description", "retention"}
        if extra:
            raise ValueError(
                f"a template group takes only description and retention (got {sorted(extra)})"
            )
        template = {**template_document(document["template"]), "name": name}
        if document.get("retention") is not None:
            template["retention"] = document["retention"]
        return GroupConfig.model_validate({**template, "template": document["template"]})
    return GroupConfig.model_validate({**document, "name": name})
