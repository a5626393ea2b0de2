from __future__ import annotations

import itertools

import pytest

from mnemo.console.graph import Box, columns, layout, pipeline_svg, routes
from mnemo.domain.pipeline import Pipeline
from mnemo.domain.templates import TEMPLATE_NAMES, group_from_template


def _overlap(a: Box, b: Box) -> bool:
    return a.x < b.x + b.w and b.x < a.x + a.w and a.y < b.y + b.h and b.y < a.y + a.h


def test_columns_follow_the_longest_path_and_skips_get_waypoints() -> None:
    pipeline = group_from_template("g", "default").pipeline
    assert columns(pipeline) == [
        ["input:conversation", "input:string", "input:pre_extracted"],
        ["extract_conversation", "extract_string", "pre_extracted"],
        ["reconcile", "via:pre_extracted:2"],
        ["commit"],
    ]
    assert ["pre_extracted", "via:pre_extracted:2", "commit"] in routes(pipeline)
    assert ["input:string", "extract_string"] in routes(pipeline)


@pytest.mark.parametrize("template", TEMPLATE_NAMES)
def test_no_two_boxes_overlap_and_every_link_is_drawn(template: str) -> None:
    pipeline = group_from_template("g", template).pipeline
    boxes, width, height = layout(pipeline)
    for a, b in itertools.combinations(boxes.values(), 2):
        assert not _overlap(a, b), (a, b)
    assert all(
        0 <= b.x and b.x + b.w <= width and 0 <= b.y and b.y + b.h <= height for b in boxes.values()
    )
    svg = pipeline_svg(pipeline, "title")
    links = sum(1 for s in pipeline.steps if s.next) + sum(
        1 for s in pipeline.steps if s.input_type
    )
    assert svg.count('class="edge"') == links
    assert all(f">{s.id}<" in svg for s in pipeline.steps)


def test_a_long_chain_runs_left_to_right() -> None:
    pipeline = Pipeline.model_validate(
        {
            "steps": [
                {
                    "id": "window",
                    "kind": "buffer",
                    "mode": "sliding_window",
                    "input_type": "string",
                    "next": "x",
                },
                {"id": "x", "kind": "extract", "input_type": "conversation", "next": "c"},
                {"id": "c", "kind": "commit"},
            ]
        }
    )
    boxes, _, _ = layout(pipeline)
    assert boxes["window"].x < boxes["x"].x < boxes["c"].x
    assert "buffer · sliding window" in pipeline_svg(pipeline, "t")
    assert "via:input:conversation:1" in boxes  # the conversation input skips the buffer column


def test_the_svg_describes_itself_and_escapes_text() -> None:
    pipeline = group_from_template("g", "default").pipeline
    svg = pipeline_svg(pipeline, "Pipeline of <group>")
    assert '<title id="pipeline-title">Pipeline of &lt;group&gt;</title>' in svg
    assert "string input enters at extract_string" in svg
    assert "pre_extracted (extract) then commit" in svg
