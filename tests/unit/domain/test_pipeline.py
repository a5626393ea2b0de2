import pytest
from pydantic import ValidationError

from mnemo.domain.pipeline import Pipeline
from mnemo.domain.templates import TEMPLATE_NAMES, group_from_document, group_from_template


@pytest.mark.parametrize("name", TEMPLATE_NAMES)
def test_templates_are_valid(name: str) -> None:
    group = group_from_template("g", name)
    assert group.pipeline.entry_for("conversation").kind == "extract"


def test_entries_converge_and_root_overrides() -> None:
    pipeline = group_from_template("g", "continual_learning").pipeline
    assert pipeline.entry_for("string").id == "extract_string"
    assert pipeline.following(pipeline.entry_for("string")).id == "collect"  # type: ignore[union-attr]
    assert pipeline.entry_for("string", root="merge").id == "merge"
    with pytest.raises(LookupError):
        pipeline.entry_for("string", root="missing")


@pytest.mark.parametrize(
    "steps, message",
    [
        ([{"id": "a", "kind": "extract", "input_type": "string"}], "does not end in commit"),
        (
            [
                {"id": "a", "kind": "extract", "input_type": "string", "next": "b"},
                {"id": "b", "kind": "transform", "instructions": "x", "next": "a"},
            ],
            "cycle",
        ),
        ([{"id": "a", "kind": "extract", "input_type": "string", "next": "zz"}], "unknown next"),
        ([{"id": "a", "kind": "commit"}], "at least one entry"),
        (
            [
                {"id": "a", "kind": "extract", "input_type": "string", "next": "b"},
                {"id": "b", "kind": "buffer", "next": "c"},
                {"id": "c", "kind": "commit"},
            ],
            "needs triggers",
        ),
    ],
)
def test_malformed_pipelines_are_refused(steps: list[dict[str, object]], message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        Pipeline.model_validate({"steps": steps})


def test_group_document_refuses_unknown_topic_references() -> None:
    with pytest.raises(ValidationError, match="unknown topics"):
        group_from_document(
            "g",
            {
                "topics": [{"name": "A", "description": "a"}],
                "pipeline": {
                    "steps": [
                        {"id": "e", "kind": "extract", "input_type": "string", "next": "b"},
                        {
                            "id": "b",
                            "kind": "buffer",
                            "triggers": {"topics_present": ["B"]},
                            "next": "c",
                        },
                        {"id": "c", "kind": "commit"},
                    ]
                },
            },
        )
