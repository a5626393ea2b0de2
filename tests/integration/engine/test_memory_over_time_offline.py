"""The docs' "Memory over time" worked config (docs/memory-over-time.md), run as written with the offline provider
and the real local embedding model: what the README says the offline provider does holds."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from mnemo.core.engine import Engine
from mnemo.domain.memory import Memory, MemoryStatus
from tests.integration.engine.helpers import add_and_wait, listing, says, search

pytestmark = pytest.mark.integration
README = Path(__file__).resolve().parents[3] / "docs" / "memory-over-time.md"
DESK = {"group": "workshop", "user_id": "luthier-1", "properties": {"desk_id": "desk-9"}}
EPISODES = [
    "A tall bridge was fitted; the player reported a harsh response.",
    "The customer heard a wolf tone near C on the G string after the tall bridge job.",
    "A refit with a lower bridge cut and thinner feet; the wolf eased and the response evened out.",
]


def readme_section() -> str:
    text = README.read_text()
    start = text.index("\n## Memory over time\n")
    end = text.find("\n## ", start + 1)
    return text[start : end if end >= 0 else len(text)]


def worked_config() -> dict[str, Any]:
    """The section's first JSON block: the group document its curl example PUTs."""
    block = re.search(r"```json\n(.*?)```", readme_section(), re.S)
    assert block is not None, "no worked config in the docs' Memory over time section"
    document: dict[str, Any] = json.loads(block.group(1))
    return document


def quoted(text: str) -> bool:
    """`text` appears in the section (line breaks and spacing aside)."""
    return " ".join(text.split()) in " ".join(readme_section().split())


async def the_rule(engine: Engine, project: str, timeout: float = 60) -> Memory:
    deadline = asyncio.get_running_loop().time() + timeout
    while not (found := await listing(engine, project, topics=["Rules"], **DESK)):
        assert asyncio.get_running_loop().time() < deadline, "no rule was consolidated"
        await asyncio.sleep(0.2)
    [rule] = found
    return rule


async def test_the_worked_config_consolidates_offline(offline_engine: Engine, project: str) -> None:
    await offline_engine.put_group(project, "workshop", worked_config())
    ids = []
    for text in EPISODES:  # as the README's curl loop sends them
        items = {"pre_extracted": {"items": [{"topic": "Episodes", "content": text}]}}
        run = await add_and_wait(offline_engine, project, {**DESK, "input": items})
        assert run.status == "completed" and run.committed_operations is not None, run.error
        ids.append(run.committed_operations.created[0].memory_id)
    rule = await the_rule(offline_engine, project)

    assert rule.content.startswith("From 3 similar episodes: ")
    assert quoted(rule.content), f"the README does not quote the offline rule {rule.content!r}"
    hits = await search(offline_engine, project, "customer says the G string howls near C", **DESK)
    assert [h.id for h in hits] == [rule.id]
    sources = await offline_engine.memory_sources(project, "workshop", "luthier-1", rule.id)
    assert sources is not None and sorted(m.id for m in sources) == sorted(ids)
    assert {(m.status, m.consolidated_into) for m in sources} == {
        (MemoryStatus.consolidated, rule.id)
    }
    everything = await listing(offline_engine, project, include_consolidated=True, **DESK)
    assert {m.id for m in everything} == {rule.id, *ids}


async def test_the_worked_config_reconsolidates_offline(
    offline_engine: Engine, project: str
) -> None:
    await offline_engine.put_group(project, "workshop", worked_config())
    first = await add_and_wait(
        offline_engine, project, {**DESK, "input": says("I prefer dark mode.")}
    )
    assert first.committed_operations is not None
    [preference] = [o.memory_id for o in first.committed_operations.created]
    hits = await search(offline_engine, project, "which theme do I prefer?", **DESK)
    assert hits[0].id == preference  # the recall the next add's gate sees

    correction = "Actually I prefer light mode now."
    run = await add_and_wait(offline_engine, project, {**DESK, "input": says(correction)})
    run = await offline_engine.get_run(project, run.run_id)
    assert run.committed_operations is not None
    assert [o.memory_id for o in run.committed_operations.updated] == [preference]
    assert run.committed_operations.created == []
    assert run.reconsolidation is not None
    [decision] = run.reconsolidation
    assert (decision.decision, decision.evidence, decision.applied) == (
        "contradict", correction, True,
    )  # fmt: skip
    assert quoted(f'"evidence": "{correction}"')

    again = await add_and_wait(
        offline_engine, project, {**DESK, "input": says("I prefer light mode now.")}
    )
    again = await offline_engine.get_run(project, again.run_id)
    ops = again.committed_operations
    assert ops is not None and ops.created == ops.updated == ops.deleted == []
    assert again.reconsolidation is not None
    assert [(d.decision, d.applied) for d in again.reconsolidation] == [("match", False)]

    live = await listing(offline_engine, project, topics=["Preferences"], **DESK)
    assert [m.content for m in live] == ["User prefers light mode now."]
    history = await offline_engine.memory_history(project, "workshop", "luthier-1", preference)
    assert [v.content for v in history] == ["User prefers dark mode."]
