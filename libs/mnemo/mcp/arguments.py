"""Typed tool arguments and results, with the descriptions an agent reads.

Limits match the REST API's, so a value the gateway would refuse is refused here first.
Results reuse the gateway's response models (timestamps in RFC 3339 UTC).
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, Field

from mnemo.api.schemas import MemoryOut
from mnemo.client.requests import MAX_SERVER_WAIT
from mnemo.domain.search import TopicSelector
from mnemo.domain.text import refuse_unstorable_text

Text = Annotated[str, AfterValidator(refuse_unstorable_text)]

UserId = Annotated[
    Text | None,
    Field(
        min_length=1,
        max_length=256,
        description="The user the memories belong to. Required by user-scoped topics, whose "
        "memories no other user_id can see (case-insensitive). Omit for shared topics.",
    ),
]
Group = Annotated[
    Text,
    Field(
        min_length=1,
        max_length=64,
        description="The group: an isolated set of topics with its own pipeline. "
        "See list_groups (or the mnemo://groups resource) for the groups and their topics.",
    ),
]
Properties = Annotated[
    dict[str, Text] | None,
    Field(
        description='Scope properties, e.g. {"conversation_id": "c-42"}. Adds must carry '
        "every property the group's topics are scoped by; searches and lists filter by them.",
    ),
]
Topics = Annotated[
    list[str | TopicSelector] | None,
    Field(
        description="Topic names to look in (default: every topic of the group). An object "
        "{name, properties} narrows one topic by properties; a null value clears a filter "
        "inherited from `properties`.",
    ),
]
MemoryId = Annotated[
    Text, Field(min_length=1, max_length=256, description="A memory id from search or list.")
]
RunId = Annotated[
    Text, Field(min_length=1, max_length=256, description="The run_id that add_memory returned.")
]
WaitSeconds = Annotated[
    float,
    Field(
        ge=0,
        le=MAX_SERVER_WAIT,
        description="Wait up to this many seconds for the run to complete or fail (0: answer "
        "at once). The run is returned as it stands when the wait ends.",
    ),
]
Retrieval = Annotated[
    Literal["hybrid", "vector", "bm25", "fetch"],
    Field(
        description="hybrid (default): meaning and keywords fused; vector: meaning only; bm25: "
        "keywords only; fetch: the topics' memories of the scope without a query (bounded "
        "ones such as a user profile first, then the newest).",
    ),
]


class MemoryList(BaseModel):
    """A page of memories, newest first."""

    memories: list[MemoryOut]
    total: int = Field(description="How many memories match in all.")
    offset: int
    next_offset: int | None = Field(
        description="Pass as `offset` for the next page; null on the last page."
    )


class Deleted(BaseModel):
    memory_id: str
    erased: bool = Field(description="True: erased for good; false: deleted, history kept.")
