"""Record schemas and channel names of the distributed mode (no broker needed)."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from mnemo.domain.scope import scope_key
from mnemo.kafka.events.channels import PIPELINE_CHANNELS, ChannelKind, ChannelNames
from mnemo.kafka.events.codec import decode, encode
from mnemo.kafka.events.raw import RawEvent, derived_run_id, replay_run_id


def test_channel_names_are_versioned_kafka_topic_names() -> None:
    names = ChannelNames("mnemo", "v1")
    assert names.raw == "mnemo.raw.v1" and names.dlq == "mnemo.dlq.v1"
    assert names.name(ChannelKind.status) == "mnemo.run-status.v1"
    assert all(names.kind_of(names.name(k)) == k for k in ChannelKind)
    with pytest.raises(ValueError):
        names.kind_of("other.raw.v1")
    assert ChannelKind.dlq not in PIPELINE_CHANNELS  # not keyed by scope


def test_a_raw_event_round_trips_and_refuses_unknown_fields() -> None:
    event = RawEvent.model_validate(
        {
            "project": "p",
            "user_id": "Ana",
            "properties": {"c": "1"},
            "input": {"string": {"content": ["hi"]}},
        }
    )
    assert decode(RawEvent, encode(event)) == event
    assert event.scope_key_for(["c"]) == scope_key("p", "default", "ana", {"c": "1"}, ["c"])
    with pytest.raises(ValidationError):
        decode(RawEvent, b'{"input": {"string": {"content": ["x"]}}, "surprise": 1}')
    with pytest.raises(ValueError, match="tombstone"):
        decode(RawEvent, None)


def test_run_ids_are_stable_for_redeliveries_and_replays() -> None:
    assert derived_run_id("mnemo.raw.v1", 0, 5) == derived_run_id("mnemo.raw.v1", 0, 5)
    assert derived_run_id("mnemo.raw.v1", 0, 5) != derived_run_id("mnemo.raw.v1", 1, 5)
    assert replay_run_id("new", "r1") == replay_run_id("new", "r1") != replay_run_id("b", "r1")
