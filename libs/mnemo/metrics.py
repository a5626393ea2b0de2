"""Prometheus metrics shared by the embedded engine and the stage services.

Names are stable: dashboards, tests and the bench read them. Under `mnemo serve` every
process writes them to the multiprocess folder (`mnemo.telemetry.multiprocess`): counters
and histograms are summed over processes, dead ones included; a gauge says how (below).
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)

# `service`: the process role that moved the record (a Kafka stage service, or the embedded
# "worker"); `channel`: the channel it was consumed from or produced to (a Kafka channel kind,
# or the embedded bus record kind: run, flush, consolidate). One meaning each (issue 36).
RECORDS_IN = Counter("mnemo_records_in_total", "Records consumed", ["service", "channel"])
RECORDS_OUT = Counter("mnemo_records_out_total", "Records produced", ["service", "channel"])
STEP_LATENCY = Histogram("mnemo_step_seconds", "Step latency", ["step"], buckets=LATENCY_BUCKETS)
LLM_CALLS = Counter("mnemo_llm_calls_total", "LLM calls", ["prompt", "provider"])
LLM_ERRORS = Counter("mnemo_llm_errors_total", "LLM call errors", ["prompt", "kind"])
LLM_TOKENS = Counter("mnemo_llm_tokens_total", "LLM tokens", ["prompt", "direction"])
LLM_LATENCY = Histogram(
    "mnemo_llm_seconds", "LLM call latency", ["prompt"], buckets=LATENCY_BUCKETS
)
# Every embedded ticker measures all buffers (the same total): the latest live value counts.
BUFFER_ITEMS = Gauge(
    "mnemo_buffer_items", "Items waiting in buffers", multiprocess_mode="livemostrecent"
)
RUNS = Counter("mnemo_runs_total", "Runs by final or intermediate status", ["status"])
# What produced committed runs' memories: the model's name, or "offline" (heuristics).
RUNS_PRODUCED = Counter(
    "mnemo_runs_produced_total", "Committed runs by what produced them", ["produced_by"]
)
RUN_LATENCY = Histogram("mnemo_run_seconds", "Add to committed latency", buckets=LATENCY_BUCKETS)
ADD_LATENCY = Histogram("mnemo_add_seconds", "Add acknowledgement latency", buckets=LATENCY_BUCKETS)

# Memory over time: recall tracking, reconsolidation and consolidation.
RECALLS_RECORDED = Counter("mnemo_recalls_recorded_total", "Searches written to the recall log")
RECALLS_DROPPED = Counter(
    "mnemo_recalls_dropped_total", "Searches dropped from a full recall queue (oldest first)"
)
RECALL_QUEUE = Gauge("mnemo_recall_queue", "Searches waiting to be written to the recall log")
GATE_DECISIONS = Counter(
    "mnemo_reconsolidation_decisions_total",
    "Reconsolidation gate decisions by decision and whether they were written",
    ["decision", "outcome"],
)
RECONCILE_SKIPPED = Counter(
    "mnemo_reconcile_skipped_total",
    "transform_with_context batches whose related memories were all below the similarity floor",
)
CONSOLIDATION_PASSES = Counter(
    "mnemo_consolidation_passes_total", "Consolidation passes by outcome", ["outcome"]
)
CONSOLIDATED_EPISODES = Counter(
    "mnemo_consolidated_episodes_total", "Episodes linked to a rule by consolidation"
)
