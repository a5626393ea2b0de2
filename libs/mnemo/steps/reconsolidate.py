"""The reconsolidation gate, run by transform_with_context before it reconciles.

1. What the add recalled: the ids each run named (`recalled`), or else the recalls of the
   same project, group and user inside the group's labile window before the add, whose
   search properties do not conflict with the add's.
2. Which of them the gate may touch: active memories of reconcilable topics that lie in the
   add's own scope (same user, same values of the topic's scope properties; a memory of a
   topic not scoped by user must also have been written by this user), whose hourly cap is
   not spent, and that are at least `min_similarity` similar to a new memory.
3. One LLM call (prompt `reconsolidate`) classifies each: match, extend, contradict or
   unrelated, quoting the input. mnemo writes extend/contradict only with a quote that
   occurs in the input (`mnemo.steps.evidence`); a match writes nothing, and the new memories
   a decision covers are not stored on their own (a restatement writes nothing).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import timedelta

import numpy as np
from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo.deps import Deps
from mnemo.domain.batch import Batch
from mnemo.domain.group import GroupConfig
from mnemo.domain.memory import Candidate, Memory
from mnemo.domain.reconsolidation import GateDecision, ReconsolidationConfig
from mnemo.prompts import reconsolidate as gate_prompt
from mnemo.steps.answer_guards import check_ids, check_rewrites
from mnemo.steps.evidence import evidence_units, quote_found
from mnemo.store import recalls, reconsolidations


@dataclass
class GateOutcome:
    recalled: set[str] = field(default_factory=set)  # in-scope recalled memory ids
    updates: list[Candidate] = field(default_factory=list)  # rewrites the gate decided
    covered: set[int] = field(default_factory=set)  # new candidates the gate accounted for
    decided: set[str] = field(default_factory=set)  # out of reconcile's reach (decided)
    frozen: set[str] = field(default_factory=set)  # reconcile may not write them either
    decisions: list[GateDecision] = field(default_factory=list)


async def gate(
    deps: Deps, group: GroupConfig, batch: Batch, fresh: Sequence[Candidate]
) -> GateOutcome:
    config = group.reconsolidation
    outcome = GateOutcome()
    if config is None or not fresh:
        return outcome
    async with deps.db.connect() as conn:
        runs = await recalls.runs_of(conn, batch.run_ids)
        ids = await _recalled_ids(conn, config, batch, runs)
        found = await recalls.active_with_vectors(conn, batch.project, group.name, ids)
    in_scope = [(m, v) for m, v in found if _reconcilable(group, m) and _in_scope(group, m, batch)]
    outcome.recalled = {m.id for m, _ in in_scope}
    shown = await _shown(deps, config, in_scope, fresh, outcome)
    if not shown:
        return outcome
    units = [u for run in runs for u in evidence_units(run.input)]
    context = gate_prompt.Context(
        input=[u for run in runs for u in run.input.text_units()],
        new=[
            gate_prompt.NewMemory(index=i, topic=c.topic, content=c.content)
            for i, c in enumerate(fresh)
        ],
        recalled=[
            gate_prompt.RecalledMemory(id=m.id, topic=m.topic, content=m.content) for m in shown
        ],
    )
    answer = await deps.llm.complete(gate_prompt.PROMPT, context)
    task = "reconsolidate"
    check_ids(task, (v.id for v in answer.verdicts), {m.id for m in shown})
    check_rewrites(task, [v.content for v in answer.verdicts if v.decision in _REWRITES])
    verdicts: dict[str, gate_prompt.Verdict] = {}
    for verdict in answer.verdicts:
        verdicts.setdefault(verdict.id, verdict)  # the first per memory
    for memory in shown:
        _apply(outcome, memory, verdicts.get(memory.id), units, len(fresh), batch.run_id)
    return outcome


_REWRITES = frozenset({"contradict", "extend"})


async def _recalled_ids(
    conn: AsyncConnection,
    config: ReconsolidationConfig,
    batch: Batch,
    runs: Sequence[recalls.RunRecall],
) -> list[str]:
    """Named ids first, then the window's, newest recall first; each once."""
    window = timedelta(seconds=config.labile_window)
    ids: list[str] = []
    for run in runs:
        if run.recalled is not None:
            ids += run.recalled
            continue
        found = await recalls.in_window(
            conn,
            batch.project,
            batch.group,
            batch.user_id,
            run.created_at - window,
            run.created_at,
        )
        ids += [memory_id for memory_id, props in found if _agrees(props, batch.properties)]
    return list(dict.fromkeys(ids))


