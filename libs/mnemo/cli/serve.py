"""`mnemo serve`: the gateway, its supervised pipeline worker processes, and the embedded
Postgres it keeps running.

The server itself lives in `mnemo.cli.serving`, imported when the command runs, so other
commands do not load FastAPI, uvicorn and the engine.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mnemo.cli.common import DataDirOption, settings_with


def _known_template(name: str | None) -> str | None:
    from mnemo.domain.templates import TEMPLATE_NAMES

    if name is not None and name not in TEMPLATE_NAMES:
        raise typer.BadParameter(f"unknown template '{name}'; known: {', '.join(TEMPLATE_NAMES)}")
    return name


def serve_command(
    host: Annotated[str | None, typer.Option("--host", help="Bind address")] = None,
    port: Annotated[int | None, typer.Option("--port", help="Port")] = None,
    data_dir: DataDirOption = None,
    worker_processes: Annotated[
        int | None,
        typer.Option(
            "--worker-processes",
            min=0,
            help="Run the pipeline in N separate processes (0: inside the server process); "
            "default MNEMO_WORKER_PROCESSES or 1",
        ),
    ] = None,
    template: Annotated[
        str | None,
        typer.Option(
            "--template",
            callback=_known_template,
            help="Template of a project's default group when it is first created, e.g. "
            "engram_quickstart for Weaviate's Engram plugins (default MNEMO_DEFAULT_TEMPLATE "
            "or 'default'); an existing default group is kept",
        ),
    ] = None,
    print_key_to: Annotated[
        Path | None,
        typer.Option(
            "--print-key-to",
            metavar="FILE",
            help="Write the project's API key to FILE (mode 0600) for scripts: a key of the "
            "project already there is kept, else a new one is made. Without it a new key is "
            "shown on the terminal only, never in a log",
        ),
    ] = None,
) -> None:
    """Serve the Engram v1 API with embedded workers (and embedded Postgres by default)."""
    import asyncio

    from mnemo.cli.listener import PortUnavailable, listen
    from mnemo.telemetry import multiprocess

    # Checks before acts: the settings (a misspelt variable exits 2) and the port, before
    # a data dir, a database or a key is created.
    settings = settings_with(
        host=host,
        port=port,
        data_dir=data_dir,
        worker_processes=worker_processes,
        default_template=template,
    )
    try:
        sock = listen(settings.host, settings.port)
    except PortUnavailable as exc:
        typer.echo(f"mnemo serve: {exc}", err=True)
        raise typer.Exit(code=1) from exc
    # Before prometheus-client is imported (by what follows): it reads the variable then,
    # and the worker processes inherit it, so /metrics shows every process's series.
    metrics_dir = multiprocess.prepare()
    from mnemo.cli.serving import GaveUp, serve
    from mnemo.logs import configure_logging
    from mnemo.store.data_dir import DataDirUnreachable
    from mnemo.store.embedder_identity import EmbedderMismatch
    from mnemo.store.schema_release import DatabaseTooNew
    from mnemo.tracing.setup import TracingUnavailable, configure

    configure_logging()
    try:
        configure("mnemo-gateway")  # OpenTelemetry, if OTEL_* asks; workers do the same
    except TracingUnavailable as exc:
        sock.close()
        multiprocess.release(metrics_dir)
        typer.echo(f"mnemo serve: {exc}", err=True)
        raise typer.Exit(code=1) from exc
    try:
        asyncio.run(serve(settings, sock, print_key_to))
    except (GaveUp, EmbedderMismatch, DatabaseTooNew, DataDirUnreachable) as exc:  # one line
        typer.echo(f"mnemo serve: {exc}", err=True)
        raise typer.Exit(code=1) from exc
    finally:
        sock.close()
        multiprocess.release(metrics_dir)
