"""What older `weaviate-engram` SDK releases read differently from Engram's current API.

weaviate-engram 0.1.0 and 0.2.0 parse each search result as `{"Body": memory}`; 0.3.0 and
every later release read the memory itself, as Engram's spec has it. Those two releases
are told apart by the User-Agent they always send (`weaviate-engram/0.1.0`); 0.3.0 to 0.6.0
send their own version there, and 1.x sends none (it sends `X-Engram-Client` instead), so
no current client is ever answered the old shape. A caller that overrides User-Agent with
an old release's value asks for that release's shape.
"""

from __future__ import annotations

import re

_BODY_WRAPPED = re.compile(r"weaviate-engram/0\.[12]\.\d+(?:\s|$)")


def wraps_search_results(user_agent: str | None) -> bool:
    """Whether the client reads search results wrapped as `{"Body": memory}`."""
    return user_agent is not None and _BODY_WRAPPED.match(user_agent.strip()) is not None


def wrapped(page: dict[str, object]) -> dict[str, object]:
    """A search page in the 0.1/0.2 shape: each memory under `Body`, `total` as is."""
    memories = page.get("memories")
    assert isinstance(memories, list)
    return {**page, "memories": [{"Body": memory} for memory in memories]}
