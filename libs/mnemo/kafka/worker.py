"""Starting a stage service: pre-create the channels, open the database and load the models,
then run the faust worker (which joins the consumer group) until SIGTERM."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from dataclasses import dataclass

import faust

from mnemo.heap import settle_heap
from mnemo.kafka.channels import UnderReplicated, ensure_channels
from mnemo.kafka.installation import WrongInstallation
from mnemo.kafka.runtime import Runtime
from mnemo.kafka.watchdog import watch_recovery
from mnemo.logs import configure_logging
from mnemo.settings import Settings
from mnemo.tracing.setup import configure as configure_tracing

log = logging.getLogger(__name__)
# The exit status of a stage that refuses to start on a misconfiguration (EX_CONFIG).
REFUSED = 78


@dataclass(frozen=True)
class Stage:
    """A stage service: its faust app and the runtime its agents use."""

    app: faust.App
    rt: Runtime


def run_service(create: Callable[[Settings], Stage]) -> None:
    """The `python -m services.<name>` entry point shared by the four stage services."""
    configure_logging()
    # One line per LLM request costs CPU on every call; failures are logged by the client.
    logging.getLogger("httpx").setLevel(logging.WARNING)
    settings = Settings()
    loop = asyncio.new_event_loop()  # faust runs on it; the dependencies open on it too
    asyncio.set_event_loop(loop)
    try:
        loop.run_until_complete(ensure_channels(settings.kafka))
    except UnderReplicated as exc:  # a setting to fix, said in one line: no traceback helps
        log.error("refusing to start: %s", exc)
        raise SystemExit(REFUSED) from None
    stage = create(settings)
    configure_tracing(stage.app.conf.id)  # the consumer group names it, e.g. mnemo-buffer
    try:
        loop.run_until_complete(stage.rt.open())
    except WrongInstallation as exc:  # never joins the group, never counts as a worker
        log.error("refusing to start: %s", exc)
        raise SystemExit(REFUSED) from None
    log.info("%s: ready; joining consumer group %s", stage.rt.service, stage.app.conf.id)
    worker = faust.Worker(stage.app, loop=loop, loglevel="INFO", quiet=True)
    limit = settings.kafka.recovery_stall_seconds
    # Held in this frame for the worker's life: the loop keeps only weak task references.
    watchdog = loop.create_task(watch_recovery(stage.app, stage.rt.service, limit))
    settle_heap()  # after start-up, before the first record (mnemo.heap)
    worker.execute_from_commandline()
    watchdog.cancel()
