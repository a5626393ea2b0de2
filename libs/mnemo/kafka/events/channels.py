"""The distributed mode's channels: what each carries, and its versioned Kafka topic name
`{prefix}.{kind}.{version}`, e.g. `mnemo.raw.v1` (a Kafka topic is a channel; a memory's
topic is another thing)."""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class ChannelKind(StrEnum):
    """What a channel carries, and so which service consumes it."""

    raw = "raw"  # RawEvent: adds, from the gateway or outside producers -> extractor
    extracted = "extracted"  # StageEvent whose next step is a buffer -> buffer
    batches = "batches"  # StageEvent whose next step is a transform -> transformer
    drafts = "drafts"  # StageEvent whose next step is a commit -> committer
    status = "run-status"  # RunStatusEvent -> committer (writes the runs table)
    dlq = "dlq"  # DlqRecord: poison records with their error -> `mnemo dlq`
    ticks = "buffer-ticks"  # internal: the buffer service's time-trigger ticks
    # ConsolidationCheck, keyed by the consolidation scope's own key -> committer
    consolidation = "consolidation"


# Keyed by scope key and co-partitioned: they all have the same partition count.
PIPELINE_CHANNELS = (
    ChannelKind.raw,
    ChannelKind.extracted,
    ChannelKind.batches,
    ChannelKind.drafts,
    ChannelKind.status,
    ChannelKind.ticks,
    ChannelKind.consolidation,
)


@dataclass(frozen=True)
class ChannelNames:
    prefix: str = "mnemo"
    version: str = "v1"

    def name(self, kind: ChannelKind) -> str:
        return f"{self.prefix}.{kind.value}.{self.version}"

    @property
    def raw(self) -> str:
        return self.name(ChannelKind.raw)

    @property
    def dlq(self) -> str:
        return self.name(ChannelKind.dlq)

    def kind_of(self, topic: str) -> ChannelKind:
        """The kind of one of our Kafka topic names (raises ValueError for others)."""
        for kind in ChannelKind:
            if self.name(kind) == topic:
                return kind
        raise ValueError(f"{topic!r} is not a {self.prefix}/{self.version} topic")
