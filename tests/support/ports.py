"""Free ports for the listeners tests start, alone or as a block from one base.

A base drawn from the ephemeral range (where the kernel picks the local ends of outgoing
connections) can be taken by any connection before the listener binds it: a CI run's stage
crash-looped so. Blocks are drawn below that range, and each port is probed before use."""

from __future__ import annotations

import random
from pathlib import Path

from mnemo.kafka.stack import bind_error

_given: set[int] = set()  # handed out by this process: a port not yet bound probes free


def ephemeral_low() -> int:
    """The first port the kernel hands to outgoing connections (32768 when unknown)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def free_block(n: int) -> int:
    """A base whose ports base .. base+n are all free now, below the ephemeral range."""
    high = ephemeral_low() - n - 1
    for _ in range(200):
        base = random.randrange(10000, high)
        block = range(base, base + n + 1)
        if not _given.intersection(block) and all(bind_error(port) is None for port in block):
            _given.update(block)
            return base
    raise RuntimeError(f"no {n + 1} consecutive free ports between 10000 and {high}")


def free_port() -> int:
    """A port free now, below the ephemeral range, not handed out before by this process."""
    return free_block(0)
