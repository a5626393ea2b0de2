"""Isolation across users, groups and projects; user ids are case-insensitive.

A memory addressed by id with another owner answers 404, as a missing one does; a user id
the project has never seen answers Engram's 422 (see test_other_user_cannot_get_or_find)."""

from __future__ import annotations

import httpx
import pytest
from engram import APIError, EngramClient

from tests.api.fixtures import Tenant
from tests.api.live_server import LiveServer

pytestmark = pytest.mark.integration


@pytest.fixture
def stored(tenant: Tenant) -> tuple[EngramClient, str]:
    client = EngramClient(base_url=tenant.url, api_key=tenant.key)
    run = client.memories.add("My secret hobby is falconry", user_id=tenant.user)
    status = client.runs.wait(run.run_id, timeout=30, interval=0.1)
    client.run_id = run.run_id  # type: ignore[attr-defined]
    yield client, status.memories_created[0].memory_id
    client.close()


def _status(call) -> int:
    with pytest.raises(APIError) as caught:
        call()
    return caught.value.status_code


def _know(client: EngramClient, user_id: str) -> None:
    """Make `user_id` known to the client's project: Engram creates a user on their first add."""
    run = client.memories.add(f"{user_id} likes tea", user_id=user_id)
    client.runs.wait(run.run_id, timeout=30, interval=0.1)


def test_other_user_cannot_get_or_find(stored, tenant: Tenant) -> None:
    """Another user of the project gets 404 on get and delete, exactly as for a memory that
    does not exist, so a memory's existence never leaks across users. Only a user the
    project has never seen gets Engram's 422 (api-overview: "an unknown user_id on a get
    or delete"): that names the caller's own mistake and says nothing about the memory."""
    client, memory_id = stored
    _know(client, "someone-else")
    assert _status(lambda: client.memories.get(memory_id, user_id="someone-else")) == 404
    assert _status(lambda: client.memories.get(memory_id)) == 404
    assert _status(lambda: client.memories.delete(memory_id, user_id="someone-else")) == 404
    assert _status(lambda: client.memories.get("no-such-id", user_id="someone-else")) == 404
    for never_seen in (lambda: client.memories.get(memory_id, user_id="nobody-here"),
                       lambda: client.memories.delete(memory_id, user_id="nobody-here")):  # fmt: skip
        assert _status(never_seen) == 422
    found = client.memories.search(query="falconry hobby", user_id="someone-else")
    assert memory_id not in [m.id for m in found]  # they find only their own tea
    assert len(client.memories.search(query="falconry hobby", user_id=tenant.user)) == 1
    assert client.memories.get(memory_id, user_id=tenant.user).id == memory_id  # not deleted


def test_user_id_is_case_insensitive(stored, tenant: Tenant) -> None:
    client, memory_id = stored
    assert client.memories.get(memory_id, user_id=tenant.user.upper()).id == memory_id
    found = client.memories.search(query="falconry", user_id=f"  {tenant.user.upper()} ")
    assert [m.id for m in found] == [memory_id]


def test_other_group_cannot_get(stored, tenant: Tenant) -> None:
    client, memory_id = stored
    response = httpx.put(
        f"{tenant.url}/v1/groups/other",
        headers={"Authorization": f"Bearer {tenant.key}"},
        json={"template": "default"},
    )
    assert response.status_code == 200, response.text
    assert (
        _status(lambda: client.memories.get(memory_id, user_id=tenant.user, group="other")) == 404
    )
    assert (
        _status(lambda: client.memories.get(memory_id, user_id=tenant.user, group="missing")) == 404
    )


def test_other_project_cannot_get(stored, tenant: Tenant, live_server: LiveServer) -> None:
    client, memory_id = stored
    other_key = live_server.create_key(f"{tenant.project}-other")
    with EngramClient(base_url=tenant.url, api_key=other_key) as intruder:
        # The other project has never seen the user: Engram's 422, about that project alone.
        assert _status(lambda: intruder.memories.get(memory_id, user_id=tenant.user)) == 422
        # Once it has a user of that name, the memory of this project is still a 404.
        _know(intruder, tenant.user)
        assert _status(lambda: intruder.memories.get(memory_id, user_id=tenant.user)) == 404
        assert _status(lambda: intruder.memories.delete(memory_id, user_id=tenant.user)) == 404
        found = intruder.memories.search(query="falconry", user_id=tenant.user)
        assert memory_id not in [m.id for m in found]
        assert _status(lambda: intruder.runs.get(client.run_id)) == 404
    assert client.memories.get(memory_id, user_id=tenant.user).id == memory_id  # not deleted
