"""Requests of the Engram v1 API (and mnemo's extensions), shared by gateway, SDK and engine."""

from __future__ import annotations

from enum import StrEnum
from typing import Annotated

from pydantic import BaseModel, Field, field_validator, model_validator

from mnemo.domain.inputs import AddInput
from mnemo.domain.instant import AwareInstant
from mnemo.domain.limits import DESCRIPTION_CHARS
from mnemo.domain.paging import CURSOR, CURSOR_CHARS
from mnemo.domain.scope import UserId
from mnemo.domain.search import Name, PropertyKey, PropertyValue, RetrievalType, TopicSelector
from mnemo.domain.wire import WireModel
from mnemo.errors import MnemoError

Properties = dict[PropertyKey, PropertyValue]
MemoryId = Annotated[str, Field(min_length=1, max_length=128)]
AS_OF = (
    "mnemo extension: an RFC 3339 system time with its offset (e.g. 2026-01-01T12:00:00Z). "
    "Answers from the memories as they stood at that time, earlier versions included: a "
    "memory rewritten later shows its content of then, one created later is absent, one "
    "deleted later is present. Omitted: the current memories."
)


class _Request(WireModel):
    @field_validator("group", mode="before", check_fields=False)
    @classmethod
    def _default_group(cls, value: object) -> object:
        return "default" if value is None else value


def _legacy_conversation_id(data: object) -> object:
    """weaviate-engram before 0.6 sent `conversation_id` beside `properties`: it is the
    `conversation_id` property (a filter or scope only where a topic is scoped by it)."""
    if isinstance(data, dict) and "conversation_id" in data:
        data = dict(data)
        conversation = data.pop("conversation_id")
        if conversation is not None:
            properties = dict(data.get("properties") or {})
            properties.setdefault("conversation_id", conversation)
            data["properties"] = properties
    return data


def _legacy_content(content: object) -> object:
    """weaviate-engram before 0.5 sent `content: {type, ...}` where `input` is now."""
    if not isinstance(content, dict):
        return content
    kind = content.get("type")
    if kind == "string":
        text = content.get("content")
        return {"string": {"content": [text] if isinstance(text, str) else text}}
    if kind == "conversation":
        return {"conversation": content.get("conversation")}
    if kind == "pre_extracted" and content.get("topic"):
        return {"pre_extracted": {"items": [{"content": content.get("content"),
                                             "topic": content["topic"]}]}}  # fmt: skip
    return content  # refused by `input`'s own schema, naming what is wrong


class AddRequest(_Request):
    @model_validator(mode="before")
    @classmethod
    def _older_sdks(cls, data: object) -> object:
        data = _legacy_conversation_id(data)
        if isinstance(data, dict) and "content" in data and "input" not in data:
            data = dict(data)
            data["input"] = _legacy_content(data.pop("content"))
        return data

    input: AddInput
    user_id: UserId | None = None
    group: str = Field(default="default", min_length=1, max_length=64)
    properties: Properties | None = None
    root: Name | None = None
    # mnemo extension: the memory ids the agent used for this turn (reconsolidation);
    # without it, the scope's recalls inside the group's labile window count.
    recalled: list[MemoryId] | None = Field(default=None, max_length=100)


MIN_SCORE = (
    "mnemo extension: the least vector similarity, (cosine + 1) / 2, a hit must have (vector "
    "and hybrid modes). Unlike hybrid scores, which rank a query's candidates against each "
    "other, it means the same for every query; in hybrid mode a hit outside the vector "
    "list's candidates is dropped. The order of what is kept does not change."
)


class RetrievalConfig(_Request):
    retrieval_type: RetrievalType = "hybrid"
    limit: int | None = Field(default=None, ge=1, le=100)
    min_score: float | None = Field(default=None, ge=0, le=1, description=MIN_SCORE)

    @model_validator(mode="after")
    def _min_score_needs_vectors(self) -> RetrievalConfig:
        if self.min_score is not None and self.retrieval_type not in ("vector", "hybrid"):
            raise ValueError(
                f"min_score applies to vector and hybrid retrieval, not {self.retrieval_type}"
            )
        return self


