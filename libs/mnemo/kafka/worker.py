"""Starting a stage service: pre-create the channels, then run the faust worker until SIGTERM."""

from __future__ import annotations

import asyncio
from collections.abc import Callable

import faust

from mnemo.kafka.channels import ensure_channels
from mnemo.logs import configure_logging
from mnemo.settings import Settings


def run_service(create_app: Callable[[Settings], faust.App]) -> None:
    """The `python -m services.<name>` entry point shared by the four stage services."""
    configure_logging()
    settings = Settings()
    asyncio.run(ensure_channels(settings.kafka))
    asyncio.set_event_loop(asyncio.new_event_loop())  # faust runs its own loop
    app = create_app(settings)
    worker = faust.Worker(app, loglevel="INFO", quiet=True)
    worker.execute_from_commandline()
