"""What `mnemo serve` runs (imported on use): the gateway, its supervised pipeline worker
processes, and the embedded Postgres it keeps running."""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TextIO

import typer
import uvicorn

from mnemo.api.connections import uvicorn_config
from mnemo.core.endpoints import EndpointChecks
from mnemo.core.engine import Engine
from mnemo.core.groups import default_group_status
from mnemo.core.probes import configured_probes
from mnemo.embedded.postgres_watch import watch_embedded_postgres
from mnemo.embedded.processes import spawn_workers
from mnemo.embedded.startup import start_engine
from mnemo.gateway.app import LOOPBACK_HOSTS, create_app
from mnemo.heap import settle_heap
from mnemo.logs import install_repeat_filter
from mnemo.settings import Settings


async def local_key(engine: Engine, settings: Settings) -> str | None:
    """On loopback, a fresh key when the project has no active one (shown once)."""
    if settings.auth_disabled or settings.host not in LOOPBACK_HOSTS:
        return None
    active = [k for k in await engine.list_keys(settings.project) if k.revoked_at is None]
    if active:
        return None
    _, secret = await engine.create_key(settings.project, "local")
    return secret


async def key_for_file(engine: Engine, settings: Settings, path: Path) -> tuple[str, bool]:
    """(the key `path` holds, whether it was made now) for `--print-key-to`: a key of the
    project already in the file is kept, so a script may restart the server; otherwise
    a new key is written there, readable by its owner only."""
    try:
        held = (await asyncio.to_thread(path.read_text)).strip()
    except FileNotFoundError:
        held = ""
    if held and await engine.project_for_key(held) == settings.project:
        return held, False
    _, secret = await engine.create_key(settings.project, "local")
    await asyncio.to_thread(write_private, path, secret + "\n")
    return secret, True


def write_private(path: Path, text: str) -> None:
    """Write `text` to `path` (mode 0600) through a temporary file, so a reader never
    sees half a key."""
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(partial, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as out:
        out.write(text)
    os.replace(partial, path)


class GracefulServer(uvicorn.Server):
    """uvicorn re-raises SIGTERM/SIGINT after shutting down, which would kill the process
    before the engine closes (and stops embedded Postgres); here a signal just stops it."""

    @contextmanager
    def capture_signals(self) -> Iterator[None]:
        if threading.current_thread() is not threading.main_thread():
            yield
            return
        handled = (signal.SIGINT, signal.SIGTERM)
        original = {sig: signal.signal(sig, self.handle_exit) for sig in handled}
        try:
            yield
        finally:
            for sig, handler in original.items():
                signal.signal(sig, handler)


class GaveUp(RuntimeError):
    """Supervision gave up: the worker processes keep dying, or the embedded Postgres will
    not stay up. `mnemo serve` exits with code 1."""


async def serve(
    settings: Settings, sock: socket.socket | None = None, key_file: Path | None = None
) -> None:
    """Run until a signal stops it; raise GaveUp if supervision gives up. `sock`: the
    listening socket `mnemo serve` bound before anything was created (None: bind here).
    `key_file`: where `--print-key-to` writes the project's key."""
    engine = await start_engine(settings, run_workers=settings.worker_processes == 0)
    endpoints = EndpointChecks(configured_probes(settings))
    workers = None
    if settings.worker_processes:
        workers = spawn_workers(settings, engine.database.url, settings.worker_processes)
    failures: list[str] = []
    server: GracefulServer | None = None

    def give_up(reason: str) -> None:
        failures.append(reason)
        if server is not None:
            server.should_exit = True

    watches = [asyncio.create_task(watch_embedded_postgres(engine.database, give_up))]
    try:
        if workers is not None:
            try:
                await workers.wait_ready()
            except RuntimeError as exc:
                raise GaveUp(str(exc)) from exc
        if failures:
            raise GaveUp(failures[0])
        await announce(engine, settings, key_file, terminal())
        await warn_about_endpoints(endpoints)
        app = create_app(settings, engine, local_workers=workers)
        app.state.endpoint_checks = endpoints  # /readyz reports them
        config = uvicorn_config(app, settings, log_level="info")
        install_repeat_filter("uvicorn", "uvicorn.access")  # uvicorn's own handlers
        server = GracefulServer(config)
        settle_heap()  # after start-up, before the first request (mnemo.heap)
        if workers is not None:
            watches.append(asyncio.create_task(workers.supervise(give_up)))
        await server.serve(sockets=[sock] if sock is not None else None)
    finally:
        for watch in watches:
            watch.cancel()
        await asyncio.gather(*watches, return_exceptions=True)
        if workers is not None:
            await asyncio.to_thread(workers.stop)
        await engine.close()
    if failures:
        raise GaveUp(failures[0])


async def warn_about_endpoints(endpoints: EndpointChecks) -> None:
    """Check the configured LLM and embedder once; a failure is a warning, not a stop."""
    for check in await endpoints.run():
        if check.ok:
            typer.echo(f"{check.name} check: {check.detail}", err=True)
        else:
            typer.echo(
                f"WARNING: {check.name} check failed: {check.detail} "
                "(adds will fail until it answers; /readyz and `mnemo status` name it)",
                err=True,
            )


def terminal() -> TextIO | None:
    """stderr when it is a terminal: the only place a new key is shown. Redirected to a
    file (a service's log), it is not, and a key written there would stay there."""
    return sys.stderr if sys.stderr.isatty() else None


async def announce(
    engine: Engine, settings: Settings, key_file: Path | None, tty: TextIO | None
) -> None:
    """Tell the operator where mnemo listens, with what, and a fresh local key if any: on
    the terminal `tty` only (None: stderr is not one), or in `key_file`."""

    url = f"http://{settings.host}:{settings.port}"
    typer.echo(f"mnemo listening on {url} (project '{settings.project}')", err=True)
    typer.echo(f"MCP (Streamable HTTP, same keys): {url}/mcp", err=True)
    deps = engine.deps
    typer.echo(f"llm: {deps.llm.label}; embeddings: {deps.embedder.label}", err=True)
    group, created = await engine.groups.ensure_default(settings.project)
    status = default_group_status(settings.project, group, created, settings.default_template)
    typer.echo(status, err=True)
    if not settings.llm_configured:
        typer.echo(
            "no LLM configured: offline heuristics, not a language model "
            "(set MNEMO_LLM_BASE_URL / MNEMO_LLM_API_KEY for real extraction)",
            err=True,
        )
    if settings.auth_disabled:
        return
    if key_file is not None:
        _, made = await key_for_file(engine, settings, key_file)
        said = "wrote a new API key to" if made else "the API key in"
        typer.echo(f"{said} {key_file} (readable by its owner only)", err=True)
        return
    if tty is None and not await _has_active_key(engine, settings):
        typer.echo(
            "no API key yet, and stderr is not a terminal, so a new key would only reach a "
            "log file: create one with `mnemo keys create`, or start with "
            "`mnemo serve --print-key-to FILE`",
            err=True,
        )
        return
    secret = await local_key(engine, settings) if tty is not None else None
    if secret and tty is not None:
        print(f"created a local API key: {secret}", file=tty, flush=True)
        print(f"  export MNEMO_URL={url} MNEMO_API_KEY={secret}", file=tty, flush=True)
    else:
        typer.echo("using existing API keys (`mnemo keys create` makes another)", err=True)


async def _has_active_key(engine: Engine, settings: Settings) -> bool:
    return any(k.revoked_at is None for k in await engine.list_keys(settings.project))
