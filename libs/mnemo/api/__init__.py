"""The HTTP gateway speaking the Engram v1 REST API.

`create_app` is imported lazily so that `mnemo.api.schemas` (pure pydantic) can be shared
with the client without importing FastAPI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mnemo.api.app import create_app

__all__ = ["create_app"]


def __getattr__(name: str) -> Any:
    if name == "create_app":
        from mnemo.api.app import create_app

        return create_app
    raise AttributeError(name)
