"""Models the clients take and return. Wire shapes reuse `mnemo.domain` and the API schemas."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pydantic import BaseModel

from mnemo.api.schemas import GroupSummary
from mnemo.domain.group import GroupConfig
from mnemo.domain.inputs import (
    AddInput,
    ConversationInput,
    Message,
    PreExtractedInput,
    PreExtractedItem,
    StringInput,
    ToolCall,
)
from mnemo.domain.memory import Memory, MemoryVersion, Run, RunState
from mnemo.domain.provenance import Provenance, RunSource, VersionProvenance
from mnemo.domain.search import RetrievalType, TopicSelector

__all__ = [
    "AddInput",
    "AddResult",
    "BM25Retrieval",
    "ConversationInput",
    "FetchRetrieval",
    "GroupConfig",
    "GroupSummary",
    "HybridRetrieval",
    "InputLike",
    "Memory",
    "MemoryVersion",
    "Message",
    "PreExtractedInput",
    "PreExtractedItem",
    "Provenance",
    "RetrievalConfig",
    "Run",
    "RunSource",
    "RunState",
    "SearchResults",
    "StringInput",
    "ToolCall",
    "Topic",
    "VectorRetrieval",
    "VersionProvenance",
    "retrieval",
]

Topic = TopicSelector


@dataclass(frozen=True)
class _Retrieval:
    limit: int | None = None
    retrieval_type: RetrievalType = "hybrid"

    def wire(self) -> dict[str, Any]:
        return {"retrieval_type": self.retrieval_type, "limit": self.limit}


def _with_floor(wire: dict[str, Any], min_score: float | None) -> dict[str, Any]:
    # sent only when set: Engram servers do not know it
    return wire if min_score is None else {**wire, "min_score": min_score}


@dataclass(frozen=True)
class VectorRetrieval(_Retrieval):
    retrieval_type: Literal["vector"] = "vector"
    # mnemo extension: the least vector similarity, (cos + 1) / 2, of a hit.
    min_score: float | None = None

    def wire(self) -> dict[str, Any]:
        return _with_floor(super().wire(), self.min_score)


@dataclass(frozen=True)
class BM25Retrieval(_Retrieval):
    retrieval_type: Literal["bm25"] = "bm25"


@dataclass(frozen=True)
class HybridRetrieval(_Retrieval):
    retrieval_type: Literal["hybrid"] = "hybrid"
    # mnemo extension: the least vector similarity, (cos + 1) / 2, of a hit; hybrid's own
    # scores are relative to each query's candidates (docs/guides/search.md#scores).
    min_score: float | None = None

    def wire(self) -> dict[str, Any]:
        return _with_floor(super().wire(), self.min_score)


@dataclass(frozen=True)
class FetchRetrieval(_Retrieval):
    """Every memory of the selected topics (e.g. a bounded profile), no ranking."""

    retrieval_type: Literal["fetch"] = "fetch"


RetrievalConfig = VectorRetrieval | BM25Retrieval | HybridRetrieval | FetchRetrieval

_RETRIEVALS: dict[str, type[RetrievalConfig]] = {
    "vector": VectorRetrieval,
    "bm25": BM25Retrieval,
    "hybrid": HybridRetrieval,
    "fetch": FetchRetrieval,
}


def retrieval(kind: str, limit: int | None = None) -> RetrievalConfig:
    """The retrieval config named `kind` (vector, bm25, hybrid or fetch)."""
    try:
        return _RETRIEVALS[kind](limit=limit)
    except KeyError:
        raise ValueError(f"unknown retrieval type {kind!r}; one of {sorted(_RETRIEVALS)}") from None


# What `memories.add` accepts: text, texts, OpenAI-style message dicts, or a typed input.
InputLike = (
    str
    | Sequence[str]
    | Sequence[Mapping[str, Any]]
    | StringInput
    | ConversationInput
    | PreExtractedInput
    | AddInput
)


class AddResult(BaseModel):
    """What an add returns at once: the run to poll."""

    run_id: str
    status: RunState
    error: str | None = None


class SearchResults(Sequence[Memory]):
    """A list of memories plus `total` (all matches for list, the returned count for search)
    and, for a list with more to come, `next_cursor` (mnemo extension: pass it as `cursor`)."""

    def __init__(self, memories: list[Memory], total: int, next_cursor: str | None = None) -> None:
        self.memories = memories
        self.total = total
        self.next_cursor = next_cursor

    def __getitem__(self, index: int) -> Memory:  # type: ignore[override]
        return self.memories[index]

    def __len__(self) -> int:
        return len(self.memories)

    def __iter__(self) -> Iterator[Memory]:
        return iter(self.memories)

    def __repr__(self) -> str:
        return f"SearchResults(total={self.total}, returned={len(self.memories)})"
