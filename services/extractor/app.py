"""Extractor: consume raw adds, run `stages.extract`, produce to the next step's channel.

Sliding-window buffers (which precede extract) keep their windows in a faust table.
"""

from __future__ import annotations

from typing import cast

import faust

from mnemo.events.channels import ChannelKind
from mnemo.events.codec import decode
from mnemo.events.raw import RawEvent, derived_run_id
from mnemo.kafka.app import json_schema, make_app
from mnemo.kafka.handler import Incoming, consume
from mnemo.kafka.runtime import Runtime
from mnemo.kafka.worker import Stage
from mnemo.settings import Settings
from mnemo.stages.extract import Windows, extract_stage
from mnemo.stages.routing import Emit

SERVICE = "extractor"


def create_app(settings: Settings) -> Stage:
    app = make_app(SERVICE, settings)
    rt = Runtime(SERVICE, settings, app)
    table = app.Table("windows", partitions=settings.kafka.partitions, schema=json_schema())
    windows = cast(Windows, table)  # a faust table is a changelog-backed MutableMapping

    async def work(incoming: Incoming) -> list[Emit]:
        raw = decode(RawEvent, incoming.value)
        run_id = raw.run_id or derived_run_id(incoming.topic, incoming.partition, incoming.offset)
        incoming.run_ids, incoming.scope_key = [run_id], incoming.key
        return await extract_stage(await rt.deps(), await rt.groups(), raw, run_id, windows)

    @app.agent(rt.channels[ChannelKind.raw])
    async def extract(stream: faust.StreamT) -> None:
        await consume(rt, stream, lambda incoming: (work, True))

    return Stage(app, rt)
