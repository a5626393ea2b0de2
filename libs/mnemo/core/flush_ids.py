"""Buffer keys and flush ids, the same on both transports.

A flush's id is derived from its buffer and the runs it holds, so a flush delivered twice
(a crash between producing it and clearing it, a record redelivered) carries the same id
and its commit applies once (`store.commits` keys applied batches by it).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable


def buffer_key(group: str, step_id: str, scope_key: str) -> str:
    """One buffer: a group's buffer step for one scope (the scope key names the project)."""
    return f"{group}|{step_id}|{scope_key}"


def flush_id(group: str, step_id: str, scope_key: str, run_ids: Iterable[str]) -> str:
    """The id of the flush of these runs (in their buffer order) from this buffer."""
    runs = ",".join(dict.fromkeys(run_ids))
    digest = hashlib.sha256(f"{buffer_key(group, step_id, scope_key)}|{runs}".encode())
    return f"flush-{digest.hexdigest()[:32]}"
