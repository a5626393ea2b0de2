"""Consolidation passes: a scope's pending episodes become rules, one LLM call per cluster.

- `note_episodes` (inside a commit) counts the episodes a batch created per scope and
  returns the scopes whose triggers fire now (count triggers);
- `due_scopes` (a periodic tick) returns the scopes whose time triggers fire;
- `plan_pass` reads the scope's pending episodes and rules, clusters them
  (`mnemo.steps.clustering`), and asks the LLM (prompt `consolidate`) for one rule per new
  cluster of at least `min_episodes`, and for a rewrite of each rule that new episodes join,
  unless the rule already covers them (`covered`: they are linked to it without a call);
- `apply_pass` writes the plan through the commit path (`store.commits`), which links every
  rule to its sources and applies the source policy.
The transports run a pass per scope one at a time, in order (a key per scope).
"""

from __future__ import annotations

import hashlib
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy.ext.asyncio import AsyncConnection

from mnemo import metrics
from mnemo.deps import Deps
from mnemo.domain.consolidation import ConsolidationConfig, EpisodeScope
from mnemo.domain.group import GroupConfig, GroupSource
from mnemo.domain.memory import Candidate
from mnemo.domain.requests import NotFound
from mnemo.prompts import consolidate as prompt
from mnemo.steps.answer_guards import check_ids, check_rewrites, is_placeholder
from mnemo.steps.buffering import Waiting, due_reason
from mnemo.steps.clustering import assign_to_rules, cluster, typical_of
from mnemo.store import commits
from mnemo.store import consolidation as store
from mnemo.store.consolidation import Episode, Rule

_RULE_NAMESPACE = uuid.UUID("9d3c2a41-5f0e-4b8a-b1c7-2e6f8a0d4c13")
# A scope whose last pass failed is not retried by the tick for this long (a new episode
# still retries it at once).
RETRY_FAILED_SECONDS = 300.0
# The rule's earlier sources shown to the LLM when new episodes join it (the newest).
EARLIER_SHOWN = 20


@dataclass
class Plan:
    pass_id: str
    reason: str
    started: datetime
    seen: int  # the scope's new episodes this pass accounts for
    candidates: list[Candidate] = field(default_factory=list)
    linked: int = 0  # rules that took new sources without a call (`covered`)


def _spec_scope(
    group: GroupConfig, project: str, user_id: str | None, props: dict[str, str]
) -> EpisodeScope:
    config = _config(group)
    spec = config.scope_of({t.name: t for t in group.topics})
    return EpisodeScope.of(project, group.name, spec, user_id, props)


def _config(group: GroupConfig) -> ConsolidationConfig:
    assert group.consolidation is not None, f"group '{group.name}' does not consolidate"
    return group.consolidation


def waiting_of(row: Any) -> Waiting | None:
    if row is None or not row.new_count or row.first_new_at is None:
        return None
    return Waiting(row.new_count, row.first_new_at, row.last_new_at or row.first_new_at)


async def note_episodes(
    tx: AsyncConnection,
    project: str,
    group: GroupConfig,
    created: Sequence[Candidate],
    now: datetime,
) -> list[EpisodeScope]:
    """Count the episodes among `created` per scope; the scopes that are due now."""
    if group.consolidation is None:
        return []
    episodes = set(group.consolidation.episode_topics)
    counted: dict[str, tuple[EpisodeScope, int]] = {}
    for c in created:
        if c.topic in episodes:
            scope = _spec_scope(group, project, c.user_id, c.properties)
            counted[scope.key] = (scope, counted.get(scope.key, (scope, 0))[1] + 1)
    due = []
    triggers = group.consolidation.effective_triggers
    for scope, count in counted.values():
        waiting = waiting_of(await store.note_new(tx, scope, count, now))
        if waiting is not None and due_reason(triggers, waiting, now) is not None:
            due.append(scope)
    return due


