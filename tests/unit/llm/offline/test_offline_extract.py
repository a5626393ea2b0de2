"""The offline provider's `extract` heuristics, with the deterministic hash embedder."""

from __future__ import annotations

import logging
from datetime import UTC, datetime

import pytest

from mnemo.contracts.llm import LLMError, Prompt
from mnemo.embeddings.hashing import HashEmbedder
from mnemo.llm.offline import OfflineLLM
from mnemo.prompts import extract

FOOD = extract.TopicBrief(
    name="Food", description="Meals, cooking, recipes, restaurants and cuisine the user eats."
)
TRAVEL = extract.TopicBrief(
    name="Travel", description="Trips, flights, hotels and destinations the user travels to."
)


def _llm() -> OfflineLLM:
    return OfflineLLM(HashEmbedder(), bounded_threshold=0.2)


WRITTEN = datetime(2025, 3, 10, 14, 0, tzinfo=UTC)  # a Monday


def dated(units: list[str], at: datetime = WRITTEN) -> list[extract.DatedUnit]:
    return [extract.DatedUnit(text=u, at=at) for u in units]


def _context(topics: list[extract.TopicBrief], units: list[str]) -> extract.Context:
    return extract.Context(topics=topics, input_type="string", units=dated(units))


async def test_label_is_honest() -> None:
    assert _llm().label == "offline-heuristics"


async def test_sentences_are_routed_to_the_most_similar_topic() -> None:
    units = ["I love cooking Italian meals at home. I booked flights and a hotel for my trip."]
    answer = await _llm().complete(extract.PROMPT, _context([FOOD, TRAVEL], units))
    assert [(m.topic, m.content) for m in answer.memories] == [
        ("Food", "User loves cooking Italian meals at home."),
        ("Travel", "User booked flights and a hotel for their trip."),
    ]


async def test_near_identical_sentences_in_one_input_are_deduped() -> None:
    units = ["I love cooking Italian meals.", "I love cooking Italian meals!"]
    answer = await _llm().complete(extract.PROMPT, _context([FOOD], units))
    assert [m.content for m in answer.memories] == ["User loves cooking Italian meals."]


async def test_questions_and_greetings_give_no_memories() -> None:
    context = extract.Context(
        topics=[FOOD],
        input_type="conversation",
        units=dated(["user: Hi!", "user: What should I cook tonight?", "assistant: I love pasta."]),
    )
    answer = await _llm().complete(extract.PROMPT, context)
    assert answer.memories == []


async def test_bounded_topic_gets_one_merged_memory_without_duplicates() -> None:
    profile = extract.TopicBrief(
        name="Profile",
        description="The user's name, city where the user lives, and job.",
        is_bounded=True,
        current="User's name is Alice. User lives in Berlin.",
    )
    units = ["I live in Berlin. My name is Alice. I work as a nurse in the city."]
    answer = await _llm().complete(extract.PROMPT, _context([FOOD, profile], units))
    bounded = [m for m in answer.memories if m.topic == "Profile"]
    assert len(bounded) == 1
    assert bounded[0].content == (
        "User's name is Alice. User lives in Berlin. User works as a nurse in the city."
    )


async def test_summary_like_bounded_topic_takes_every_sentence() -> None:
    summary = extract.TopicBrief(
        name="ConversationSummary", description="A running summary.", is_bounded=True
    )
    units = ["I love cooking Italian meals.", "I booked flights to Tokyo."]
    answer = await _llm().complete(extract.PROMPT, _context([FOOD, TRAVEL, summary], units))
    merged = [m.content for m in answer.memories if m.topic == "ConversationSummary"]
    assert merged == ["User loves cooking Italian meals. User booked flights to Tokyo."]
    assert len(answer.memories) == 3


async def test_bounded_topic_without_anything_new_is_not_returned() -> None:
    summary = extract.TopicBrief(
        name="History",
        description="Everything, as a history.",
        is_bounded=True,
        current="User loves cooking Italian meals.",
    )
    units = ["I love cooking Italian meals."]
    answer = await _llm().complete(extract.PROMPT, _context([summary], units))
    assert answer.memories == []


async def test_only_bounded_topics_still_receive_every_sentence() -> None:
    profile = extract.TopicBrief(name="Profile", description="Anything.", is_bounded=True)
    answer = await _llm().complete(extract.PROMPT, _context([profile], ["I study law."]))
    assert [(m.topic, m.content) for m in answer.memories] == [("Profile", "User studies law.")]


async def test_same_input_gives_the_same_answer() -> None:
    units = ["Hey, I love cooking Italian meals. I booked flights to Tokyo. How are you?"]
    first = await _llm().complete(extract.PROMPT, _context([FOOD, TRAVEL], units))
    second = await _llm().complete(extract.PROMPT, _context([FOOD, TRAVEL], units))
    assert first == second


async def test_unknown_prompt_names_the_prompt() -> None:
    prompt = Prompt(
        name="summarize_everything",
        context_model=extract.Context,
        response_model=extract.Response,
        messages=extract.messages,
    )
    with pytest.raises(LLMError, match="summarize_everything"):
        await _llm().complete(prompt, _context([FOOD], ["I cook."]))


async def test_warns_once_that_it_is_not_a_language_model(
    caplog: pytest.LogCaptureFixture,
) -> None:
    llm = _llm()
    with caplog.at_level(logging.WARNING, logger="mnemo.llm.offline"):
        for _ in range(2):
            await llm.complete(extract.PROMPT, _context([FOOD], ["I love cooking."]))
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1
    assert "not a language model" in warnings[0].getMessage()


async def test_relative_dates_resolve_against_their_own_message_and_cite_it() -> None:
    """Two messages written days apart: each "yesterday" is the day before its own message,
    and each memory cites the message it came from (its evidence)."""
    units = dated(["user: I went hiking yesterday."]) + dated(
        ["assistant: Great!", "user: I cooked paella yesterday."], datetime(2025, 3, 14, tzinfo=UTC)
    )
    context = extract.Context(topics=[FOOD, TRAVEL], input_type="conversation", units=units)
    answer = await _llm().complete(extract.PROMPT, context)
    assert sorted((m.content, m.evidence) for m in answer.memories) == [
        ("User cooked paella on 2025-03-13.", [2]),
        ("User went hiking on 2025-03-09.", [0]),
    ]
