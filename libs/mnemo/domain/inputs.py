"""Raw inputs of an add, in the Engram v1 wire shape."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import Field, model_validator

from mnemo.domain.instant import Instant
from mnemo.domain.limits import NAME_CHARS
from mnemo.domain.wire import WireModel

InputType = Literal["string", "conversation", "pre_extracted"]


class _Strict(WireModel):
    pass


class ToolCallFunction(_Strict):
    name: str
    arguments: str


class ToolCallCustom(_Strict):
    name: str
    input: str


class ToolCall(_Strict):
    id: str
    type: Literal["function", "custom"] = "function"
    function: ToolCallFunction | None = None
    custom: ToolCallCustom | None = None

    @model_validator(mode="after")
    def _matches_type(self) -> ToolCall:
        if self.type == "function" and self.function is None:
            raise ValueError("a tool call of type 'function' needs 'function'")
        if self.type == "custom" and self.custom is None:
            raise ValueError("a tool call of type 'custom' needs 'custom'")
        return self


class Message(_Strict):
    role: Literal["user", "assistant", "system", "tool", "developer"]
    content: str = ""
    name: str | None = None
    tool_call_id: str | None = None
    tool_calls: list[ToolCall] | None = None
    created_at: Instant | None = None

    @property
    def effective_role(self) -> str:
        """Tool results count as user content and developer text as system text."""
        return {"tool": "user", "developer": "system"}.get(self.role, self.role)


class StringInput(_Strict):
    content: list[str] = Field(min_length=1)
    created_at: Instant | None = None
    updated_at: Instant | None = None


class ConversationInput(_Strict):
    messages: list[Message] = Field(min_length=1)
    metadata: dict[str, Any] | None = None
    created_at: Instant | None = None
    updated_at: Instant | None = None


class PreExtractedItem(_Strict):
    content: str = Field(min_length=1)
    topic: str = Field(min_length=1, max_length=NAME_CHARS)


class PreExtractedInput(_Strict):
    items: list[PreExtractedItem] = Field(min_length=1)
    # mnemo extension: when the facts were learned (their event time); defaults to now.
    created_at: Instant | None = None


class AddInput(_Strict):
    """Exactly one of the three input types."""

    string: StringInput | None = None
    conversation: ConversationInput | None = None
    pre_extracted: PreExtractedInput | None = None

    @model_validator(mode="after")
    def _exactly_one(self) -> AddInput:
        given = [
            name for name in ("string", "conversation", "pre_extracted") if getattr(self, name)
        ]
        if len(given) != 1:
            raise ValueError(
                "input must hold exactly one of 'string', 'conversation' or 'pre_extracted'"
                f" (got {len(given)}: {', '.join(given) or 'none'})"
            )
        return self

    @property
    def input_type(self) -> InputType:
        if self.string is not None:
            return "string"
        if self.conversation is not None:
            return "conversation"
        return "pre_extracted"

    def text_units(self) -> list[str]:
        """Each input unit as plain text, for logs, offline extraction and sliding windows."""
        if self.string is not None:
            return list(self.string.content)
        if self.conversation is not None:
            return [f"{m.effective_role}: {m.content}" for m in self.conversation.messages]
        assert self.pre_extracted is not None
        return [item.content for item in self.pre_extracted.items]
