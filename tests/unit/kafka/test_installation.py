"""The per-record installation rule (mnemo.kafka.installation.foreign), which
mnemo.kafka.handler.same_installation applies to every consumed record before its work.
On the real broker: tests/kafka/test_foreign_record.py."""

from __future__ import annotations

from mnemo.kafka.installation import HEADER, foreign, record_installation


def test_a_record_of_another_installation_is_refused_naming_both() -> None:
    refusal = foreign("extractor", "t.raw.v1[2]@7", "inst-theirs", "inst-ours")
    assert refusal is not None
    assert "\n" not in refusal
    assert refusal.startswith("extractor: t.raw.v1[2]@7 belongs to installation inst-theirs,")
    assert "this stage's database is installation inst-ours" in refusal
    assert "MNEMO_DATABASE_URL" in refusal and "MNEMO_KAFKA_TOPIC_PREFIX" in refusal


def test_records_of_this_installation_or_without_the_header_are_taken() -> None:
    assert foreign("extractor", "t[0]@0", "inst-ours", "inst-ours") is None
    # outside producers and earlier releases stamp no installation
    assert foreign("extractor", "t[0]@0", None, "inst-ours") is None


def test_the_header_is_read_from_either_shape_faust_hands_over() -> None:
    assert record_installation([("traceparent", b"x"), (HEADER, b"inst-a")]) == "inst-a"
    assert record_installation({HEADER: b"inst-b"}) == "inst-b"
    assert record_installation(None) is None
    assert record_installation([("traceparent", b"x")]) is None
