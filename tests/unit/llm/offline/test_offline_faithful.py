"""Issue 32: the offline provider states only what it can state faithfully.

Atomic third-person statements close to the user's words, no clauses of different statements
spliced together, discourse markers dropped, and the user's own sentence where a rule cannot
decide. Each case below failed before the change (see the issue's transcript).
"""

from __future__ import annotations

import pytest

from mnemo.embeddings.hashing import HashEmbedder
from mnemo.llm.offline import OfflineLLM
from mnemo.llm.offline.claims import changed_fact
from mnemo.llm.offline.text import facts
from mnemo.prompts import transform_with_context as twc

LLM = OfflineLLM(HashEmbedder(), 0.9, similar_threshold=0.6)


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        # The restatement: marker and aside dropped, the reason clause is not a fact
        # about the user and is not glued to one.
        (
            "As I said, I am vegetarian, by the way, so the food here is a bit of a challenge.",
            ["User is vegetarian."],
        ),
        ("Big news: I moved to Lisbon last month!", ["User moved to Lisbon last month."]),
        ("Quick update - I work as a pilot now.", ["User works as a pilot now."]),
        ("I live in Porto, by the way.", ["User lives in Porto."]),
        (
            "I gave up on piano, I'm learning guitar now.",
            ["User gave up on piano.", "User is learning guitar now."],
        ),
        ("I sold my Golf and bought a Tesla.", ["User sold their Golf and bought a Tesla."]),
        # No rule for "we": the user's sentence stays as it was said.
        ("We finally moved to Porto.", ["We finally moved to Porto."]),
        # A name is an attribute, stated as one.
        ("Hi, I'm Maria.", ["User's name is Maria."]),
    ],
)
def test_statements_are_atomic_and_close_to_the_users_words(said: str, expected: list[str]) -> None:
    assert facts([said], "string") == expected


def test_a_restatement_with_an_aside_is_not_a_change() -> None:
    old, new = "User is vegetarian.", "User is vegetarian, so the food here is a challenge."
    assert changed_fact(old, new, 0.9, 0.78) is None


async def reconcile(existing: list[str], new: list[str]) -> twc.Response:
    ctx = twc.Context(
        instructions="",
        existing=[
            twc.ExistingMemory(id=f"m{i}", topic="Facts", content=c) for i, c in enumerate(existing)
        ],
        new=[twc.NewMemory(index=i, topic="Facts", content=c) for i, c in enumerate(new)],
    )
    return await LLM.complete(twc.PROMPT, ctx)


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("User lives in Berlin.", "User moved to Lisbon last month."),
        ("User lives in Berlin.", "We finally moved to Porto."),
        ("User drives a Golf.", "User sold their Golf and bought a Tesla."),
        ("User is learning piano.", "User gave up on piano."),
        ("User is learning piano.", "User is learning guitar now."),
        ("User codes in Python.", "User switched from Python to Rust."),
        ("User is vegetarian.", "User is vegan now."),
        ("User has a cat called Tom.", "User does not have a cat anymore."),
        ("User's favourite band is Muse.", "User's favourite band is Blur."),
        ("User works at Acme.", "User started working at Initech."),
    ],
)
async def test_a_change_supersedes_the_old_statement_without_a_splice(old: str, new: str) -> None:
    answer = await reconcile([old], [new])
    assert [(d.action, d.content) for d in answer.existing] == [("rewrite", new)]
    assert [d.action for d in answer.new] == ["delete"]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("User has a dog.", "User has a cat."),  # many pets at once, no change marker
        ("User likes jazz.", "User likes hiking."),
        ("User lives in Berlin.", "User works as a nurse."),
        ("User is learning piano.", "User plays football."),
    ],
)
async def test_different_attributes_are_kept_side_by_side(old: str, new: str) -> None:
    answer = await reconcile([old], [new])
    assert [d.action for d in answer.existing] == ["keep"]
    assert [d.action for d in answer.new] == ["keep"]


async def test_a_restatement_writes_nothing() -> None:
    said = facts(["As I said, I am vegetarian, by the way, so the food is a challenge."], "string")
    answer = await reconcile(["User is vegetarian."], said)
    assert [d.action for d in answer.existing] == ["keep"]
    assert [d.action for d in answer.new] == ["delete"]


async def test_a_bounded_profile_states_the_new_value_only() -> None:
    from datetime import UTC, datetime

    from mnemo.prompts import extract

    profile = extract.TopicBrief(
        name="Profile",
        description="The user's city and preferences.",
        is_bounded=True,
        current="User lives in Berlin. User prefers dark mode.",
    )
    at = datetime(2026, 12, 1, tzinfo=UTC)
    context = extract.Context(
        topics=[profile],
        input_type="string",
        units=[
            extract.DatedUnit(
                text="Big news: I moved to Lisbon last month! I prefer light mode now.", at=at
            )
        ],
    )
    answer = await LLM.complete(extract.PROMPT, context)
    [merged] = [m.content for m in answer.memories]
    assert "Berlin" not in merged and "dark mode" not in merged
    assert "User moved to Lisbon" in merged and "User prefers light mode now." in merged


