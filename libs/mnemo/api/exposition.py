"""The one Prometheus exposition: `/metrics` serves it and the console's health page reads it,
so both always show the same series (collection from other processes plugs in here)."""

from __future__ import annotations

from prometheus_client import REGISTRY, generate_latest


def exposition() -> bytes:
    """The text Prometheus scrapes from this gateway."""
    return generate_latest(REGISTRY)
