"""Committer: apply drafts with `stages.commit`, emit run status; apply run-status events;
redact raw inputs past their retention; run consolidation passes (`mnemo.kafka.consolidation`)."""

from __future__ import annotations

import faust

from mnemo.kafka.app import make_app
from mnemo.kafka.consolidation import attach_consolidation
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.events.codec import decode
from mnemo.kafka.events.stage import StageEvent
from mnemo.kafka.events.status import RunStatusEvent
from mnemo.kafka.handler import Incoming, consume
from mnemo.kafka.runtime import Runtime
from mnemo.kafka.stages.commit import commit_stage
from mnemo.kafka.stages.routing import Emit
from mnemo.kafka.stages.status import apply_status
from mnemo.kafka.sweeps import sweep_retention_periodically
from mnemo.kafka.worker import Stage
from mnemo.settings import Settings

SERVICE = "committer"


def create_app(settings: Settings) -> Stage:
    app = make_app(SERVICE, settings)
    rt = Runtime(SERVICE, settings, app)

    async def commit_work(incoming: Incoming) -> list[Emit]:
        event = decode(StageEvent, incoming.value)
        incoming.run_ids, incoming.scope_key = event.batch.run_ids, event.scope_key
        outcome = await commit_stage(await rt.deps(), await rt.groups(), event, SERVICE)
        return outcome.emits

    async def status_work(incoming: Incoming) -> list[Emit]:
        event = decode(RunStatusEvent, incoming.value)
        deps = await rt.deps()
        await apply_status(deps.db, event, deps.clock.now())
        return []

    sweep_retention_periodically(app, rt)

    @app.agent(rt.channels[ChannelKind.drafts])
    async def commit(stream: faust.StreamT) -> None:
        await consume(rt, stream, lambda incoming: (commit_work, True))

    @app.agent(rt.channels[ChannelKind.status])
    async def status(stream: faust.StreamT) -> None:
        await consume(rt, stream, lambda incoming: (status_work, True))

    attach_consolidation(app, rt)
    return Stage(app, rt)
