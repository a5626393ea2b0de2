"""Garbage-collector settings for a long-running process, applied once it has started.

Start-up builds hundreds of thousands of objects that live as long as the process
(modules, the model session, compiled statements, the app's routes), and every full
collection walked them all again. In the server that was a pause of the event loop, and
each pause queued the acknowledgements arriving meanwhile: at 500 adds/s on 2 cores the
add's p99 was 0.38-0.48 s with the defaults, 0.06-0.10 s settled (bench section 1,
2026-12-07; docs/benchmarks.md). In
a pipeline worker process, collections took 3-8% of its time (py-spy, bench section 6).
"""

from __future__ import annotations

import gc

# Allocations between young collections (Python's default: 700). A request or a run
# allocates thousands of short-lived objects; most die by reference counting anyway.
GC_THRESHOLD = 10_000


def settle_heap() -> None:
    """Keep the collector off what start-up built and let it run less often. Call it once,
    at an entry point, after start-up and before serving. Reference cycles made later are
    still freed; only those among start-up's objects are not (they live as long as the
    process)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_THRESHOLD, *gc.get_threshold()[1:])
