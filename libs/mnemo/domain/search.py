"""Search and list requests, as the store receives them after validation."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from mnemo.domain.limits import NAME_CHARS, PROPERTY_KEY_CHARS, PROPERTY_VALUE_CHARS

RetrievalType = Literal["vector", "bm25", "hybrid", "fetch"]
PropertyKey = Annotated[str, StringConstraints(max_length=PROPERTY_KEY_CHARS)]
PropertyValue = Annotated[str, StringConstraints(max_length=PROPERTY_VALUE_CHARS)]
# Topic names and step ids follow the same pattern: at most 64 characters.
Name = Annotated[str, StringConstraints(max_length=NAME_CHARS)]


class TopicSelector(BaseModel):
    """A topic to search, with optional per-topic property filters.

    A `None` value clears a filter inherited from the request's `properties`. A string value
    is allowed only for a key the topic is scoped by (see `mnemo.store.tenancy`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: Name
    properties: dict[PropertyKey, PropertyValue | None] | None = None


class MemoryQuery(BaseModel):
    """Which memories a search or list may see. Scores: higher is better, in [0, 1]."""

    model_config = ConfigDict(frozen=True)

    project: str
    group: str
    topics: tuple[TopicSelector, ...]
    user_id: str | None = None
    properties: dict[str, str] = Field(default_factory=dict)
    limit: int = Field(default=10, ge=1, le=100)
    text: str = ""
    retrieval_type: RetrievalType = "hybrid"
    # The least vector similarity, (cos + 1) / 2, of a hit (vector and hybrid; None: any).
    min_similarity: float | None = Field(default=None, ge=0, le=1)
    # A system time: answer from the memories as they stood then (None: as they are now).
    as_of: datetime | None = None
    # Also match consolidated episodes (an explicit search and list option).
    include_consolidated: bool = False
