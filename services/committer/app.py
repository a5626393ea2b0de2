"""Committer: apply drafts with `stages.commit`, emit run status; apply run-status events;
run consolidation passes (`mnemo.kafka.consolidation`)."""

from __future__ import annotations

import faust

from mnemo.events.channels import ChannelKind
from mnemo.events.codec import decode
from mnemo.events.stage import StageEvent
from mnemo.events.status import RunStatusEvent
from mnemo.kafka.app import make_app
from mnemo.kafka.channels import channel_names
from mnemo.kafka.consolidation import attach_consolidation
from mnemo.kafka.handler import Incoming, handle
from mnemo.kafka.runtime import Runtime
from mnemo.settings import Settings
from mnemo.stages.commit import commit_stage
from mnemo.stages.routing import Emit
from mnemo.stages.status import apply_status

SERVICE = "committer"


def create_app(settings: Settings) -> faust.App:
    names = channel_names(settings.kafka)
    kinds = (ChannelKind.drafts, ChannelKind.status, ChannelKind.consolidation)
    sources = [names.name(kind) for kind in kinds]
    app = make_app(SERVICE, settings, sources)
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

    @app.agent(rt.channels[ChannelKind.drafts])
    async def commit(stream: faust.StreamT) -> None:
        async for event in stream.events():
            await handle(rt, Incoming.of(event), commit_work)

    @app.agent(rt.channels[ChannelKind.status])
    async def status(stream: faust.StreamT) -> None:
        async for event in stream.events():
            await handle(rt, Incoming.of(event), status_work)

    attach_consolidation(app, rt)
    return app
