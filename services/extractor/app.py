"""Extractor: consume raw adds, run `stages.extract`, produce to the next step's channel.

Sliding-window buffers (which precede extract) keep their windows in a faust table, swept
of erased and expired inputs on the pipeline's ticks.
"""

from __future__ import annotations

from typing import cast

import faust

from mnemo.kafka.app import json_schema, make_app
from mnemo.kafka.channels import changelog_configs, channel_names
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.events.codec import decode
from mnemo.kafka.events.raw import RawEvent, derived_run_id
from mnemo.kafka.handler import Incoming, consume
from mnemo.kafka.runtime import Runtime
from mnemo.kafka.stages import windows as sliding
from mnemo.kafka.stages.extract import RawPosition, extract_stage
from mnemo.kafka.stages.routing import Emit
from mnemo.kafka.sweeps import SweepSchedule
from mnemo.kafka.worker import Stage
from mnemo.settings import Settings

SERVICE = "extractor"


def create_app(settings: Settings) -> Stage:
    names = channel_names(settings.kafka)
    raw, ticks = names.raw, names.name(ChannelKind.ticks)
    app = make_app(SERVICE, settings)
    rt = Runtime(SERVICE, settings, app)
    table = app.Table("windows", partitions=settings.kafka.partitions, schema=json_schema(),
                      extra_topic_configs=changelog_configs(settings.kafka))  # fmt: skip
    windows = cast(sliding.Windows, table)  # a changelog-backed MutableMapping
    sweeps = SweepSchedule(settings.retention_sweep_seconds)

    async def work(incoming: Incoming) -> list[Emit]:
        event = decode(RawEvent, incoming.value)
        run_id = event.run_id or derived_run_id(incoming.topic, incoming.partition, incoming.offset)
        incoming.run_ids, incoming.scope_key = [run_id], incoming.key
        at = RawPosition(incoming.topic, incoming.partition, incoming.offset, incoming.timestamp)
        return await extract_stage(await rt.deps(), await rt.groups(), event, run_id, windows, at)

    async def on_tick(incoming: Incoming) -> list[Emit]:
        db = (await rt.deps()).db
        await sweeps.run(db, incoming.partition,
                         lambda: sliding.sweep(db, windows, incoming.partition))  # fmt: skip
        return []

    @app.agent(app.topic(raw, ticks, key_serializer="raw", value_serializer="raw"))
    async def extract(stream: faust.StreamT) -> None:
        # A tick sweeps its whole partition's windows: a barrier between that partition's
        # records; adds run concurrently across scope keys.
        await consume(rt, stream, lambda i: (on_tick, False) if i.topic == ticks else (work, True))

    return Stage(app, rt)
