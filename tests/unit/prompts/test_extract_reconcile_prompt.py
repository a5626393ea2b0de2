"""The combined prompt is the extract prompt plus the close memories and the verdicts."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from mnemo.prompts import extract
from mnemo.prompts import extract_reconcile as combined
from mnemo.prompts import transform_with_context as twc

MONDAY = datetime(2025, 3, 10, 14, 0, tzinfo=UTC)


def _context(instructions: str = "") -> combined.Context:
    return combined.Context(
        extract=extract.Context(
            topics=[extract.TopicBrief(name="Facts", description="facts")],
            input_type="string",
            units=[extract.DatedUnit(text="I moved to Oslo.", at=MONDAY)],
        ),
        existing=[
            twc.ExistingMemory(
                id="m1", topic="Facts", content="User lives in Riga.", event_time=MONDAY
            )
        ],
        reconcile_instructions=instructions,
    )


def test_the_extract_prompt_with_the_existing_memories_shown() -> None:
    context = _context()
    system, user = combined.messages(context)
    plain_system, plain_user = extract.messages(context.extract)
    assert system["content"].startswith(plain_system["content"])
    assert "EXISTING" in system["content"] and "'rewrite'" in system["content"]
    body = json.loads(user["content"])
    assert {k: v for k, v in body.items() if k != "existing"} == json.loads(plain_user["content"])
    assert body["existing"] == [
        {"id": "m1", "topic": "Facts", "content": "User lives in Riga.",
         "event_time": "2025-03-10T14:00Z"}
    ]  # fmt: skip
    assert "Reconcile instructions" not in system["content"]
    assert (
        "Reconcile instructions: be brief" in combined.messages(_context("be brief"))[0]["content"]
    )


def test_the_size_counts_every_message_and_the_answer_validates() -> None:
    context = _context()
    assert combined.size(context) == sum(len(m["content"]) for m in combined.messages(context))
    answer = combined.PROMPT.response_model.model_validate(
        {"memories": [{"topic": "Facts", "content": "User lives in Oslo."}],
         "existing": [{"id": "m1", "action": "delete"}]}
    )  # fmt: skip
    assert answer.existing[0].action == "delete" and answer.memories[0].evidence == []
    assert combined.Response.model_validate({}).memories == []