def _agrees(searched: Mapping[str, str], added: Mapping[str, str]) -> bool:
    """A search's properties match an add's unless some key has two different values."""
    return all(added.get(k, v) == v for k, v in searched.items())


def _reconcilable(group: GroupConfig, memory: Memory) -> bool:
    if not group.has_topic(memory.topic):
        return False
    topic = group.topic(memory.topic)
    return not (topic.is_bounded or topic.internal)


def _in_scope(group: GroupConfig, memory: Memory, batch: Batch) -> bool:
    """The memory lies in the add's scope: its user, and its topic's property values."""
    if memory.user_id != batch.user_id:
        return False
    topic = group.topic(memory.topic)
    own = memory.properties or {}
    return all(own.get(k) == batch.properties.get(k) for k in topic.scoping.scope_properties)


async def _shown(
    deps: Deps,
    config: ReconsolidationConfig,
    in_scope: list[tuple[Memory, np.ndarray]],
    fresh: Sequence[Candidate],
    outcome: GateOutcome,
) -> list[Memory]:
    """The recalled memories the gate sees: similar enough, cap not spent, most similar
    first, at most `max_recalled`. Capped ones are reported as skipped and frozen."""
    if not in_scope:
        return []
    new = np.asarray(await deps.embedder.embed([c.content for c in fresh]), dtype=float)
    scored = sorted(
        ((float(np.max(new @ vector)), memory) for memory, vector in in_scope),
        key=lambda pair: (-pair[0], pair[1].id),
    )
    shown: list[Memory] = []
    since = deps.clock.now() - timedelta(hours=1)
    async with deps.db.connect() as conn:
        for similarity, memory in scored:
            if similarity < config.min_similarity or len(shown) >= config.max_recalled:
                continue
            if await reconsolidations.written_since(conn, memory.id, since) >= config.max_per_hour:
                outcome.frozen.add(memory.id)
                outcome.decisions.append(
                    GateDecision(
                        memory_id=memory.id,
                        decision="skipped",
                        reason=f"cap: {config.max_per_hour} reconsolidations per memory per hour",
                    )
                )
                continue
            shown.append(memory)
    return shown


def _apply(
    outcome: GateOutcome,
    memory: Memory,
    verdict: gate_prompt.Verdict | None,
    units: Sequence[str],
    fresh_count: int,
    run_id: str,
) -> None:
    """Turn one verdict into a decision, and a rewrite when it holds."""
    if verdict is None or verdict.decision == "unrelated":
        outcome.decisions.append(
            GateDecision(
                memory_id=memory.id,
                decision="unrelated",
                evidence=verdict.evidence if verdict else "",
                reason=None if verdict else "no verdict",
            )
        )
        return
    covers = {i for i in verdict.covers if 0 <= i < fresh_count}
    decision = GateDecision(
        memory_id=memory.id, decision=verdict.decision, evidence=verdict.evidence
    )
    outcome.decisions.append(decision)
    if verdict.decision == "match":
        decision.reason = "restatement: nothing to write"
        outcome.decided.add(memory.id)
        outcome.covered |= covers
        return
    content = (verdict.content or "").strip()
    if not quote_found(verdict.evidence, units):
        decision.reason = "evidence not found in the input"
    elif not content:
        decision.reason = f"{verdict.decision} without content"
    else:
        outcome.decided.add(memory.id)
        outcome.covered |= covers
        outcome.updates.append(
            Candidate(
                content=content,
                topic=memory.topic,
                user_id=memory.user_id,
                properties=memory.properties or {},
                run_id=run_id,
                op="update",
                memory_id=memory.id,
                gate=verdict.decision,
            )
        )
        return
    outcome.frozen.add(memory.id)
