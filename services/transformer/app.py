"""Transformer: consume batches, run `stages.transform`, produce to the next step's topic."""

from __future__ import annotations

import faust

from mnemo.events.codec import decode
from mnemo.events.stage import StageEvent
from mnemo.events.topics import TopicKind
from mnemo.kafka.app import make_app
from mnemo.kafka.handler import Incoming, handle
from mnemo.kafka.runtime import Runtime
from mnemo.kafka.settings import KafkaSettings
from mnemo.kafka.topics import topic_names
from mnemo.stages.routing import Emit
from mnemo.stages.transform import transform_stage

SERVICE = "transformer"


def create_app(ks: KafkaSettings) -> faust.App:
    app = make_app(SERVICE, ks, [topic_names(ks).name(TopicKind.batches)])
    rt = Runtime(SERVICE, ks, app)

    async def work(incoming: Incoming) -> list[Emit]:
        event = decode(StageEvent, incoming.value)
        incoming.run_ids, incoming.scope_key = event.batch.run_ids, event.key
        return await transform_stage(await rt.deps(), await rt.groups(), event)

    @app.agent(rt.topics[TopicKind.batches])
    async def transform(stream: faust.StreamT) -> None:
        async for event in stream.events():
            await handle(rt, Incoming.of(event), work)

    return app
