"""Driving one provider through every variant of a scenario, in-process on embedded Postgres.

Rounds run one after another: each user's event of a round is added at once (a correction's
recall search goes first, a minute earlier), the round waits for its runs and for
consolidation to settle, and the clock (a manual clock shared by the engine) moves an hour.
"""

from __future__ import annotations

import asyncio
from collections import Counter
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from sqlalchemy import func, select

from bench.dynamics import figures as fig
from bench.dynamics.scenario import Event, Scenario, current_values
from bench.dynamics.variants import Variant
from mnemo.clock import ManualClock
from mnemo.contracts.embedder import Embedder
from mnemo.contracts.llm import LLM, C, Prompt, R, produced_by
from mnemo.core.engine import Engine
from mnemo.domain.requests import AddRequest, ListRequest, SearchRequest
from mnemo.embedded.startup import start_engine
from mnemo.settings import Settings
from mnemo.store.schema import bus_records

GROUP = "bench"
START = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


class CountingLLM:
    """Counts calls per prompt, then asks the provider it wraps."""

    def __init__(self, inner: LLM) -> None:
        self.inner = inner
        self.label = inner.label
        # What the engine reads to tell a model from the offline heuristics (llm.base).
        self.produced_by = produced_by(inner)
        self.calls: Counter[str] = Counter()

    async def complete(self, prompt: Prompt[C, R], context: C) -> R:
        self.calls[prompt.name] += 1
        return await self.inner.complete(prompt, context)

    async def aclose(self) -> None:
        close = getattr(self.inner, "aclose", None)
        if close is not None:
            await close()


@dataclass
class Run:
    engine: Engine
    llm: CountingLLM
    clock: ManualClock


async def open_run(database_url: str, data_dir: Path, llm: LLM, embedder: Embedder) -> Run:
    clock = ManualClock(START)
    counting = CountingLLM(llm)
    settings = Settings(
        database_url=database_url, data_dir=data_dir, workers=8, bus_poll_seconds=0.05,
        buffer_tick_seconds=0.2, consolidation_tick_seconds=0.1,
    )  # fmt: skip
    engine = await start_engine(settings, llm=counting, embedder=embedder, clock=clock)
    return Run(engine, counting, clock)


async def run_variant(run: Run, scenario: Scenario, variant: Variant) -> fig.Figures:
    project = f"dyn-{scenario.family}-{variant.name}"
    await run.engine.put_group(project, GROUP, variant.group)
    before = Counter(run.llm.calls)
    figures = fig.Figures()
    for events in scenario.rounds:
        await _round(run, project, events, figures)
    run.clock.advance(7200)  # let idle triggers fire for the last episodes
    await _settle(run, rounds=3)
    figures.llm_calls = dict(Counter(run.llm.calls) - before)
    await _evaluate(run, project, scenario, variant, figures)
    return figures


async def _round(run: Run, project: str, events: list[Event], figures: fig.Figures) -> None:
    for event in events:
        if event.recall_query:
            await run.engine.search(project, _search(event, event.recall_query, 5))
    run.clock.advance(60)
    added = [(e, await run.engine.add(project, _add(e))) for e in events]
    figures.adds += len(added)
    for event, started in added:
        done = await run.engine.wait_run(project, started.run_id, 120)
        if done.status != "completed":
            raise RuntimeError(f"run {done.run_id} ended {done.status}: {done.error}")
        if event.kind == "restate":
            ops = done.committed_operations
            figures.restatements += 1
            if ops is not None:
                figures.restatement_writes += len(ops.created) + len(ops.updated) + len(ops.deleted)
    await _settle(run)
    run.clock.advance(3600)


async def _settle(run: Run, rounds: int = 1) -> None:
    """Until the bus is empty (consolidation checks included), twice in a row past a tick."""
    for _ in range(rounds):
        await asyncio.sleep(run.engine.settings.consolidation_tick_seconds * 2)
        for _ in range(2400):
            async with run.engine.db.connect() as conn:
                waiting = await conn.scalar(select(func.count()).select_from(bus_records))
            if not waiting:
                break
            await asyncio.sleep(0.05)


async def _evaluate(
    run: Run, project: str, scenario: Scenario, variant: Variant, figures: fig.Figures
) -> None:
    for user in scenario.users:
        here = Event(user.name, "fact", "", user.desk)
        listed, _ = await run.engine.list_memories(project, ListRequest.model_validate(
            {"group": GROUP, "user_id": user.name, "properties": {"desk_id": user.desk}, "limit": 100}))  # fmt: skip
        contents = [m.content for m in listed if m.topic != "Rules"]
        attributes = scenario.attributes
        for attribute, current in current_values(user).items():
            fig.count_key(figures, contents, attribute, attributes)
            hits = await run.engine.search(
                project, _search(here, str(attributes[attribute]["question"]), 5)
            )
            top = hits[0].content if hits else None
            fig.judge_top_hit(figures, top, attribute, current, attributes)
        if variant.consolidates:
            hits = await run.engine.search(project, _search(here, user.theme.question, 10))
            fig.rank_rule(figures, [h.topic for h in hits])


def _add(event: Event) -> AddRequest:
    return AddRequest.model_validate(
        {"input": {"string": {"content": [event.text]}}, "user_id": event.user, "group": GROUP,
         "properties": {"desk_id": event.desk}}
    )  # fmt: skip


def _search(event: Event, query: str, limit: int) -> SearchRequest:
    body: dict[str, Any] = {
        "query": query, "group": GROUP, "user_id": event.user,
        "properties": {"desk_id": event.desk}, "retrieval_config": {"limit": limit},
    }  # fmt: skip
    return SearchRequest.model_validate(body)
