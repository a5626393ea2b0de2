"""Consolidation in the committer service: an agent on the consolidation channel that runs
each scope's pass (`stages.consolidate`), and a timer that publishes the checks whose time
triggers fire. The committer owns commits, so passes write through the same path as runs.

Every committer replica's timer looks at every waiting scope; a check it published a moment
ago is not published again within two ticks, and a duplicate that slips through finds its
trigger no longer due. The timer backs off while Postgres or the broker is down
(`mnemo.kafka.timers`) instead of ending the service.
"""

from __future__ import annotations

import time

import faust

from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.events.codec import decode
from mnemo.kafka.events.consolidation import ConsolidationCheck
from mnemo.kafka.handler import Incoming, consume
from mnemo.kafka.runtime import Runtime
from mnemo.kafka.stages.consolidate import consolidate_stage, due_checks
from mnemo.kafka.stages.routing import Emit
from mnemo.kafka.timers import guarded, transient_waits


def attach_consolidation(app: faust.App, rt: Runtime) -> None:
    every = rt.settings.consolidation_tick_seconds
    published: dict[str, float] = {}

    async def work(incoming: Incoming) -> list[Emit]:
        check = decode(ConsolidationCheck, incoming.value)
        incoming.scope_key = check.scope.key
        await consolidate_stage(await rt.deps(), await rt.groups(), check)
        return []

    @app.agent(rt.channels[ChannelKind.consolidation])
    async def consolidate(stream: faust.StreamT) -> None:
        await consume(rt, stream, lambda incoming: (work, True))

    @app.timer(every)
    @guarded(f"{rt.service}: consolidation timer", *transient_waits(rt.settings))
    async def consolidation_tick() -> None:
        now = time.monotonic()
        for key, at in list(published.items()):
            if now - at > 2 * every:
                del published[key]
        emits = [e for e in await due_checks(await rt.deps(), await rt.groups())
                 if e.scope_key not in published]  # fmt: skip
        await rt.emit(emits)
        published.update((e.scope_key, now) for e in emits)
