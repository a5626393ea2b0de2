"""The offline provider's consolidation and reconsolidation-gate heuristics."""

from __future__ import annotations

from mnemo.embeddings.hashing import HashEmbedder
from mnemo.llm.offline import OfflineLLM
from mnemo.prompts import consolidate as consolidate_prompt
from mnemo.prompts import reconsolidate as gate_prompt
from mnemo.steps.evidence import quote_found

# Thresholds on the hash embedder's scale (word overlap), not the bundled model's defaults.
LLM = OfflineLLM(HashEmbedder(), 0.9, similar_threshold=0.6)
SAID = [
    "user: Hi again.",
    "user: I prefer light mode now. I live in Porto. I have a dog called Rex.",
]


def gate_context(recalled: list[str], new: list[str]) -> gate_prompt.Context:
    return gate_prompt.Context(
        input=SAID,
        new=[gate_prompt.NewMemory(index=i, topic="T", content=c) for i, c in enumerate(new)],
        recalled=[gate_prompt.RecalledMemory(id=f"m{i}", topic="T", content=c)
                  for i, c in enumerate(recalled)],
    )  # fmt: skip


async def test_gate_classifies_with_a_verbatim_quote() -> None:
    context = gate_context(
        [
            "User prefers dark mode.",
            "User lives in Porto.",
            "User has a cat.",
            "User has a dog.",
        ],
        ["User prefers light mode now.", "User lives in Porto.", "User has a dog called Rex."],
    )
    answer = await LLM.complete(gate_prompt.PROMPT, context)
    by_id = {v.id: v for v in answer.verdicts}
    assert by_id["m0"].decision == "contradict"
    assert by_id["m0"].content == "User prefers light mode now." and by_id["m0"].covers == [0]
    assert by_id["m1"].decision == "match" and by_id["m1"].covers == [1]
    assert by_id["m2"].decision == "unrelated"
    assert by_id["m3"].decision == "extend" and by_id["m3"].covers == [2]
    assert by_id["m3"].content == "User has a dog called Rex."
    units = [u.split(": ", 1)[1] for u in SAID]
    for verdict in (by_id["m0"], by_id["m1"], by_id["m3"]):
        assert quote_found(verdict.evidence, units), verdict.evidence
    assert by_id["m0"].evidence == "I prefer light mode now."


async def test_consolidation_is_a_labelled_digest_of_every_episode() -> None:
    episodes = [
        "A tall bridge gave a harsh response.",
        "A tall bridge gave a wolf tone near C.",
        "A lower bridge cut fixed the wolf tone.",
        "A tall bridge gave a harsh response.",  # a duplicate is told once
    ]
    context = consolidate_prompt.Context(
        rule_topic="Rules",
        rule_description="Lessons.",
        episodes=[
            consolidate_prompt.Episode(id=f"e{i}", content=c, date="2026-01-01")
            for i, c in enumerate(episodes)
        ],
    )
    answer = await LLM.complete(consolidate_prompt.PROMPT, context)
    assert answer.used is None  # every episode
    assert answer.rule is not None and answer.rule.startswith("From 3 similar episodes: ")
    for text in set(episodes):
        assert text.rstrip(".") in answer.rule
    assert answer.rule.count("harsh response") == 1
