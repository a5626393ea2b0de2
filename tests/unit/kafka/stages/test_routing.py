"""Routing by pipeline and dead-lettering: which channel a batch goes to next."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from mnemo.contracts.llm import LLMError
from mnemo.core.failures import describe
from mnemo.domain.batch import Batch
from mnemo.domain.memory import RunState
from mnemo.domain.templates import group_from_document
from mnemo.kafka.events.channels import ChannelKind
from mnemo.kafka.stages.failures import dead_letter
from mnemo.kafka.stages.routing import UnroutableStep, channel_for, forward

NOW = datetime(2026, 3, 1, tzinfo=UTC)
GROUP = group_from_document("g", {
    "topics": [{"name": "Facts", "description": "Facts.", "scoping": {"user_scoped": True}}],
    "pipeline": {"steps": [
        {"id": "window", "kind": "buffer", "mode": "sliding_window", "window": 2,
         "input_type": "string", "next": "extract"},
        {"id": "extract", "kind": "extract", "input_type": "conversation", "next": "hold"},
        {"id": "hold", "kind": "buffer", "triggers": {"count": 2}, "next": "digest"},
        {"id": "digest", "kind": "transform", "instructions": "Digest.", "next": "reconcile"},
        {"id": "reconcile", "kind": "transform_with_context", "next": "commit"},
        {"id": "commit", "kind": "commit"},
    ]},
})  # fmt: skip


def test_each_step_kind_has_its_consumers_channel() -> None:
    step = GROUP.pipeline.step
    assert channel_for(step("hold")) == ChannelKind.extracted
    assert channel_for(step("digest")) == ChannelKind.batches
    assert channel_for(step("reconcile")) == ChannelKind.drafts
    assert channel_for(step("commit")) == ChannelKind.drafts
    for entry_only in ("window", "extract"):
        with pytest.raises(UnroutableStep):
            channel_for(step(entry_only))


def test_forward_keys_the_record_by_scope_key() -> None:
    batch = Batch(batch_id="b", project="p", group="g", scope_key="scope", run_ids=["r"])
    [emit] = forward(GROUP.pipeline.step("digest"), batch, {"r": NOW})
    assert (emit.kind, emit.scope_key) == (ChannelKind.batches, "scope")
    assert forward(None, batch, {}) == []


def test_a_dead_letter_carries_the_error_and_fails_its_runs() -> None:
    exc = LLMError("LLM prompt 'extract' failed after 2 attempts: 500 Internal Server Error")
    record, status = dead_letter(
        exc, service="extractor", topic="mnemo.raw.v1", partition=1, offset=7, key="k",
        payload=b'{"x": 1}', run_ids=["r1"], scope_key="scope", now=NOW,
    )  # fmt: skip
    assert (record.reason, record.error, record.payload) == ("llm", describe(exc), '{"x": 1}')
    assert (record.source_topic, record.partition, record.offset) == ("mnemo.raw.v1", 1, 7)
    assert status is not None and status.status == RunState.failed
    assert (status.scope_key, status.error) == ("scope", record.error)
    _, none = dead_letter(exc, service="s", topic="t", partition=0, offset=0, key=None,
                          payload=None, run_ids=[], scope_key=None, now=NOW)  # fmt: skip
    assert none is None
