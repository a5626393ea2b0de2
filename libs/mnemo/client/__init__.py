"""Python clients for mnemo: sync and async over HTTP, and embedded (in-process)."""

from mnemo.client.aio import AsyncMnemoClient
from mnemo.client.embedded import EmbeddedClient
from mnemo.client.errors import (
    APIError,
    AuthenticationError,
    ConflictError,
    ConnectionError,
    MnemoError,
    NotFoundError,
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
    Run,
    SearchResults,
    StringInput,
    Topic,
    VectorRetrieval,
)
from mnemo.client.sync import MnemoClient

__all__ = [
    "APIError",
    "AddResult",
    "AsyncMnemoClient",
    "AuthenticationError",
    "BM25Retrieval",
    "ConflictError",
    "ConnectionError",
    "ConversationInput",
    "EmbeddedClient",
    "FetchRetrieval",
    "HybridRetrieval",
    "Memory",
    "MemoryVersion",
    "Message",
    "MnemoClient",
    "MnemoError",
    "NotFoundError",
    "PreExtractedInput",
    "PreExtractedItem",
    "Run",
    "RunTimeoutError",
    "SearchResults",
    "StringInput",
    "Topic",
    "ValidationError",
    "VectorRetrieval",
]
