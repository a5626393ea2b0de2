"""The reconsolidation gate: does new evidence match, extend or contradict a recalled memory?

Each recalled memory is shown with the add's input and the memories extracted from it. The
answer classifies every recalled memory and quotes the span of the input it rests on; mnemo
writes a rewrite only if that quote really occurs in the input (`mnemo.steps.evidence`).
"""

from __future__ import annotations

import json

from pydantic import BaseModel, Field

from mnemo.contracts.llm import ChatMessage, Prompt
from mnemo.domain.reconsolidation import GateVerdict


class RecalledMemory(BaseModel):
    id: str
    topic: str
    content: str


class NewMemory(BaseModel):
    index: int
    topic: str
    content: str


class Context(BaseModel):
    # The add's input as the user gave it (strings, or "role: text" lines).
    input: list[str]
    new: list[NewMemory]
    recalled: list[RecalledMemory]


class Verdict(BaseModel):
    id: str
    decision: GateVerdict
    # The exact words of the input this decision rests on (copied, not paraphrased).
    evidence: str = ""
    # extend / contradict: the recalled memory's full new content.
    content: str | None = None
    # The new memories this decision accounts for (they are not stored on their own).
    covers: list[int] = Field(default_factory=list)


class Response(BaseModel):
    verdicts: list[Verdict]


def messages(ctx: Context) -> list[ChatMessage]:
    system = (
        "An AI agent recalled the RECALLED memories and then received the INPUT. For each "
        "recalled memory decide how the input bears on it:\n"
        "- 'match': the input restates or confirms it; nothing changes;\n"
        "- 'extend': the input adds a detail that does not conflict; give the full rewritten "
        "content with the added clause;\n"
        "- 'contradict': the input corrects it; give the full rewritten content stating what "
        "is true now;\n"
        "- 'unrelated': the input says nothing about it.\n"
        "For every decision but 'unrelated', copy into 'evidence' the exact words of the "
        "input that justify it (a verbatim span, no paraphrase), and list in 'covers' the "
        "indexes of the NEW memories the decision accounts for. Keep the memory's own wording "
        "and detail where the input does not change it."
    )
    body = {
        "input": ctx.input,
        "new": [m.model_dump() for m in ctx.new],
        "recalled": [m.model_dump() for m in ctx.recalled],
    }
    return [
        {"role": "system", "content": system},
        {"role": "user", "content": json.dumps(body, ensure_ascii=False)},
    ]


PROMPT = Prompt(
    name="reconsolidate", context_model=Context, response_model=Response, messages=messages
)
