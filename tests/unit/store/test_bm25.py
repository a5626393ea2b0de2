"""A search's WHERE clause, written against `memories`, moved onto the postings table."""

from __future__ import annotations

import pytest
from sqlalchemy.dialects import postgresql

from mnemo.domain.group import GroupConfig
from mnemo.domain.search import MemoryQuery, TopicSelector
from mnemo.store.bm25 import on_terms
from mnemo.store.schema import memories
from mnemo.store.tenancy import visible_memories

GROUP = GroupConfig.model_validate(
    {
        "name": "g",
        "topics": [
            {"name": "Mine", "description": "x", "scoping": {"user_scoped": True}},
            {"name": "Team", "description": "x", "scoping": {"scope_properties": ["team"]}},
        ],
        "pipeline": {"steps": [{"id": "c", "kind": "commit", "input_type": "pre_extracted"}]},
    }
)


def _sql(clause: object) -> str:
    return str(clause.compile(dialect=postgresql.dialect()))  # type: ignore[attr-defined]


def test_every_filter_of_a_search_reads_the_postings_columns() -> None:
    query = MemoryQuery(
        project="p",
        group="g",
        user_id="ana",
        properties={"team": "red"},
        topics=(TopicSelector(name="Mine"), TopicSelector(name="Team")),
    )
    moved = _sql(on_terms(visible_memories(query, GROUP)))
    for column in ("project", '"group"', "status", "topic", "user_id", "properties"):
        assert f"memory_terms.{column}" in moved
    assert "memories." not in moved


def test_a_column_the_postings_do_not_copy_is_refused() -> None:
    with pytest.raises(ValueError, match=r"memories\.content"):
        on_terms(memories.c.content == "x")
    assert _sql(on_terms(memories.c.id == "m")).startswith("memory_terms.memory_id =")
