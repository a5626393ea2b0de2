"""Scenarios generated in code, seeded and sized: users whose facts change, restatements,
corrections right after a recall, episode series that should consolidate, and distractors
in other users' and other desks' scopes.

Each user has three single-valued attributes (city, job, drink) and two desks. At the main
desk an episode series of one theme (four episodes) should become one rule; at the second
desk two episodes of another theme are a distractor (too few for a rule). Every other user
shares the vocabularies, so their facts are distractors in other user scopes.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Literal

from bench.dynamics.themes import THEMES, Theme

Kind = Literal["fact", "restate", "change", "correct", "episode"]
ATTRIBUTES: dict[str, dict[str, object]] = {
    "city": {
        "values": ["Lisbon", "Porto", "Braga", "Madrid", "Seville", "Lyon", "Turin", "Ghent",
                   "Krakow", "Dublin", "Bergen", "Zurich"],
        "said": "I live in {v}.", "changed": "I moved to {v}.", "restated": "As I said, I live in {v}.",
        "corrected": "Actually, not {old}. I live in {v} now.",
        "memory": "User lives in {v}.", "question": "Where does the user live?",
    },
    "job": {
        "values": ["nurse", "teacher", "carpenter", "pilot", "chemist", "librarian", "baker",
                   "architect", "firefighter", "translator"],
        "said": "I work as a {v}.", "changed": "I work as a {v} now.",
        "restated": "Like I told you, I work as a {v}.",
        "corrected": "Actually, not a {old}. I work as a {v} now.",
        "memory": "User works as a {v}.", "question": "What is the user's job?",
    },
    "drink": {
        "values": ["green tea", "black coffee", "oat latte", "sparkling water", "hot chocolate",
                   "mint tea", "lemonade", "chai"],
        "said": "I prefer {v}.", "changed": "I prefer {v} now.",
        "restated": "As always, I prefer {v}.", "corrected": "Actually, not {old}. I prefer {v} now.",
        "memory": "User prefers {v}.", "question": "What does the user prefer to drink?",
    },
}  # fmt: skip


@dataclass(frozen=True)
class Event:
    user: str
    kind: Kind
    text: str  # what the user says (one string input)
    desk: str
    attribute: str | None = None
    value: str | None = None  # the attribute's value after this event
    memory: str | None = None  # what an exact extraction stores (the oracle's answer)
    theme: str | None = None  # episodes: the series' theme
    recall_query: str | None = None  # correct: the agent's search right before the add


@dataclass
class User:
    name: str
    desk: str
    other_desk: str
    theme: Theme
    distractor: Theme
    history: dict[str, list[str]] = field(default_factory=dict)  # attribute -> values, in order


@dataclass
class Scenario:
    seed: int
    users: list[User]
    rounds: list[list[Event]]  # round r: at most one event per user, run together
    family: str = "templated"
    attributes: dict[str, dict[str, object]] = field(default_factory=lambda: ATTRIBUTES)

    @property
    def events(self) -> list[Event]:
        return [e for r in self.rounds for e in r]


TEMPLATED_STREAMS: list[list[tuple[str, str]]] = [
    [("restate", "city"), ("correct", "city"), ("restate", "city")],
    [("change", "job"), ("restate", "job")],
    [("restate", "drink"), ("change", "drink")],
]


def family(name: str) -> tuple[dict[str, dict[str, object]], list[list[tuple[str, str]]]]:
    """A scenario family's attributes and event streams: `templated` (this module's, 16
    events a user) or `freeform` (`bench.dynamics.freeform`, 19 events a user)."""
    if name == "templated":
        return ATTRIBUTES, TEMPLATED_STREAMS
    if name == "freeform":
        from bench.dynamics.freeform import FREEFORM, FREEFORM_STREAMS

        return FREEFORM, FREEFORM_STREAMS
    raise ValueError(f"unknown scenario family {name!r}")


def generate(seed: int, size: int, family_name: str = "templated") -> Scenario:
    """`size` users, each with the same plan of events in a seeded order."""
    attributes, streams = family(family_name)
    rng = random.Random(seed)
    users = []
    plans = []
    for i in range(size):
        theme, distractor = rng.sample(THEMES, 2)
        user = User(f"user-{i}", f"desk-{i}-a", f"desk-{i}-b", theme, distractor)
        users.append(user)
        plans.append(_plan(rng, user, attributes, streams))
    width = max(len(p) for p in plans)
    rounds = [[p[r] for p in plans if r < len(p)] for r in range(width)]
    return Scenario(seed, users, rounds, family_name, attributes)


def _plan(
    rng: random.Random,
    user: User,
    attributes: dict[str, dict[str, object]],
    fact_streams: list[list[tuple[str, str]]],
) -> list[Event]:
    values = {a: rng.sample(list(spec["values"]), 3) for a, spec in attributes.items()}  # type: ignore[call-overload]
    current = {a: v[0] for a, v in values.items()}
    user.history = {a: [v[0]] for a, v in values.items()}
    head = [_event(attributes, user, "fact", a, current[a], "said") for a in attributes]
    # The rest in a seeded order: an attribute's restatement, change and correction keep
    # their relative order; episodes keep theirs.
    streams: list[list[tuple[Kind, str | None]]] = [
        *([(k, a) for k, a in stream] for stream in fact_streams),  # type: ignore[misc]
        [("episode", "main")] * 4,
        [("episode", "other")] * 2,
    ]
    tail: list[Event] = []
    episodes = {"main": 0, "other": 0}
    while any(streams):
        stream = rng.choice([s for s in streams if s])
        kind, what = stream.pop(0)
        if kind == "episode":
            theme = user.theme if what == "main" else user.distractor
            desk = user.desk if what == "main" else user.other_desk
            text = theme.episodes[episodes[str(what)]]
            episodes[str(what)] += 1
            tail.append(Event(user.name, "episode", text, desk, memory=text, theme=theme.name))
            continue
        assert what is not None
        if kind in ("change", "correct"):
            new = values[what][len(user.history[what])]
            old, current[what] = current[what], new
            user.history[what].append(new)
            template = "changed" if kind == "change" else "corrected"
            tail.append(_event(attributes, user, kind, what, new, template, old))
        else:
            tail.append(_event(attributes, user, "restate", what, current[what], "restated"))
    return head + tail


def _event(
    attributes: dict[str, dict[str, object]],
    user: User,
    kind: Kind,
    attribute: str,
    value: str,
    template: str,
    old: str = "",
) -> Event:
    spec = attributes[attribute]
    return Event(
        user=user.name,
        kind=kind,
        text=str(spec[template]).format(v=value, old=old),
        desk=user.desk,
        attribute=attribute,
        value=value,
        memory=str(spec["memory"]).format(v=value),
        recall_query=str(spec["question"]) if kind == "correct" else None,
    )


def current_values(user: User) -> dict[str, str]:
    return {a: values[-1] for a, values in user.history.items()}
