"""The figures of one run, from the memories and runs it left.

- duplicate rate: the share of (user, attribute) keys with more than one live memory that
  states a value of that attribute;
- stale-fact rate: the share of attribute questions whose top hit states an outdated value
  and not the current one (`miss`: the top hit states no value of that attribute at all);
- thrash: writes (created + updated + deleted) of restatement runs, per restatement;
- transfer: the rank of a rule (the Rules topic) among the hits of the series' related new
  question: mean reciprocal rank and the share ranked first;
- LLM calls per add.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bench.dynamics.scenario import ATTRIBUTES


@dataclass
class Figures:
    keys: int = 0
    duplicated: int = 0
    questions: int = 0
    stale: int = 0
    missed: int = 0
    restatements: int = 0
    restatement_writes: int = 0
    series: int = 0
    reciprocal_ranks: list[float] = field(default_factory=list)
    adds: int = 0
    llm_calls: dict[str, int] = field(default_factory=dict)

    def duplicate_rate(self) -> float:
        return self.duplicated / self.keys if self.keys else 0.0

    def stale_rate(self) -> float:
        return self.stale / self.questions if self.questions else 0.0

    def thrash(self) -> float:
        return self.restatement_writes / self.restatements if self.restatements else 0.0

    def calls_per_add(self) -> float:
        return sum(self.llm_calls.values()) / self.adds if self.adds else 0.0

    def transfer(self) -> tuple[float, float] | None:
        if not self.reciprocal_ranks:
            return None
        ranks = self.reciprocal_ranks
        return sum(ranks) / len(ranks), sum(1 for r in ranks if r == 1.0) / len(ranks)


Attributes = dict[str, dict[str, object]]


def values_in(text: str, attribute: str, attributes: Attributes = ATTRIBUTES) -> set[str]:
    lowered = text.lower()
    return {v for v in attributes[attribute]["values"] if v.lower() in lowered}  # type: ignore[attr-defined]


def count_key(
    figures: Figures, contents: list[str], attribute: str, attributes: Attributes = ATTRIBUTES
) -> None:
    figures.keys += 1
    if sum(1 for c in contents if values_in(c, attribute, attributes)) > 1:
        figures.duplicated += 1


def judge_top_hit(
    figures: Figures,
    top: str | None,
    attribute: str,
    current: str,
    attributes: Attributes = ATTRIBUTES,
) -> None:
    figures.questions += 1
    said = values_in(top or "", attribute, attributes)
    if not said:
        figures.missed += 1
    elif current not in said:
        figures.stale += 1


def rank_rule(figures: Figures, topics: list[str]) -> None:
    figures.series += 1
    rank = next((i + 1 for i, topic in enumerate(topics) if topic == "Rules"), None)
    figures.reciprocal_ranks.append(1.0 / rank if rank else 0.0)
