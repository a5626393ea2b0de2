"""The offline provider's `transform` heuristics."""

from __future__ import annotations

from datetime import UTC, datetime

from mnemo.embeddings.hashing import HashEmbedder
from mnemo.llm.offline import OfflineLLM
from mnemo.prompts import transform
from mnemo.prompts.extract import TopicBrief

EXPERIENCE = TopicBrief(name="experience", description="A reusable lesson.")
NEEDS_FEEDBACK = "Combine them into ONE experience. Write nothing if there is no feedback."


def _context(items: list[tuple[str, str]], instructions: str = NEEDS_FEEDBACK):
    return transform.Context(
        instructions=instructions,
        output_topics=[EXPERIENCE],
        items=[transform.Item(topic=t, content=c) for t, c in items],
    )


async def test_continual_learning_fragments_become_one_experience() -> None:
    context = _context(
        [
            ("task_goal", "Book a flight to Paris."),
            ("actions_taken", "Searched flights on Skyscanner."),
            ("actions_taken", "Picked the cheapest flight."),
            ("feedback", "User wanted a direct flight, not the cheapest one."),
        ]
    )
    answer = await OfflineLLM(HashEmbedder()).complete(transform.PROMPT, context)
    assert [(m.topic, m.content) for m in answer.memories] == [
        (
            "experience",
            "When asked to book a flight to Paris, after the agent searched flights on "
            "Skyscanner; picked the cheapest flight: User wanted a direct flight, not the "
            "cheapest one.",
        )
    ]


async def test_no_feedback_means_no_memory_when_instructed() -> None:
    context = _context([("task_goal", "Book a flight."), ("actions_taken", "Searched flights.")])
    answer = await OfflineLLM(HashEmbedder()).complete(transform.PROMPT, context)
    assert answer.memories == []


async def test_generic_batch_is_joined_into_one_memory() -> None:
    context = _context(
        [("Activity", "User wrote a report."), ("Activity", "User went for a run.")],
        instructions="Summarize the day's activities into ONE memory.",
    )
    answer = await OfflineLLM(HashEmbedder()).complete(transform.PROMPT, context)
    assert [m.content for m in answer.memories] == ["User wrote a report; User went for a run."]


async def test_a_dated_rollup_starts_with_the_day_its_items_happened() -> None:
    day = TopicBrief(name="DailyActivity", description="One summary of a day.")
    items = [
        transform.Item(topic="Activity", content="Wrote the report.",
                       event_time=datetime(2026, 2, 2, 9, tzinfo=UTC)),
        transform.Item(topic="Activity", content="Fixed the bike.",
                       event_time=datetime(2026, 2, 2, 17, tzinfo=UTC)),
    ]  # fmt: skip
    context = transform.Context(
        instructions="Summarize the day; start with the date.", output_topics=[day], items=items
    )
    answer = await OfflineLLM(HashEmbedder()).complete(transform.PROMPT, context)
    assert [m.content for m in answer.memories] == ["2026-02-02: Wrote the report; Fixed the bike."]
    spread = transform.Context(
        instructions="Summarize by date.", output_topics=[day, EXPERIENCE], items=items[:1]
    )
    [memory] = (await OfflineLLM(HashEmbedder()).complete(transform.PROMPT, spread)).memories
    assert memory.content.startswith("2026-02-02: ") and memory.evidence == [0]
