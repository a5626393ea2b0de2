"""Extract atomic memories that match the group's topics from one input."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from pydantic import BaseModel, Field

from mnemo.contracts.llm import ChatMessage, Prompt


class TopicBrief(BaseModel):
    name: str
    description: str
    is_bounded: bool = False
    # A bounded topic's current memory in this scope: the answer must return it updated.
    current: str | None = None
    # Consolidation writes this topic's memories (its rule topic). The offline heuristics
    # route nothing there while another topic can take a sentence; a model reads the
    # description, as before.
    learned: bool = False
    # Consolidation reads this topic as episodes (things that happened). The offline
    # heuristics route a present-tense statement about the user ("User works as a nurse.")
    # elsewhere when another topic can take it.
    episodic: bool = False


class DatedUnit(BaseModel):
    """One unit of the input ("role: content" for a conversation, or a plain string) and
    when it was written (its event time)."""

    text: str
    at: datetime


class Context(BaseModel):
    topics: list[TopicBrief]
    input_type: str
    units: list[DatedUnit]
    # Earlier inputs of the same scope (sliding window), for reference only.
    window: list[str] = Field(default_factory=list)
    instructions: str = ""

    @property
    def reference_time(self) -> datetime | None:
        """The input's own "now": its latest unit's time."""
        return max((u.at for u in self.units), default=None)


class ExtractedMemory(BaseModel):
    topic: str
    content: str
    # Indexes of the input units the memory rests on; empty means the whole input.
    evidence: list[int] = Field(default_factory=list)


class Response(BaseModel):
    memories: list[ExtractedMemory]


def stamp(at: datetime) -> str:
    """A time as the prompts show it: minutes, in UTC."""
    return at.astimezone(UTC).strftime("%Y-%m-%dT%H:%MZ")


def messages(ctx: Context) -> list[ChatMessage]:
    topics = "\n".join(
        f"- {t.name}{' (bounded: exactly one memory, return it complete and updated)' if t.is_bounded else ''}: "
        f"{t.description}" + (f"\n  current: {t.current}" if t.current else "")
        for t in ctx.topics
    )
    reference = ctx.reference_time
    system = (
        "You maintain an AI agent's long-term memory. Extract atomic, self-contained memories "
        "from the input that match one of the topics below. Write each in the third person, "
        "referring to the user as 'User' (e.g. 'User works from home.'). Skip small talk, "
        "questions and anything that matches no topic. For a bounded topic return at most one "
        "memory: its full updated content, merging the current content with the new facts.\n"
        "input_times[i] (UTC) is when input[i] was written. Resolve relative dates in a line "
        "('yesterday', 'last spring') against that line's own time and write them as absolute "
        "dates. Give each memory its evidence: the indexes of the input lines it rests on.\n"
        + (f"The input was written up to {stamp(reference)} UTC.\n" if reference else "")
        + f"Topics:\n{topics}"
        + (f"\nAdditional instructions: {ctx.instructions}" if ctx.instructions else "")
    )
    body: dict[str, object] = {
        "input_type": ctx.input_type,
        "input": [u.text for u in ctx.units],
        "input_times": [stamp(u.at) for u in ctx.units],
    }
    if ctx.window:
        body["earlier_context_do_not_extract"] = ctx.window
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": json.dumps(body, ensure_ascii=False)},
    ]


PROMPT = Prompt(name="extract", context_model=Context, response_model=Response, messages=messages)
