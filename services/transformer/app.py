"""Transformer: consume batches, run `stages.transform`, produce to the next step's channel."""

from __future__ import annotations

import faust

from mnemo.kafka.app import make_app
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.events.codec import decode
from mnemo.kafka.events.stage import StageEvent
from mnemo.kafka.handler import Incoming, consume
from mnemo.kafka.runtime import Runtime
from mnemo.kafka.stages.routing import Emit
from mnemo.kafka.stages.transform import transform_stage
from mnemo.kafka.worker import Stage
from mnemo.settings import Settings

SERVICE = "transformer"


def create_app(settings: Settings) -> Stage:
    app = make_app(SERVICE, settings)
    rt = Runtime(SERVICE, settings, app)

    async def work(incoming: Incoming) -> list[Emit]:
        event = decode(StageEvent, incoming.value)
        incoming.run_ids, incoming.scope_key = event.batch.run_ids, event.scope_key
        return await transform_stage(await rt.deps(), await rt.groups(), event)

    @app.agent(rt.channels[ChannelKind.batches])
    async def transform(stream: faust.StreamT) -> None:
        await consume(rt, stream, lambda incoming: (work, True))

    return Stage(app, rt)
