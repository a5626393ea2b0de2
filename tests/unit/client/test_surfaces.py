"""One source for the three client surfaces (issue 36).

The sync client is generated from the async one (scripts/generate_sync_client.py); the
embedded client answers the same calls from an in-process Engine, so its resources must take
exactly the async client's parameters. A call changed in aio.py fails here until sync.py is
regenerated and the embedded resource follows.
"""

from __future__ import annotations

import importlib.util
import inspect
from pathlib import Path

import pytest

from mnemo.client import aio, engine_client
from mnemo.client.embedded import EmbeddedClient

ROOT = Path(__file__).resolve().parents[3]
RESOURCES = ("Memories", "Runs", "Groups", "Users")
# What only a server has: an API key to verify, a project status page, the import endpoint.
HTTP_ONLY = {"verify", "status", "import_batch"}


def _public(cls: type) -> dict[str, inspect.Signature]:
    return {
        name: inspect.signature(f)
        for name, f in inspect.getmembers(cls, inspect.isfunction)
        if not name.startswith("_")
    }


def _parameters(signature: inspect.Signature) -> list[tuple[str, object, object]]:
    return [(p.name, p.kind, p.default) for p in signature.parameters.values()]


def test_the_sync_client_is_generated_from_the_async_one() -> None:
    spec = importlib.util.spec_from_file_location(
        "generate_sync_client", ROOT / "scripts" / "generate_sync_client.py"
    )
    assert spec and spec.loader
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    assert generator.main(["--check"]) == 0, "run scripts/generate_sync_client.py"


@pytest.mark.parametrize("resource", RESOURCES)
def test_the_embedded_resources_take_the_async_clients_parameters(resource: str) -> None:
    http, embedded = _public(getattr(aio, resource)), _public(getattr(engine_client, resource))
    assert set(embedded) == set(http)
    for name, signature in http.items():
        assert _parameters(embedded[name]) == _parameters(signature), f"{resource}.{name}"


def test_the_embedded_client_has_every_call_but_the_servers_own() -> None:
    http = set(_public(aio.AsyncMnemoClient)) - HTTP_ONLY
    assert http <= set(_public(EmbeddedClient))
