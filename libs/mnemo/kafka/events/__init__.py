"""Record schemas of the distributed mode's Kafka topics (one module per topic).

Every record is JSON (UTF-8) and keyed by its run's scope key (`mnemo.domain.scope.scope_key`),
so one scope stays on one partition and is processed in order. See `raw.RawEvent` for the
documented schema that outside producers may publish directly.
"""

from mnemo.kafka.events.channels import ChannelKind, ChannelNames
from mnemo.kafka.events.codec import decode, encode
from mnemo.kafka.events.dlq import DlqRecord
from mnemo.kafka.events.raw import RawEvent
from mnemo.kafka.events.stage import StageEvent
from mnemo.kafka.events.status import RunStatusEvent

__all__ = [
    "ChannelKind",
    "ChannelNames",
    "DlqRecord",
    "RawEvent",
    "RunStatusEvent",
    "StageEvent",
    "decode",
    "encode",
]