async def due_scopes(
    conn: AsyncConnection, groups: GroupSource, now: datetime
) -> list[tuple[GroupConfig, EpisodeScope]]:
    """Every scope whose trigger fires at `now` (the time triggers' periodic check)."""
    out = []
    for row in await store.waiting(conn):
        try:
            group = await groups.get(row.project, row.group)
        except NotFound:
            continue
        if group.consolidation is None:
            continue
        if row.last_error and row.last_pass_at is not None:
            if (now - row.last_pass_at) < timedelta(seconds=RETRY_FAILED_SECONDS):
                continue
        waiting = waiting_of(row)
        if waiting and due_reason(group.consolidation.effective_triggers, waiting, now):
            out.append((group, EpisodeScope(row.project, row.group, row.user_id, row.properties)))
    return out


async def plan_pass(
    deps: Deps, conn: AsyncConnection, group: GroupConfig, scope: EpisodeScope
) -> Plan | None:
    """What a pass over the scope would write, or None when no trigger fires now."""
    config = _config(group)
    now = deps.clock.now()
    row = await store.state(conn, scope)
    waiting = waiting_of(row)
    reason = due_reason(config.effective_triggers, waiting, now) if waiting else None
    if reason is None or waiting is None:
        return None
    pending = await store.pending_episodes(conn, group, scope)
    rules = await store.rules(conn, group, scope)
    joins = assign_to_rules(
        [e.vector for e in pending],
        [[s.vector for s in r.sources] for r in rules],
        config.similarity,
    )
    rest = [e for e, j in zip(pending, joins, strict=True) if j is None]
    groups = [[rest[i] for i in c] for c in cluster([e.vector for e in rest], config.similarity)]
    digest = hashlib.sha256(
        "|".join([scope.key, *sorted(e.id for e in pending), *sorted(r.id for r in rules)]).encode()
    ).hexdigest()[:24]
    plan = Plan(pass_id=f"consolidation-{digest}", reason=reason, started=now, seen=waiting.count)
    for index, rule in enumerate(rules):
        joining = [e for e, j in zip(pending, joins, strict=True) if j == index]
        if joining and covered(rule, joining):
            plan.candidates.append(_link_only(group, scope, plan, rule, joining))
            plan.linked += 1
        elif joining:
            plan.candidates += await _rewrite(deps, group, scope, plan, rule, joining)
    for members in groups:
        if len(members) >= config.min_episodes:
            plan.candidates += await _new_rule(deps, group, scope, plan, members)
    return plan


# Words by which an episode may contradict or qualify what a rule rests on: such an episode
# always goes to the model, however similar it is.
_CONTRAST = re.compile(
    r"\b(?:not|no|never|nothing|neither|nor|without|instead|anymore|longer|however|although|"
    r"despite|unlike|failed|fails|worse|wrong|stopped|stop|didn't|doesn't|don't|wasn't|"
    r"isn't|won't|can't|couldn't)\b|n't\b",
    re.IGNORECASE,
)


def covered(rule: Rule, joining: list[Episode]) -> bool:
    """Whether the rule already covers the episodes that join it, so rewriting it would
    spend a call on one more instance of its own evidence: every joining episode is at least
    as typical of the rule's sources as they are of each other (`typical_of`), and none says
    anything by way of contrast or negation (a word of `_CONTRAST`) that the sources do not
    say. Such episodes are linked to the rule as further sources, its content unchanged."""
    said = {w.lower() for s in rule.sources for w in _CONTRAST.findall(s.content)}
    if any(w.lower() not in said for e in joining for w in _CONTRAST.findall(e.content)):
        return False
    return typical_of([e.vector for e in joining], [s.vector for s in rule.sources])


def _link_only(
    group: GroupConfig, scope: EpisodeScope, plan: Plan, rule: Rule, joining: list[Episode]
) -> Candidate:
    """The rule as it stands, with the joining episodes as further sources: the commit
    writes no version for unchanged content, it only links them."""
    ids = [e.id for e in joining]
    return _candidate(group, scope, plan, rule.content, rule.id, ids, "update")


async def _new_rule(
    deps: Deps, group: GroupConfig, scope: EpisodeScope, plan: Plan, members: list[Episode]
) -> list[Candidate]:
    config = _config(group)
    answer = await _ask(deps, group, members, None, [])
    used = _used(answer, members)
    if answer.rule is None or not answer.rule.strip() or len(used) < config.min_episodes:
        return []
    rule_id = str(uuid.uuid5(_RULE_NAMESPACE, f"{plan.pass_id}:{used[0]}"))
    return [_candidate(group, scope, plan, answer.rule, rule_id, used, "create")]


