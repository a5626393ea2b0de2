"""One source for the three client surfaces (issue 36).

The sync client is generated from the async one (scripts/generate_sync_client.py). The
embedded client is the async client itself on another transport (EngineTransport), which
answers each call by the operation the call names: every call built in
mnemo.client.requests must name one the in-process transport performs.
"""

from __future__ import annotations

import ast
import importlib.util
import inspect
from pathlib import Path
from typing import Any, cast

from mnemo.client import aio, requests
from mnemo.client.embedded import EmbeddedClient
from mnemo.client.engine_client import _operations
from mnemo.core.granted import Granted
from mnemo.domain.grants import Grant

ROOT = Path(__file__).resolve().parents[3]


def _calls_built() -> list[ast.Call]:
    tree = ast.parse(inspect.getsource(requests))
    return [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "Call"
    ]


def _op(call: ast.Call) -> str | None:
    for keyword in call.keywords:
        if keyword.arg == "op" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    return None


def test_the_sync_client_is_generated_from_the_async_one() -> None:
    spec = importlib.util.spec_from_file_location(
        "generate_sync_client", ROOT / "scripts" / "generate_sync_client.py"
    )
    assert spec and spec.loader
    generator = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(generator)
    assert generator.main(["--check"]) == 0, "run scripts/generate_sync_client.py"


def test_every_call_names_an_operation_the_in_process_transport_performs() -> None:
    built = _calls_built()
    assert len(built) >= 15  # every request the client makes
    named = [_op(call) for call in built]
    assert None not in named, "a Call without op= cannot be sent to an in-process Engine"
    performed = _operations(Granted(cast(Any, None), Grant("p")))
    assert set(named) <= set(performed), set(named) - set(performed)


def test_the_embedded_client_is_the_async_client() -> None:
    assert issubclass(EmbeddedClient, aio.AsyncMnemoClient)
