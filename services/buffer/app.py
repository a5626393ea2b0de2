"""Buffer: hold extracted items per scope until a trigger fires (`mnemo.kafka.stages.buffer`'s
transitions; count and topics-present fire on arrival, time triggers on ticks, each tick
a barrier of its partition since it changes every buffer there)."""

from __future__ import annotations

import faust

from mnemo.kafka.app import make_app
from mnemo.kafka.buffer_table import BufferTable, publish_ticks
from mnemo.kafka.channels import channel_names
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.events.codec import decode
from mnemo.kafka.events.stage import StageEvent
from mnemo.kafka.handler import Incoming, consume
from mnemo.kafka.runtime import Runtime
from mnemo.kafka.stages.erasure import withdrawn_if_erased
from mnemo.kafka.stages.routing import Emit
from mnemo.kafka.worker import Stage
from mnemo.settings import Settings

SERVICE = "buffer"


def create_app(settings: Settings) -> Stage:
    names = channel_names(settings.kafka)
    extracted, ticks = names.name(ChannelKind.extracted), names.name(ChannelKind.ticks)
    app = make_app(SERVICE, settings)
    rt = Runtime(SERVICE, settings, app)
    table = BufferTable.attach(app, rt)

    async def on_item(incoming: Incoming) -> list[Emit]:
        event = decode(StageEvent, incoming.value)
        incoming.run_ids, incoming.scope_key = event.batch.run_ids, event.scope_key
        if await withdrawn_if_erased(await rt.deps(), event.batch.run_ids):
            return []
        group = await (await rt.groups()).get(event.batch.project, event.batch.group)
        await table.arrive(event, group, incoming)
        return []

    async def on_tick(incoming: Incoming) -> list[Emit]:
        await table.tick(incoming.partition, await rt.groups())
        return []

    @app.agent(app.topic(extracted, ticks, key_serializer="raw", value_serializer="raw"))
    async def buffer(stream: faust.StreamT) -> None:
        await consume(
            rt, stream, lambda i: (on_tick, False) if i.topic == ticks else (on_item, True)
        )

    publish_ticks(app, rt, ticks, settings.kafka.buffer_tick_seconds)
    return Stage(app, rt)
