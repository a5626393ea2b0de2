"""Offline heuristics for the `transform` prompt: combine a batch by templates, not reasoning.

- Continual-learning fragments (topics naming a goal, actions and feedback) become one
  "When <goal>, after <actions>: <feedback>." memory.
- Anything else for a single output topic becomes one "a; b; c." memory.
- With several output topics, items already in an output topic pass through and the rest
  are joined per most similar output topic.
- Instructions that demand feedback ("write nothing if there is no feedback") yield nothing
  when no item has a feedback topic. Instructions that mention the date (a daily roll-up)
  start each combined memory with the date (or date range) its items happened on. Other
  instructions are not interpreted.
"""

from __future__ import annotations

import re
from datetime import UTC

from mnemo.contracts.embedder import Embedder
from mnemo.llm.offline.extract import brief_text
from mnemo.llm.offline.text import finish_sentence
from mnemo.llm.offline.vectors import Vectors, best_columns
from mnemo.prompts.extract import ExtractedMemory
from mnemo.prompts.transform import Context, Item, Response

_WANTS_DATE = re.compile(r"\bdates?\b", re.IGNORECASE)
_NEEDS_FEEDBACK = re.compile(
    r"\b(?:nothing|skip|do not write|don't write|no memor\w*)\b[^.]*\bfeedback\b", re.IGNORECASE
)


async def transform(ctx: Context, embedder: Embedder) -> Response:
    """Heuristic transform; see the module docstring."""
    if not ctx.items or not ctx.output_topics:
        return Response(memories=[])
    if _NEEDS_FEEDBACK.search(ctx.instructions) and not _has_role(ctx.items, "feedback"):
        return Response(memories=[])
    dating = bool(_WANTS_DATE.search(ctx.instructions))
    if len(ctx.output_topics) == 1:
        content = combine(ctx.items, dating)
        memories = [ExtractedMemory(topic=ctx.output_topics[0].name, content=content)]
        return Response(memories=[m for m in memories if m.content])
    return Response(memories=await _spread(ctx, embedder, dating))


def date_label(items: list[Item]) -> str | None:
    """ "2026-03-01", or "2026-03-01 to 2026-03-02" when the items span days (UTC)."""
    days = sorted({i.event_time.astimezone(UTC).date() for i in items if i.event_time})
    if not days:
        return None
    return days[0].isoformat() if len(days) == 1 else f"{days[0]} to {days[-1]}"


def _has_role(items: list[Item], role: str) -> bool:
    return any(role in item.topic.lower() for item in items)


def _clause(text: str) -> str:
    """An item as a clause: no final period, lower-cased first letter unless a name/acronym."""
    text = " ".join(text.split()).rstrip(" .!;,:")
    first = text.split(" ", 1)[0] if text else ""
    if first and first not in {"User", "I"} and not first[1:2].isupper():
        text = text[0].lower() + text[1:]
    return text


_SUBJECTS = {"user", "the", "a", "an", "they", "he", "she", "we", "it", "someone", "i"}
_PAST = re.compile(r"^(?:\w+ed|made|took|ran|wrote|sent|found|got|went|did|used|tried|built)$")


def _goal_phrase(goal: str) -> str:
    """ "book a flight" -> "asked to book a flight"; "User wants ..." stays as it is."""
    first = goal.split(" ", 1)[0].lower()
    if first in _SUBJECTS or first.endswith(("s", "ed", "ing")):
        return goal
    return f"asked to {goal}"


def _actions_phrase(actions: str) -> str:
    """ "searched flights" -> "the agent searched flights"; "searching flights" stays."""
    first = actions.split(" ", 1)[0].lower()
    return f"the agent {actions}" if _PAST.match(first) else actions


def combine(items: list[Item], dating: bool = False) -> str:
    """One deterministic text for a batch: a lesson template or a "; "-joined list; with
    `dating`, prefixed by the items' date."""
    text = _combine(items)
    label = date_label(items) if dating and text else None
    return f"{label}: {text}" if label else text


def _combine(items: list[Item]) -> str:
    goals = [_clause(i.content) for i in items if "goal" in i.topic.lower()]
    actions = [_clause(i.content) for i in items if "action" in i.topic.lower()]
    feedback = [_clause(i.content) for i in items if "feedback" in i.topic.lower()]
    if not feedback or not (goals or actions):
        return finish_sentence("; ".join(" ".join(i.content.split()).rstrip(" .") for i in items))
    situation = []
    if goals:
        situation.append("When " + _goal_phrase(" and ".join(goals)))
    if actions:
        situation.append(("after " if goals else "After ") + _actions_phrase("; ".join(actions)))
    rest = [
        _clause(i.content)
        for i in items
        if not any(k in i.topic.lower() for k in ("goal", "action", "feedback"))
    ]
    lesson = "; ".join(feedback + rest)
    return finish_sentence(f"{', '.join(situation)}: {lesson}")


async def _spread(ctx: Context, embedder: Embedder, dating: bool) -> list[ExtractedMemory]:
    outputs = {t.name: t for t in ctx.output_topics}
    passthrough = [
        ExtractedMemory(topic=i.topic, content=i.content, evidence=[n])
        for n, i in enumerate(ctx.items)
        if i.topic in outputs
    ]
    others = [(n, i) for n, i in enumerate(ctx.items) if i.topic not in outputs]
    if not others:
        return passthrough
    briefs = [brief_text(t) for t in ctx.output_topics]
    vectors = await Vectors.of(embedder, briefs + [i.content for _, i in others])
    best = best_columns(vectors, [i.content for _, i in others], briefs)
    grouped: dict[str, list[tuple[int, Item]]] = {}
    for (n, item), column in zip(others, best, strict=True):
        grouped.setdefault(ctx.output_topics[column].name, []).append((n, item))
    combined = [
        ExtractedMemory(
            topic=t, content=combine([i for _, i in group], dating), evidence=[n for n, _ in group]
        )
        for t, group in grouped.items()
    ]
    return passthrough + [m for m in combined if m.content]
