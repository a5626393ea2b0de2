"""The pure parts of the Kafka transport: topic layout, consumer groups, raw events, replays."""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest

from mnemo.core.records import RunRecord
from mnemo.domain.inputs import AddInput
from mnemo.domain.templates import group_from_template
from mnemo.kafka.channels import channel_names, wanted
from mnemo.kafka.dlqops import _payload
from mnemo.kafka.events.dlq import DlqRecord
from mnemo.kafka.transport import raw_event
from mnemo.settings import KafkaSettings

NOW = datetime(2026, 3, 1, tzinfo=UTC)


def test_every_channel_gets_a_topic_with_its_partitions_and_retention() -> None:
    ks = KafkaSettings(topic_prefix="t", partitions=6, dlq_partitions=2, raw_retention_ms=5,
                       dlq_retention_ms=7, pipeline_retention_ms=9)  # fmt: skip
    topics = wanted(ks)
    one = {"min.insync.replicas": "1"}
    assert topics["t.raw.v1"] == (6, {"retention.ms": "5", **one})
    assert topics["t.dlq.v1"] == (2, {"retention.ms": "7", **one})
    assert topics["t.extracted.v1"] == (6, {"retention.ms": "9", **one})
    assert wanted(KafkaSettings(topic_prefix="t"))["t.dlq.v1"][1] == {"retention.ms": "-1", **one}
    assert channel_names(ks).raw == "t.raw.v1"


def test_every_topic_is_created_with_the_configured_min_insync_replicas() -> None:
    ks = KafkaSettings(topic_prefix="t", replication_factor=3, min_insync_replicas=2)
    assert {configs["min.insync.replicas"] for _, configs in wanted(ks).values()} == {"2"}


def test_min_insync_replicas_above_the_replication_factor_is_refused() -> None:
    with pytest.raises(ValueError, match="MNEMO_KAFKA_MIN_INSYNC_REPLICAS \\(3\\) exceeds"):
        KafkaSettings(replication_factor=2, min_insync_replicas=3)


def test_consumer_groups_and_broker_urls() -> None:
    ks = KafkaSettings(topic_prefix="t", group_buffer="mine",
                       bootstrap_servers="a:1, b:2")  # fmt: skip
    assert ks.group_id("extractor") == "t-extractor" and ks.group_id("buffer") == "mine"
    assert ks.broker_url == "kafka://a:1;kafka://b:2"
    with pytest.raises(ValueError):
        ks.group_id("gateway")


def test_a_gateway_run_becomes_the_raw_event_an_outside_producer_would_send() -> None:
    group = group_from_template("default", "default")
    record = RunRecord.new(run_id="r1", project="p", group="default", config=group,
                           input=AddInput.model_validate({"string": {"content": ["x"]}}),
                           user_id="U", properties={"c": "1"}, root=None, now=NOW)  # fmt: skip
    event = raw_event(record)
    assert (event.run_id, event.user_id, event.origin) == ("r1", "u", "gateway")
    assert event.root == record.starting_step_id and event.created_at == NOW


def test_a_replayed_raw_record_keeps_the_run_id_it_was_tracked_under() -> None:
    def dead(payload: str, source: str = "t.raw.v1") -> DlqRecord:
        return DlqRecord(source_topic=source, partition=0, offset=3, payload=payload,
                         service="extractor", reason="llm", error="e", run_ids=["derived"],
                         failed_at=NOW)  # fmt: skip

    assert json.loads(_payload(dead('{"project": "p"}'))) == {"project": "p", "run_id": "derived"}
    assert _payload(dead('{"run_id": "own"}')) == b'{"run_id": "own"}'
    assert _payload(dead("{not json")) == b"{not json"
    assert _payload(dead('{"a": 1}', source="t.drafts.v1")) == b'{"a": 1}'
