"""Result order that never puts a superseded value above its successor (issue 32).

Reconcile rewrites a superseded memory when it sees the change; where it did not (another
run's scope, reconcile switched off, a provider that kept both), two memories of one owner
and topic can state the same attribute with different values. Every read that ranks (vector,
bm25, hybrid, fetch and the list's page) passes its results through `current_first`:

- a memory that a later one (by event time) supersedes (`claims.changed_fact`, the offline
  provider's conservative same-attribute rules, with no similarity to lean on) moves to just
  below its successor; nothing is dropped, and the order is otherwise kept;
- with a query text, a memory that only states the user's name ("User's name is Maria.")
  goes below the others unless the query asks for a name: a name in a query says whose
  facts are wanted, not that the name itself is the answer.

Superseded memories stay where reconcile left them: in the results (below their successor),
in history and in `as_of` reads.
"""

from __future__ import annotations

import re
from datetime import datetime

from mnemo.domain.memory import Memory
from mnemo.llm.offline.claims import change_keys, changed_fact

_NAME_ONLY = re.compile(
    r"^(?:User's (?:full |first |last )?name is|User is called|User is named)\s+[\w' -]+\.?$",
    re.IGNORECASE,
)
_ASKS_NAME = re.compile(r"\b(?:name|named|called|who)\b", re.IGNORECASE)
# No similarity is known here: only rules that hold on the texts alone decide.
_NO_SIMILARITY, _NEVER_SIMILAR = 0.0, 2.0


def _when(memory: Memory) -> datetime:
    return memory.event_time_end or memory.event_time or memory.created_at


def _owner(memory: Memory) -> tuple[str | None, ...]:
    """Whom a memory is about: its user (any topic, any desk: a user's new city supersedes
    the old wherever either was filed), else its topic and scope properties."""
    if memory.user_id is not None:
        return ("user", memory.user_id)
    return (
        "topic",
        memory.topic,
        *sorted(f"{k}={v}" for k, v in (memory.properties or {}).items()),
    )


def supersedes(new: Memory, old: Memory) -> bool:
    """`new` states a later value of an attribute `old` states, about the same user (or, for
    memories of no user, in the same topic and scope)."""
    if _owner(new) != _owner(old) or _when(new) <= _when(old):
        return False
    if not change_keys(new.content) & change_keys(old.content, as_old=True):
        return False
    return changed_fact(old.content, new.content, _NO_SIMILARITY, _NEVER_SIMILAR) is not None


def is_name_only(memory: Memory) -> bool:
    return bool(_NAME_ONLY.match(memory.content.strip()))


def current_first(found: list[Memory], query_text: str | None = None) -> list[Memory]:
    """`found` with every superseded memory below its successor (see the module docstring)."""
    ordered = list(found)
    if query_text is not None and not _ASKS_NAME.search(query_text):
        ordered = [m for m in ordered if not is_name_only(m)] + [
            m for m in ordered if is_name_only(m)
        ]
    # A few dozen results at most: a pass per move is cheap, and each move only lowers an
    # older memory, so the loop ends (at most one move per pair).
    for _ in range(len(ordered) * len(ordered)):
        move = _first_inversion(ordered)
        if move is None:
            break
        old, new = move
        item = ordered.pop(old)
        ordered.insert(new, item)  # `new` shifted up by one when `old` was popped
    return _scores_descending(ordered)


def _scores_descending(ordered: list[Memory]) -> list[Memory]:
    """A memory moved down takes at most the score of the one above it, so scores still
    read best first."""
    out: list[Memory] = []
    for memory in ordered:
        above = out[-1].score if out else None
        if above is not None and memory.score is not None and memory.score > above:
            memory = memory.model_copy(update={"score": above})
        out.append(memory)
    return out


def with_successors(found: list[Memory], later: list[Memory], limit: int) -> list[Memory]:
    """`found` with the successor (from `later`) of each hit that did not match the query
    itself placed right above that hit, with its score; then at most `limit` results.
    A search for "where does maria live?" finds "User lives in Berlin." by its words; the
    memory that moved her to Lisbon answers it now."""
    present = {m.id for m in found}
    out: list[Memory] = []
    for hit in found:
        newer = [m for m in later if m.id not in present and supersedes(m, hit)]
        if newer:
            successor = max(newer, key=_when)
            present.add(successor.id)
            out.append(successor.model_copy(update={"score": hit.score}))
        out.append(hit)
    return out[:limit]


def _first_inversion(ordered: list[Memory]) -> tuple[int, int] | None:
    for i, old in enumerate(ordered):
        for j in range(i + 1, len(ordered)):
            if supersedes(ordered[j], old):
                return i, j
    return None
