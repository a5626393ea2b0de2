"""Requests of the Engram v1 API (and mnemo's extensions), shared by gateway, SDK and engine."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, Field, field_validator

from mnemo.domain.inputs import AddInput
from mnemo.domain.search import RetrievalType, TopicSelector
from mnemo.domain.wire import WireModel

Properties = dict[str, str]
MemoryId = Annotated[str, Field(min_length=1, max_length=128)]


class _Request(WireModel):
    @field_validator("group", mode="before", check_fields=False)
    @classmethod
    def _default_group(cls, value: object) -> object:
        return "default" if value is None else value


class AddRequest(_Request):
    input: AddInput
    user_id: str | None = Field(default=None, min_length=1, max_length=256)
    group: str = Field(default="default", min_length=1, max_length=64)
    properties: Properties | None = None
    root: str | None = None
    # mnemo extension: the memory ids the agent used for this turn (reconsolidation);
    # without it, the scope's recalls inside the group's labile window count.
    recalled: list[MemoryId] | None = Field(default=None, max_length=100)


class RetrievalConfig(_Request):
    retrieval_type: RetrievalType = "hybrid"
    limit: int | None = Field(default=None, ge=1, le=100)


class SearchRequest(_Request):
    query: str = Field(min_length=1, max_length=10_000)
    topics: list[str | TopicSelector] | None = None
    user_id: str | None = Field(default=None, min_length=1, max_length=256)
    group: str = Field(default="default", min_length=1, max_length=64)
    properties: Properties | None = None
    retrieval_config: RetrievalConfig | None = None
    # mnemo extension: also return consolidated episodes (marked with their rule).
    include_consolidated: bool = False


class ListRequest(_Request):
    topics: list[str | TopicSelector] | None = None
    user_id: str | None = Field(default=None, min_length=1, max_length=256)
    group: str = Field(default="default", min_length=1, max_length=64)
    properties: Properties | None = None
    limit: int = Field(default=20, ge=1, le=100)
    # mnemo extension: also list consolidated episodes (marked with their rule).
    include_consolidated: bool = False


class GroupDocument(_Request):
    """PUT /v1/groups/{name}: a template name, or topics plus a pipeline."""

    template: str | None = None
    description: str = ""
    topics: list[dict[str, object]] | None = None
    pipeline: dict[str, object] | None = None
    # Memory over time (see `mnemo.domain.consolidation` / `mnemo.domain.reconsolidation`).
    consolidation: dict[str, object] | None = None
    reconsolidation: dict[str, object] | None = None

    def as_document(self) -> dict[str, object]:
        """The document `Engine.put_group` takes (unset fields and a blank description left out)."""
        document = self.model_dump(exclude_none=True)
        if not document.get("description"):
            document.pop("description", None)
        return document


ErrorLocation = tuple[str | int, ...]


class FieldError(BaseModel):
    location: str
    message: str
    value: object | None = None


class InvalidRequest(ValueError):
    """A request the engine refuses; nothing was stored. Maps to 400 with named locations."""

    def __init__(
        self,
        detail: str,
        errors: list[FieldError] | None = None,
        status: Literal[400, 404, 409, 413, 503] = 400,
        retry_after: int | None = None,
    ) -> None:
        super().__init__(detail)
        self.detail = detail
        self.errors = errors or []
        self.status = status
        self.retry_after = retry_after  # seconds, for a 503 (the Retry-After header)


class NotFound(LookupError):
    """Missing, or not visible to the caller (never says which)."""