async def test_a_change_filed_under_another_topic_still_supersedes() -> None:
    ctx = twc.Context(
        instructions="",
        existing=[twc.ExistingMemory(id="m0", topic="Facts", content="User works as a teacher.")],
        new=[twc.NewMemory(index=0, topic="Episodes", content="User works as a pilot now.")],
    )
    answer = await LLM.complete(twc.PROMPT, ctx)
    assert [(d.action, d.content) for d in answer.existing] == [
        ("rewrite", "User works as a pilot now.")
    ]
    assert [d.action for d in answer.new] == ["delete"]


async def test_a_rule_topic_gets_no_user_sentence() -> None:
    from datetime import UTC, datetime

    from mnemo.prompts import extract

    topics = [
        extract.TopicBrief(
            name="Rules", description="A job lesson the user learned.", learned=True
        ),
        extract.TopicBrief(name="Notes", description="Anything at all."),
    ]
    context = extract.Context(
        topics=topics,
        input_type="string",
        units=[
            extract.DatedUnit(text="I work as a teacher.", at=datetime(2026, 12, 1, tzinfo=UTC))
        ],
    )
    answer = await LLM.complete(extract.PROMPT, context)
    assert [(m.topic, m.content) for m in answer.memories] == [
        ("Notes", "User works as a teacher.")
    ]


@pytest.mark.parametrize(
    ("said", "expected"),
    [
        ("Nowadays I'm training for a marathon.", ["User is training for a marathon nowadays."]),
        ("Oops, my mistake: I live in Graz.", ["User lives in Graz."]),
        ("Yep, I still cycle to work.", ["User still cycles to work."]),
    ],
)
def test_markers_and_time_leads(said: str, expected: list[str]) -> None:
    assert facts([said], "string") == expected


async def test_a_correction_names_the_value_it_replaces() -> None:
    answer = await reconcile(["User moved to Graz."], ["We moved to Linz, not Graz."])
    assert [(d.action, d.content) for d in answer.existing] == [
        ("rewrite", "We moved to Linz, not Graz.")
    ]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("User switched from Word to LaTeX.", "LaTeX is still their favourite tool."),
        ("User rides a Brompton.", "Still riding the Brompton every day."),
        ("User is learning the harp.", "User is still learning the harp, slowly."),
    ],
)
async def test_a_still_sentence_restates(old: str, new: str) -> None:
    answer = await reconcile([old], [new])
    assert [d.action for d in answer.existing] == ["keep"]
    assert [d.action for d in answer.new] == ["delete"]


async def test_the_new_value_wins_over_the_statement_that_ended_the_old_one() -> None:
    answer = await reconcile(
        ["User is learning the harp."],
        ["User gave up on the harp.", "User is learning the oboe now."],
    )
    assert [(d.action, d.content) for d in answer.existing] == [
        ("rewrite", "User is learning the oboe now.")
    ]
    assert [d.action for d in answer.new] == ["delete", "delete"]


async def test_a_capitalised_first_word_need_not_be_a_name() -> None:
    answer = await reconcile(["User moved to Graz."], ["Home is still Graz."])
    assert [d.action for d in answer.new] == ["delete"]
    kept = await reconcile(["User moved to Graz."], ["Work is still hard."])
    assert [d.action for d in kept.new] == ["keep"]


async def test_one_new_memory_corrects_one_recalled_memory() -> None:
    from mnemo.prompts import reconsolidate as gate_prompt

    context = gate_prompt.Context(
        input=["user: Actually I live in Linz now."],
        new=[gate_prompt.NewMemory(index=0, topic="T", content="User lives in Linz now.")],
        recalled=[
            gate_prompt.RecalledMemory(id="a", topic="T", content="User lives in Graz."),
            gate_prompt.RecalledMemory(id="b", topic="T", content="User lives in Wels."),
        ],
    )
    answer = await LLM.complete(gate_prompt.PROMPT, context)
    assert [v.decision for v in answer.verdicts] == ["contradict", "unrelated"]


async def test_a_lasting_attribute_is_no_episode() -> None:
    from datetime import UTC, datetime

    from mnemo.prompts import extract

    topics = [
        extract.TopicBrief(name="Log", description="Jobs done and problems seen.", episodic=True),
        extract.TopicBrief(name="About", description="Things about the person."),
    ]
    at = datetime(2026, 12, 1, tzinfo=UTC)
    units = ["I work as a welder. The welding job on the gate cracked twice."]
    context = extract.Context(
        topics=topics, input_type="string", units=[extract.DatedUnit(text=u, at=at) for u in units]
    )
    answer = await LLM.complete(extract.PROMPT, context)
    assert [(m.topic, m.content) for m in answer.memories] == [
        ("About", "User works as a welder."),
        ("Log", "The welding job on the gate cracked twice."),
    ]