async def _rewrite(
    deps: Deps,
    group: GroupConfig,
    scope: EpisodeScope,
    plan: Plan,
    rule: Rule,
    joining: list[Episode],
) -> list[Candidate]:
    answer = await _ask(deps, group, joining, rule.content, rule.sources[-EARLIER_SHOWN:])
    used = _used(answer, joining)
    if answer.rule is None or not answer.rule.strip() or not used:
        return []
    return [_candidate(group, scope, plan, answer.rule, rule.id, used, "update")]


async def _ask(
    deps: Deps,
    group: GroupConfig,
    episodes: list[Episode],
    current: str | None,
    earlier: list[Episode],
) -> prompt.Response:
    config = _config(group)
    topic = group.topic(config.rule_topic)
    context = prompt.Context(
        rule_topic=topic.name,
        rule_description=topic.description,
        instructions=config.instructions,
        current_rule=current,
        earlier=[_brief(e) for e in earlier],
        episodes=[_brief(e) for e in episodes],
        today=deps.clock.now().date().isoformat(),
    )
    return await deps.llm.complete(prompt.PROMPT, context)


def _brief(episode: Episode) -> prompt.Episode:
    return prompt.Episode(
        id=episode.id, content=episode.content, date=episode.created_at.date().isoformat()
    )


def _used(answer: prompt.Response, episodes: list[Episode]) -> list[str]:
    """The episodes the rule rests on: those the answer named (all when it named none)."""
    ids = [e.id for e in episodes]
    if answer.rule is not None and is_placeholder(answer.rule) and answer.rule.strip():
        check_rewrites("consolidate", [answer.rule])
    if answer.used is None:
        return ids
    named = set(answer.used)
    check_ids("consolidate", named, ids)
    return [i for i in ids if i in named]


def _candidate(
    group: GroupConfig,
    scope: EpisodeScope,
    plan: Plan,
    content: str,
    rule_id: str,
    sources: list[str],
    op: str,
) -> Candidate:
    return Candidate(
        content=content.strip(),
        topic=_config(group).rule_topic,
        user_id=scope.user_id,
        properties=dict(scope.properties),
        run_id=plan.pass_id,
        op="create" if op == "create" else "update",
        memory_id=rule_id,
        sources=sources,
    )


async def apply_pass(
    deps: Deps, tx: AsyncConnection, group: GroupConfig, scope: EpisodeScope, plan: Plan
) -> commits.Operations | None:
    """Write the plan through the commit path and close the pass; None when this pass was
    applied before (a redelivery)."""
    now = deps.clock.now()
    ops: commits.Operations | None = commits.Operations()
    if plan.candidates:
        contents = sorted({c.content for c in plan.candidates})
        vectors = await deps.embedder.embed(contents)
        embeddings = dict(zip(contents, vectors, strict=True))
        ops = await commits.apply(
            tx, plan.pass_id, scope.project, group, plan.candidates, embeddings, now
        )
    await store.finish_pass(tx, scope, plan.seen, plan.started, now)
    _count(ops, plan)
    return ops


def _count(ops: commits.Operations | None, plan: Plan) -> None:
    if ops is None:
        metrics.CONSOLIDATION_PASSES.labels(outcome="redelivered").inc()
        return
    done = ops.by_run.get(plan.pass_id, {})
    for kind, label in (("created", "rule_created"), ("updated", "rule_updated")):
        if done.get(kind):
            metrics.CONSOLIDATION_PASSES.labels(outcome=label).inc(len(done[kind]))
    if plan.linked:
        metrics.CONSOLIDATION_PASSES.labels(outcome="rule_linked").inc(plan.linked)
    if not done.get("created") and not done.get("updated") and not plan.linked:
        metrics.CONSOLIDATION_PASSES.labels(outcome="no_rule").inc()
    metrics.CONSOLIDATED_EPISODES.inc(sum(len(c.sources) for c in plan.candidates))


async def record_failure(deps: Deps, tx: AsyncConnection, scope: EpisodeScope, error: str) -> None:
    now = deps.clock.now()
    await store.finish_pass(tx, scope, 0, now, now, error=error)
    metrics.CONSOLIDATION_PASSES.labels(outcome="failed").inc()
