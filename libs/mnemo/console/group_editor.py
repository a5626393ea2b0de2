"""A group's configuration as editable YAML, and the editor's text back to a document.

Saving goes through `GroupDocument` and `Engine.put_group`, as `PUT /v1/groups/{name}`
does; every error comes back as (location, message) pairs for the editor to show.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import yaml
from pydantic import ValidationError

from mnemo.api.problem_documents import location_of
from mnemo.domain.group import GroupConfig
from mnemo.domain.requests import GroupDocument, InvalidRequest


@dataclass(frozen=True)
class EditorError:
    location: str
    message: str


class DocumentRefused(ValueError):
    def __init__(self, errors: list[EditorError]) -> None:
        super().__init__("; ".join(e.message for e in errors))
        self.errors = errors


class _Dumper(yaml.SafeDumper):
    """Multi-line text (template descriptions) as `|` blocks, not quoted one-liners."""


def _text(dumper: yaml.SafeDumper, value: str) -> yaml.ScalarNode:
    style = "|" if "\n" in value else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


_Dumper.add_representer(str, _text)


def editable_document(group: GroupConfig) -> dict[str, Any]:
    """The whole stored group as a PUT document, defaults left out.

    Generic over GroupConfig's fields, so a section added to groups later is shown (and
    saved back) without touching the editor; only the name (the URL's) is left out. Step
    kinds are kept although they are their models' defaults: they say which step it is.
    """
    document = group.model_dump(mode="json", exclude={"name"}, exclude_defaults=True)
    document["pipeline"] = {
        **document["pipeline"],
        "steps": [
            {"id": s.id, "kind": s.kind, **s.model_dump(mode="json", exclude_defaults=True)}
            for s in group.pipeline.steps
        ],
    }
    # A template group's label first: it reads as "this came from ...".
    first = {"template": document.pop("template")} if "template" in document else {}
    return {**first, **document}


def editable_yaml(group: GroupConfig) -> str:
    """The group as the YAML a user would write (see `editable_document`)."""
    return yaml.dump(
        editable_document(group), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=90
    )


def _pydantic_errors(exc: ValidationError, root: str) -> list[EditorError]:
    return [
        EditorError(
            location_of((root, *e["loc"])) if e["loc"] else root,
            str(e["msg"]).removeprefix("Value error, "),
        )
        for e in exc.errors()
    ]


def parse_document(text: str) -> GroupDocument:
    """YAML (or JSON, which YAML reads too) to the request body of `PUT /v1/groups/{name}`."""
    try:
        raw = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f"line {mark.line + 1}, column {mark.column + 1}" if mark else "document"
        problem = getattr(exc, "problem", None) or str(exc)
        raise DocumentRefused([EditorError(where, f"not valid YAML or JSON: {problem}")]) from exc
    if not isinstance(raw, dict):
        raise DocumentRefused(
            [EditorError("document", "expected a mapping with topics and pipeline, or a template")]
        )
    try:
        return GroupDocument.model_validate(raw)
    except ValidationError as exc:
        raise DocumentRefused(_pydantic_errors(exc, "document")) from exc


def refusal(exc: InvalidRequest) -> list[EditorError]:
    """The engine's refusal, with the validation's own locations when it has them."""
    cause = exc.__cause__
    if isinstance(cause, ValidationError):
        return _pydantic_errors(cause, "document")
    if cause is not None:
        return [EditorError("document", str(cause))]
    return [EditorError(e.location, e.message) for e in exc.errors] or [
        EditorError("document", exc.detail)
    ]
