"""The memory page over HTTP: each version with the run that wrote it, a run's raw input
while it is retained, and a consolidated rule's source episodes."""

from __future__ import annotations

import html
import re

import pytest

from tests.api.fixtures import Tenant
from tests.console.helpers import api
from tests.console.scenarios import consolidated_rule, rewritten_memory
from tests.support.dynamics import EPISODES, RULE
from tests.support.scripted_llm import ScriptedLLMServer

pytestmark = pytest.mark.integration


def _rows(page: str) -> dict[int, str]:
    """The versions table's rows by version number, as text."""
    rows = re.findall(r'<tr[^>]*data-version="(\d+)"[^>]*>(.*?)</tr>', page, flags=re.S)
    return {int(v): html.unescape(re.sub(r"<[^>]+>", " ", body)) for v, body in rows}


def test_each_version_names_the_run_that_wrote_it_and_its_retained_input(
    tenant: Tenant, llm: ScriptedLLMServer
) -> None:
    memory_id, first, second = rewritten_memory(tenant, llm)
    with api(tenant) as client:
        page = client.get(f"/console/memories/{memory_id}", params={"user": tenant.user}).text
    rows = _rows(page)
    assert sorted(rows) == [1, 2]
    assert "I drink coffee every morning" in rows[1]
    assert first["run_id"][:8] in rows[1] and second["run_id"][:8] not in rows[1]
    assert "green tea" in rows[2] and second["run_id"][:8] in rows[2]
    assert "created" in rows[1] and "updated" in rows[2]
    # The runs' raw inputs, while the group keeps them.
    assert f"Input of run <code>{first['run_id'][:8]}</code>" in page
    assert "<li>I switched from coffee to green tea</li>" in page
    assert "model scripted" in " ".join(rows[2].split())  # what produced it: the run's label
    assert "Runs no longer on record" not in page


def test_a_redacted_input_is_said_to_be_so(tenant: Tenant, llm: ScriptedLLMServer) -> None:
    with api(tenant) as client:
        client.put(
            "/v1/groups/default",
            json={"template": "default", "retention": {"drop_raw_input_at_commit": True}},
        ).raise_for_status()
    memory_id, _, _ = rewritten_memory(tenant, llm)
    with api(tenant) as client:
        page = client.get(f"/console/memories/{memory_id}", params={"user": tenant.user}).text
    assert "(input redacted)" in _rows(page)[1]
    assert "Input of run" not in page and "I drink coffee every morning</li>" not in page


def test_a_consolidated_rule_lists_its_source_episodes(
    tenant: Tenant, llm: ScriptedLLMServer
) -> None:
    rule_id, episode_ids = consolidated_rule(tenant, llm)
    with api(tenant) as client:
        page = client.get(
            f"/console/memories/{rule_id}", params={"group": "luthier", "user": tenant.user}
        ).text
        episode = client.get(
            f"/console/memories/{episode_ids[0]}", params={"group": "luthier", "user": tenant.user}
        ).text
    text = html.unescape(page)
    assert RULE in text and "Source episodes" in page
    assert "consolidation of 3 episodes" in _rows(page)[1]
    for memory_id, content in zip(episode_ids, EPISODES, strict=True):
        assert f"/console/memories/{memory_id}?group=luthier" in page
        assert content in text
    assert "Runs no longer on record" not in page
    assert "a consolidation pass made it from the episodes above" in page
    assert "consolidated into a rule" in episode
