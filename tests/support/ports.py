"""Blocks of consecutive free ports for tests that start several listeners from one base.

A base drawn from the ephemeral range (where the kernel picks the local ends of outgoing
connections) can be taken by any connection before the listener binds it: a CI run's stage
crash-looped so. Blocks are drawn below that range, and each port is probed before use."""

from __future__ import annotations

import random
import socket
from pathlib import Path


def ephemeral_low() -> int:
    """The first port the kernel hands to outgoing connections (32768 when unknown)."""
    try:
        return int(Path("/proc/sys/net/ipv4/ip_local_port_range").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return 32768


def bindable(port: int) -> bool:
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("", port))
        except OSError:
            return False
    return True


def free_block(n: int) -> int:
    """A base whose ports base .. base+n are all free now, below the ephemeral range."""
    high = ephemeral_low() - n - 1
    for _ in range(200):
        base = random.randrange(10000, high)
        if all(bindable(base + i) for i in range(n + 1)):
            return base
    raise RuntimeError(f"no {n + 1} consecutive free ports between 10000 and {high}")
