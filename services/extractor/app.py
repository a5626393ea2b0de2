"""Extractor: consume raw adds, run `stages.extract`, produce to the next step's topic.

Sliding-window buffers (which precede extract) keep their windows in a faust table.
"""

from __future__ import annotations

from typing import cast

import faust
from faust.types import TableT

from mnemo.events.codec import decode
from mnemo.events.raw import RawEvent, derived_run_id
from mnemo.events.topics import TopicKind
from mnemo.kafka.app import json_schema, make_app
from mnemo.kafka.handler import Incoming, handle
from mnemo.kafka.runtime import Runtime
from mnemo.kafka.settings import KafkaSettings
from mnemo.kafka.topics import topic_names
from mnemo.stages.extract import Windows, extract_stage
from mnemo.stages.routing import Emit

SERVICE = "extractor"


def create_app(ks: KafkaSettings) -> faust.App:
    app = make_app(SERVICE, ks, [topic_names(ks).raw])
    rt = Runtime(SERVICE, ks, app)
    windows = app.Table("windows", partitions=ks.kafka_partitions, schema=json_schema())

    async def work(incoming: Incoming) -> list[Emit]:
        raw = decode(RawEvent, incoming.value)
        run_id = raw.run_id or derived_run_id(incoming.topic, incoming.partition, incoming.offset)
        incoming.run_ids, incoming.scope_key = [run_id], incoming.key
        deps, groups = await rt.deps(), await rt.groups()
        return await extract_stage(deps, groups, raw, run_id, _windows(windows))

    @app.agent(rt.topics[TopicKind.raw])
    async def extract(stream: faust.StreamT) -> None:
        async for event in stream.events():
            await handle(rt, Incoming.of(event), work)

    return app


def _windows(table: TableT) -> Windows:
    """A faust table is a MutableMapping, changelog-backed."""
    return cast(Windows, table)
