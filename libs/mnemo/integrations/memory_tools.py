"""remember and recall for one user: the logic every framework adapter wraps.

The user is fixed by the application when it builds the tools, never chosen by the model, so
an agent acting for one user reads and writes only that user's memories. Answers are short
texts, which every framework hands to the model as the tool result.
"""

from __future__ import annotations

import importlib
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from types import ModuleType

from mnemo.client.aio import AsyncMnemoClient
from mnemo.client.models import HybridRetrieval

REMEMBER_DESCRIPTION = (
    "Store a fact about the user that is worth remembering in later conversations: "
    "preferences, plans, people, facts about their life or work."
)
RECALL_DESCRIPTION = (
    "Search what is remembered about the user. Use it before answering a question that "
    "depends on the user's life, preferences or earlier conversations."
)
FACT_DESCRIPTION = "One self-contained fact, in the user's words where possible"
QUERY_DESCRIPTION = "What to look for, as a question or keywords"
NOTHING_FOUND = "Nothing is remembered about that."


def require(module: str, framework: str) -> ModuleType:
    """Import a framework's module, or say how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(
            f"mnemo's {framework} integration needs the '{module.split('.')[0]}' package: "
            "pip install 'mnemo[agents]'"
        ) from exc


@dataclass(frozen=True)
class MemoryTools:
    """remember/recall over a mnemo server, for one user (and group)."""

    client: AsyncMnemoClient
    user_id: str
    group: str | None = None
    limit: int = 5
    # How long remember waits for the pipeline, so that a recall in the next step sees it.
    wait_seconds: float = 60.0

    async def remember(self, fact: str) -> str:
        """Store `fact`; answers what mnemo made of it once its run has finished."""
        added = await self.client.memories.add(fact, user_id=self.user_id, group=self.group)
        run = await self.client.runs.wait(added.run_id, timeout=self.wait_seconds)
        if run.status == "failed":
            return f"Could not remember that: {run.error}"
        ops = run.committed_operations
        created, updated = (len(ops.created), len(ops.updated)) if ops else (0, 0)
        if not created and not updated:
            return "Already remembered; nothing new to store."
        return f"Remembered ({created} new, {updated} updated)."

    async def recall(self, query: str) -> str:
        """The user's memories that best match `query`, one a line, best first."""
        found = await self.client.memories.search(
            query,
            user_id=self.user_id,
            group=self.group,
            retrieval_config=HybridRetrieval(limit=self.limit),
        )
        if not found:
            return NOTHING_FOUND
        return "\n".join(f"- {memory.content}" for memory in found)


ToolFunction = Callable[[str], Awaitable[str]]


def documented_functions(core: MemoryTools) -> tuple[ToolFunction, ToolFunction]:
    """`remember(fact)` and `recall(query)` as plain async functions whose names, argument
    names and Google-style docstrings carry the tool descriptions, for frameworks that read
    a tool's schema from the function itself (OpenAI Agents SDK, Pydantic AI)."""

    async def remember(fact: str) -> str:
        return await core.remember(fact)

    async def recall(query: str) -> str:
        return await core.recall(query)

    remember.__doc__ = f"{REMEMBER_DESCRIPTION}\n\nArgs:\n    fact: {FACT_DESCRIPTION}"
    recall.__doc__ = f"{RECALL_DESCRIPTION}\n\nArgs:\n    query: {QUERY_DESCRIPTION}"
    return remember, recall
