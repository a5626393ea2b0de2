from __future__ import annotations

import pytest

from mnemo.console.group_editor import DocumentRefused, editable_yaml, parse_document, refusal
from mnemo.domain.group import GroupConfig
from mnemo.domain.requests import FieldError, GroupDocument, InvalidRequest
from mnemo.domain.retention import RetentionPolicy
from mnemo.domain.templates import TEMPLATE_NAMES, group_from_document, group_from_template


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_the_editor_text_saves_back_to_the_same_group(template: str) -> None:
    group = group_from_template("g", template)
    text = editable_yaml(group)
    assert "kind: commit" in text and text.split("\n")[0] == f"template: {template}"
    again = group_from_document("g", parse_document(text).as_document())
    assert again == group and again.etag() == group.etag()


def test_the_editor_shows_every_section_a_group_has_now_or_later() -> None:
    """A field added to GroupConfig must be a field of the PUT document too, or the editor
    (which shows every field generically) could show it but never save it back."""
    sections = set(GroupConfig.model_fields) - {"name"}
    assert sections <= set(GroupDocument.model_fields), sections - set(GroupDocument.model_fields)
    group = group_from_template("g", "default").model_copy(
        update={"retention": RetentionPolicy(raw_input_days=30)}
    )
    assert "raw_input_days: 30" in editable_yaml(group)


def test_a_changed_template_group_becomes_custom_and_its_etag_changes() -> None:
    group = group_from_template("g", "default")
    document = parse_document(editable_yaml(group)).as_document()
    document["topics"] = [*document["topics"], {"name": "extra", "description": "More."}]
    changed = group_from_document("g", document)
    assert changed.template is None and changed.etag() != group.etag()


def test_json_is_accepted_too() -> None:
    text = '{"template": "personalization"}'
    assert parse_document(text).as_document() == {"template": "personalization"}


def test_syntax_errors_name_their_line() -> None:
    with pytest.raises(DocumentRefused) as refused:
        parse_document("topics:\n  - name: a\n    description: [unclosed\n")
    (error,) = refused.value.errors
    assert error.location.startswith("line ") and "not valid YAML or JSON" in error.message


def test_a_document_that_is_not_a_mapping_or_has_unknown_fields_is_refused() -> None:
    with pytest.raises(DocumentRefused) as not_mapping:
        parse_document("- just\n- a list\n")
    assert not_mapping.value.errors[0].location == "document"
    with pytest.raises(DocumentRefused) as unknown:
        parse_document("colour: blue\n")
    assert [e.location for e in unknown.value.errors] == ["document.colour"]


def test_engine_refusals_keep_the_validation_locations() -> None:
    document = {
        "topics": [{"name": "a", "description": "A."}],
        "pipeline": {"steps": [{"id": "x", "kind": "extract", "input_type": "string"}]},
    }
    try:
        group_from_document("g", document)
    except ValueError as cause:
        exc = InvalidRequest(
            "invalid group configuration", [FieldError(location="body", message="x")]
        )
        exc.__cause__ = cause
    errors = refusal(exc)
    assert errors[0].location == "document.pipeline"
    assert errors[0].message == "the chain from step 'x' does not end in commit"
    plain = InvalidRequest("nope", [FieldError(location="body.name", message="bad name")])
    assert [(e.location, e.message) for e in refusal(plain)] == [("body.name", "bad name")]


def test_the_etag_ignores_the_sign_of_zero_which_jsonb_drops() -> None:
    document = parse_document(editable_yaml(group_from_template("g", "default"))).as_document()
    document["pipeline"]["steps"][3]["min_similarity"] = -0.0  # type: ignore[index]
    negative = group_from_document("g", document)
    document["pipeline"]["steps"][3]["min_similarity"] = 0.0  # type: ignore[index]
    assert negative.etag() == group_from_document("g", document).etag()
