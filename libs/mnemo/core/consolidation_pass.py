"""The consolidation pass policy, the same on both transports; each transport only says
how a pass runs in its transactions (`attempt`) and how a failure is written (`record`).

- A check for a group that is gone, or no longer consolidates, is done: nothing runs.
- A failure that is not transient is recorded on the scope (`last_error`) and the check is
  done: the next trigger retries the pass, so nothing goes to the DLQ or is retried hot.
- A transient failure (an outage) is raised: the transport retries the record in place.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from mnemo.core.failures import describe, is_transient
from mnemo.core.groups import GroupCache
from mnemo.domain.consolidation import EpisodeScope
from mnemo.domain.group import GroupConfig
from mnemo.domain.requests import NotFound

log = logging.getLogger(__name__)


async def run_pass(
    groups: GroupCache,
    scope: EpisodeScope,
    attempt: Callable[[GroupConfig], Awaitable[None]],
    record: Callable[[str], Awaitable[None]],
) -> None:
    """Run the scope's pass (`attempt`, given the group as it stands) under the policy."""
    try:
        group = await groups.get(scope.project, scope.group)
    except NotFound:
        return  # the group is gone
    if group.consolidation is None:
        return
    try:
        await attempt(group)
    except Exception as exc:
        if is_transient(exc):
            raise
        log.warning("consolidation of %s/%s failed: %s", scope.group, scope.key, describe(exc))
        await record(describe(exc))
