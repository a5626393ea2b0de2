"""The offline twin of extract_reconcile answers as the extract and reconcile heuristics
answer in two calls."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mnemo.embeddings.hashing import HashEmbedder
from mnemo.llm.offline import OfflineLLM
from mnemo.prompts import extract
from mnemo.prompts import extract_reconcile as combined
from mnemo.prompts import transform_with_context as twc

AT = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)
TOPICS = [extract.TopicBrief(name="UserKnowledge", description="Facts about the user.")]


@pytest.mark.parametrize(
    ("existing", "said"),
    [
        (["User prefers dark mode."], "I prefer light mode now."),
        (["User lives in Riga."], "I live in Riga."),
        (["User works from home."], "I have a dog named Rex."),
    ],
)
async def test_one_call_answers_as_the_two_calls(existing: list[str], said: str) -> None:
    llm = OfflineLLM(HashEmbedder())
    context = extract.Context(
        topics=TOPICS, input_type="string", units=[extract.DatedUnit(text=said, at=AT)]
    )
    shown = [
        twc.ExistingMemory(id=f"m{i}", topic="UserKnowledge", content=c)
        for i, c in enumerate(existing)
    ]
    extracted = await llm.complete(extract.PROMPT, context)
    assert extracted.memories, "the heuristics extract the sentence"
    new = [
        twc.NewMemory(index=i, topic=m.topic, content=m.content, event_time=AT)
        for i, m in enumerate(extracted.memories)
    ]
    two = await llm.complete(twc.PROMPT, twc.Context(instructions="", existing=shown, new=new))
    one = await llm.complete(combined.PROMPT, combined.Context(extract=context, existing=shown))
    kept = [
        m.content
        for i, m in enumerate(extracted.memories)
        if next((d.action for d in two.new if d.index == i), "keep") == "keep"
    ]
    assert [m.content for m in one.memories] == kept
    assert one.existing == two.existing
