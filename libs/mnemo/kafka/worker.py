"""Starting a stage service: pre-create topics, then run the faust worker until SIGTERM."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable

import faust

from mnemo.kafka.settings import KafkaSettings
from mnemo.kafka.topics import ensure_topics


def run_service(create_app: Callable[[KafkaSettings], faust.App]) -> None:
    """The `python -m services.<name>` entry point shared by the four stage services."""
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s %(message)s")
    ks = KafkaSettings()
    asyncio.run(ensure_topics(ks))
    asyncio.set_event_loop(asyncio.new_event_loop())  # faust runs its own loop
    app = create_app(ks)
    worker = faust.Worker(app, loglevel="INFO", quiet=True)
    worker.execute_from_commandline()
