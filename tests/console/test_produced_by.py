"""Issue 32: every run says what produced it (the model's name, or `offline`): in
`GET /v1/runs/{id}` (an extension field), in provenance and as a console badge on runs and on
a memory's page. The live server here runs the scripted model "scripted"; the offline label
is tested on the engine (tests/integration/engine/test_supersession.py)."""

from __future__ import annotations

import httpx
import pytest

from tests.api.fixtures import Tenant
from tests.console.helpers import add, memory_id_of

pytestmark = pytest.mark.integration
BADGE = (
    '<span class="badge badge-info producer" title="produced by the model scripted">scripted</span>'
)


def test_runs_memories_and_provenance_name_the_model(tenant: Tenant) -> None:
    run = add(tenant, "I keep three hens")
    assert run["produced_by"] == "scripted"
    memory_id = memory_id_of(run)
    headers = {"Authorization": f"Bearer {tenant.key}"}
    with httpx.Client(base_url=tenant.url, timeout=60, headers=headers) as client:
        assert BADGE in client.get("/console/runs").text
        assert BADGE in client.get(f"/console/runs/{run['run_id']}").text
        page = client.get(f"/console/memories/{memory_id}", params={"user": tenant.user})
        assert BADGE in page.text
        provenance = client.get(
            f"/v1/memories/{memory_id}/provenance", params={"user_id": tenant.user}
        )
        assert provenance.status_code == 200, provenance.text
        [version] = provenance.json()["versions"]
        assert version["run"]["produced_by"] == "scripted"