class SearchRequest(_Request):
    @model_validator(mode="before")
    @classmethod
    def _older_sdks(cls, data: object) -> object:
        return _legacy_conversation_id(data)

    query: str = Field(min_length=1, max_length=10_000)
    topics: list[Name | TopicSelector] | None = None
    user_id: UserId | None = None
    group: str = Field(default="default", min_length=1, max_length=64)
    properties: Properties | None = None
    retrieval_config: RetrievalConfig | None = None
    as_of: AwareInstant | None = Field(default=None, description=AS_OF)
    # mnemo extension: also return consolidated episodes (marked with their rule).
    include_consolidated: bool = False


class ListRequest(_Request):
    topics: list[Name | TopicSelector] | None = None
    user_id: UserId | None = None
    group: str = Field(default="default", min_length=1, max_length=64)
    properties: Properties | None = None
    limit: int = Field(default=20, ge=1, le=100)
    # mnemo extension: skip this many (newest first) to page through all matches.
    offset: int = Field(default=0, ge=0)
    as_of: AwareInstant | None = Field(default=None, description=AS_OF)
    # mnemo extension: also list consolidated episodes (marked with their rule).
    include_consolidated: bool = False
    cursor: str | None = Field(
        default=None, min_length=1, max_length=CURSOR_CHARS, description=CURSOR
    )


class GroupDocument(_Request):
    """PUT /v1/groups/{name}: a template name, or topics plus a pipeline."""

    template: str | None = None
    description: str = Field(default="", max_length=DESCRIPTION_CHARS)
    topics: list[dict[str, object]] | None = None
    pipeline: dict[str, object] | None = None
    # {raw_input_days, drop_raw_input_at_commit}: see mnemo.domain.retention.
    retention: dict[str, object] | None = None
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


def location_of(loc: ErrorLocation | list[str | int]) -> str:
    """('body', 'items', 0, 'topic') -> 'body.items[0].topic'."""
    text = ""
    for part in loc:
        text += f"[{part}]" if isinstance(part, int) else (f".{part}" if text else str(part))
    return text


class FieldError(BaseModel):
    location: str
    message: str
    value: object | None = None


class Refusal(StrEnum):
    """Why a request is refused; the HTTP API answers each with its status (`mnemo.api.problems`)."""

    invalid = "invalid"  # malformed or contradictory
    missing = "missing"  # what it names does not exist
    conflict = "conflict"  # it does not fit the resource's state (a retried completed run)
    stale = "stale"  # the resource changed since the caller read it (If-Match)
    too_large = "too_large"  # over a size limit of the whole request
    unprocessable = "unprocessable"  # well-formed, but over a limit or naming the unknown
    overloaded = "overloaded"  # the caller sends faster than its share: slow down
    unavailable = "unavailable"  # the pipeline did not take it now: retry later


class InvalidRequest(MnemoError, ValueError):
    """A request the engine refuses; nothing was stored. `kind` says why (`invalid` unless
    said otherwise), with named locations; `retry_after` in seconds, when waiting helps."""

    def __init__(
        self,
        detail: str,
        errors: list[FieldError] | None = None,
        kind: Refusal = Refusal.invalid,
        retry_after: int | None = None,
    ) -> None:
        self.errors = errors or []
        # str() (a failed run's error, a log line) names the fields; `detail` alone is
        # the problem document's detail.
        named = "; ".join(f"{e.location}: {e.message}" for e in self.errors)
        super().__init__(f"{detail} ({named})" if named else detail)
        self.detail = detail
        self.kind = kind
        self.retry_after = retry_after


class NotFound(MnemoError, LookupError):
    """Missing, or not visible to the caller (never says which)."""
