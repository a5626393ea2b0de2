"""Kafka-agnostic stage functions of the distributed mode.

Each takes a decoded event plus the dependency bundle and returns the events to publish next
(`Emit`), routed by the group's pipeline: the kind of the next step picks the channel. The
stage services (services/*) are thin shells: consume, call a stage, produce. The step code
lives in `mnemo.steps` and the rules in `mnemo.core`, shared with the embedded transport.
"""
