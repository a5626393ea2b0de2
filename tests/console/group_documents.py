"""Hypothesis strategies for valid group documents (the body of `PUT /v1/groups/{name}`).

They cover every section of a group: description, topics and their scoping, the pipeline's
step kinds and options, retention, consolidation, reconsolidation, and template groups.
Text is drawn to trouble YAML (multi-line, `yes`, `null`, `: `, `#`, unicode).
"""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import strategies as st

from mnemo.domain.templates import TEMPLATE_NAMES

_TRICKY = st.sampled_from(
    [
        "yes",
        "no",
        "null",
        "~",
        "1.5",
        "0x1f",
        ": colon",
        "# hash",
        "- dash",
        "a\nb",
        "  lead",
        "trail  ",
        "'quoted'",
        '"double"',
        "é ü 漢字 🐝",
        "line\n\nafter blank\n",
        "{a: b}",
        "*ref",
    ]
)
_PLAIN = st.text(
    st.characters(blacklist_categories=("Cc", "Cs"), blacklist_characters="\u2028\u2029\x85"),
    min_size=1,
    max_size=40,
)
TEXT = st.one_of(_TRICKY, _PLAIN, st.builds(lambda a, b: f"{a}\n{b}", _PLAIN, _PLAIN)).filter(
    lambda t: t.strip() != ""
)
NAMES = st.from_regex(r"[a-z][a-z0-9_]{0,12}", fullmatch=True)
SIMILARITY = st.floats(min_value=-1.0, max_value=1.0, allow_nan=False).map(lambda x: round(x, 3))


@st.composite
def topics(draw: st.DrawFn) -> list[dict[str, Any]]:
    names = draw(st.lists(NAMES, min_size=2, max_size=4, unique=True))
    drawn = []
    for i, name in enumerate(names):
        topic: dict[str, Any] = {"name": name, "description": draw(TEXT)}
        # The first two stay per-user episodes and rules, for a consolidation to use.
        user_scoped = True if i < 2 else draw(st.booleans())
        scoping: dict[str, Any] = {"user_scoped": user_scoped}
        if i >= 2 and draw(st.booleans()):
            scoping["scope_properties"] = draw(st.lists(NAMES, min_size=1, max_size=2, unique=True))
        topic["scoping"] = scoping
        if i >= 2:
            topic["is_bounded"] = draw(st.booleans())
        drawn.append(topic)
    return drawn


@st.composite
def pipelines(draw: st.DrawFn, topic_names: list[str]) -> dict[str, Any]:
    steps: list[dict[str, Any]] = []
    extract: dict[str, Any] = {"id": "extract", "kind": "extract", "input_type": "string"}
    if draw(st.booleans()):
        extract["instructions"] = draw(TEXT)
    steps.append(extract)
    if draw(st.booleans()):
        triggers: dict[str, Any] = {"count": draw(st.integers(1, 50))}
        if draw(st.booleans()):
            triggers["idle_seconds"] = draw(st.floats(1, 86_400).map(lambda x: round(x, 1)))
        steps.append({"id": "gather", "kind": "buffer", "triggers": triggers})
    if draw(st.booleans()):
        output = draw(st.lists(st.sampled_from(topic_names), max_size=2, unique=True))
        steps.append(
            {
                "id": "rewrite",
                "kind": "transform",
                "instructions": draw(TEXT),
                "output_topics": output,
            }
        )
    if draw(st.booleans()):
        reconcile: dict[str, Any] = {"id": "reconcile", "kind": "transform_with_context"}
        if draw(st.booleans()):
            reconcile["context_limit"] = draw(st.integers(1, 100))
        if draw(st.booleans()):
            reconcile["min_similarity"] = draw(SIMILARITY)
        if draw(st.booleans()):
            reconcile["instructions"] = draw(TEXT)
        steps.append(reconcile)
    steps.append({"id": "commit", "kind": "commit"})
    for step, following in itertools.pairwise(steps):
        step["next"] = following["id"]
    return {"steps": steps}


@st.composite
def custom_groups(draw: st.DrawFn) -> dict[str, Any]:
    drawn_topics = draw(topics())
    names = [t["name"] for t in drawn_topics]
    pipeline = draw(pipelines(names))
    document: dict[str, Any] = {"topics": drawn_topics, "pipeline": pipeline}
    if draw(st.booleans()):
        document["description"] = draw(TEXT)
    retention = draw(retentions())
    if retention is not None:
        document["retention"] = retention
    if draw(st.booleans()):
        consolidation: dict[str, Any] = {"episode_topics": [names[0]], "rule_topic": names[1]}
        if draw(st.booleans()):
            consolidation["min_episodes"] = draw(st.integers(2, 100))
        if draw(st.booleans()):
            consolidation["similarity"] = draw(SIMILARITY)
        if draw(st.booleans()):
            consolidation["sources"] = draw(st.sampled_from(["consolidate", "keep", "delete"]))
        if draw(st.booleans()):
            consolidation["instructions"] = draw(TEXT)
        document["consolidation"] = consolidation
    if any(s["kind"] == "transform_with_context" for s in pipeline["steps"]) and draw(
        st.booleans()
    ):
        document["reconsolidation"] = {
            "labile_window": draw(st.floats(1, 86_400).map(lambda x: round(x, 2))),
            "only_recalled": draw(st.booleans()),
            "max_per_hour": draw(st.integers(1, 100)),
        }
    return document


@st.composite
def retentions(draw: st.DrawFn) -> dict[str, Any] | None:
    if not draw(st.booleans()):
        return None
    retention: dict[str, Any] = {"drop_raw_input_at_commit": draw(st.booleans())}
    if draw(st.booleans()):
        retention["raw_input_days"] = draw(st.floats(0.01, 36_500).map(lambda x: round(x, 2)))
    return retention


@st.composite
def template_groups(draw: st.DrawFn) -> dict[str, Any]:
    document: dict[str, Any] = {"template": draw(st.sampled_from(TEMPLATE_NAMES))}
    retention = draw(retentions())
    if retention is not None:
        document["retention"] = retention
    return document


GROUP_DOCUMENTS = st.one_of(custom_groups(), template_groups())
