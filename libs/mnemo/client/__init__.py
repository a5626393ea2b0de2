"""Python clients for mnemo: sync and async over HTTP, and embedded (in-process).

`EmbeddedClient` is imported on first use: it brings the whole engine, which the HTTP
clients (and the CLI's remote commands) must not pay for.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mnemo.client.aio import AsyncMnemoClient
from mnemo.client.errors import (
    APIError,
    AuthenticationError,
    ConflictError,
    MnemoConnectionError,
    MnemoError,
    NotFoundError,
    PermissionDeniedError,
    RunTimeoutError,
    ValidationError,
)
from mnemo.client.models import (
    AddResult,
    BM25Retrieval,
    ConversationInput,
    FetchRetrieval,
    HybridRetrieval,
    Memory,
    MemoryVersion,
    Message,
    PreExtractedInput,
    PreExtractedItem,
    Provenance,
    Run,
    SearchResults,
    StringInput,
    Topic,
    VectorRetrieval,
)
from mnemo.client.sync import MnemoClient

if TYPE_CHECKING:
    from mnemo.client.embedded import EmbeddedClient

__all__ = [
    "APIError",
    "AddResult",
    "AsyncMnemoClient",
    "AuthenticationError",
    "BM25Retrieval",
    "ConflictError",
    "ConversationInput",
    "EmbeddedClient",
    "FetchRetrieval",
    "HybridRetrieval",
    "Memory",
    "MemoryVersion",
    "Message",
    "MnemoClient",
    "MnemoConnectionError",
    "MnemoError",
    "NotFoundError",
    "PermissionDeniedError",
    "PreExtractedInput",
    "PreExtractedItem",
    "Provenance",
    "Run",
    "RunTimeoutError",
    "SearchResults",
    "StringInput",
    "Topic",
    "ValidationError",
    "VectorRetrieval",
]


def __getattr__(name: str) -> Any:
    if name == "ConnectionError":  # deprecated alias of MnemoConnectionError (it warns)
        from mnemo.client import errors

        return errors.ConnectionError
    if name == "EmbeddedClient":
        from mnemo.client.embedded import EmbeddedClient

        return EmbeddedClient
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
