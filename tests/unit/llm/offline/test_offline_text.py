"""Sentence heuristics of the offline provider: first-person rewriting and noise skipping."""

from __future__ import annotations

import pytest

from mnemo.llm.offline.text import facts, to_third_person


@pytest.mark.parametrize(
    ("sentence", "expected"),
    [
        ("I work from home", "User works from home."),
        ("I am a teacher", "User is a teacher."),
        ("I'm vegan", "User is vegan."),
        ("I\u2019m based in Oslo!", "User is based in Oslo."),
        ("I've got two cats", "User has got two cats."),
        ("I have a dog", "User has a dog."),
        ("I was born in Rome", "User was born in Rome."),
        ("My name is Alice.", "User's name is Alice."),
        ("My sister visits me often", "User's sister visits the user often."),
        ("I don't eat meat", "User does not eat meat."),
        ("I do not like coffee", "User does not like coffee."),
        ("I can't swim", "User cannot swim."),
        ("I live in Berlin", "User lives in Berlin."),
        ("I prefer dark mode", "User prefers dark mode."),
        ("I go running on Sundays", "User goes running on Sundays."),
        ("I watch anime", "User watches anime."),
        ("I study law", "User studies law."),
        ("I really like jazz", "User really likes jazz."),
        ("I moved to Munich", "User moved to Munich."),
        ("the meeting is on Friday", "The meeting is on Friday."),
    ],
)
def test_first_person_is_rewritten_as_user(sentence: str, expected: str) -> None:
    assert to_third_person(sentence) == expected


def test_interjections_are_stripped() -> None:
    assert facts(["Great news, I got promoted to CEO!"], "string") == ["User got promoted to CEO."]


def test_a_restated_fact_reads_as_it_did_the_first_time() -> None:
    first = facts(["I live in Porto."], "string")
    for restated in (
        "As I said, I live in Porto.",
        "Like I told you, I live in Porto.",
        "As always, I live in Porto.",
        "as I mentioned before, I live in Porto.",
    ):
        assert facts([restated], "string") == first, restated  # fmt: skip
    assert facts(["As a nurse, I work nights."], "string") == ["As a nurse, User works nights."]
    assert facts(["Hey, actually I work from home."], "string") == ["User works from home."]
    assert facts(["So I live in Berlin."], "string") == ["User lives in Berlin."]


def test_questions_greetings_small_talk_and_fragments_are_skipped() -> None:
    units = [
        "Hi there!",
        "How are you?",
        "Can you recommend a good book",
        "Thanks, that's helpful.",
        "Good morning.",
        "Sounds good.",
        "Tell me a joke.",
        "Yes.",
        "I love science fiction.",
    ]
    assert facts(units, "string") == ["User loves science fiction."]


def test_only_user_lines_of_a_conversation_count() -> None:
    units = [
        "system: You are a helpful assistant and I am the system.",
        "user: Hello! I work as a nurse.",
        "assistant: I am glad to hear that you work as a nurse.",
        'tool: {"result": 1}',
    ]
    assert facts(units, "conversation") == ["User works as a nurse."]


def test_compound_first_person_sentences_become_separate_facts() -> None:
    assert facts(["I work from home and I'm a machine learning engineer."], "string") == [
        "User works from home.",
        "User is a machine learning engineer.",
    ]
