"""`python -m mnemo.kafka.stack`: the gateway and the four stage services as supervised
local processes (what `scripts/run-distributed.sh` runs once the broker and Postgres are up).

The gateway starts first and must answer /healthz (it migrates the database); then each
stage replica, with its /metrics and /healthz on its own port from `--metrics-base`. A
stage that crashes is restarted with backoff and reported (`mnemo.supervisor`).

    python -m mnemo.kafka.stack --log-dir DIR [--metrics-base 9100] [--replicas extractor=2]
                                [--gateways 2]

`--gateways N` runs N gateways behind the same topics and database, on `--port`, `--port`+1,
…: losing one is not an outage while a load balancer (or the client) moves to another.

Every port the stack will listen on is checked before anything starts: a busy one exits
with status 2 naming the program, the port and the setting to change, instead of a stage
that crash-loops on its bind. `--check-ports` does only that (the script runs it before it
starts the broker or Postgres).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import socket
import sys
from pathlib import Path

from mnemo.settings import SERVICES
from mnemo.supervisor import Program, Supervisor, python_program


def programs(
    log_dir: Path,
    gateway_module: str,
    port: int,
    metrics_base: int,
    replicas: dict[str, int],
    gateways: int = 1,
) -> list[Program]:
    out = [
        python_program(
            "gateway" if g == 0 else f"gateway-{g + 1}", gateway_module, log_dir,
            f"http://127.0.0.1:{port + g}/healthz", MNEMO_MODE="distributed",
            MNEMO_PORT=str(port + g),
        )
        for g in range(gateways)
    ]  # fmt: skip
    metrics_port = metrics_base
    for stage in SERVICES:
        for i in range(1, replicas.get(stage, 1) + 1):
            metrics_port += 1
            name = stage if i == 1 else f"{stage}-{i}"
            out.append(python_program(
                name, f"services.{stage}", log_dir, None, MNEMO_METRICS_PORT=str(metrics_port)
            ))  # fmt: skip
    return out


def bind_error(port: int) -> str | None:
    """Why a listener could not bind `port` now ("Address already in use"), or None. The
    probe binds the wildcard address with SO_REUSEADDR, as uvicorn and aiohttp do: a
    listener on any address, or a connection that holds the port as its local end, makes
    the real bind fail, and so fails the probe."""
    with socket.socket() as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(("", port))
        except OSError as exc:
            return exc.strerror or str(exc)
    return None


def busy_ports(stack: list[Program]) -> list[str]:
    """One line per program whose port cannot be bound now ("buffer: port 9102: Address
    already in use"); empty when every port is free."""
    out = []
    for program in stack:
        port = int(program.env.get("MNEMO_PORT") or program.env["MNEMO_METRICS_PORT"])
        error = bind_error(port)
        if error is not None:
            out.append(f"{program.name}: port {port}: {error}")
    return out


def check_ports(stack: list[Program]) -> None:
    """Exit with status 2, naming every busy port and what moves it, if any is busy."""
    busy = busy_ports(stack)
    if busy:
        print(
            "mnemo.kafka.stack: cannot start, a port is in use:\n  " + "\n  ".join(busy)
            + "\nstop what uses it, or move the gateway with --port (MNEMO_PORT) and the"
            " stages with --metrics-base (MNEMO_METRICS_BASE_PORT)",
            file=sys.stderr,
        )  # fmt: skip
        raise SystemExit(2)


def parse_replicas(pairs: list[str]) -> dict[str, int]:
    out: dict[str, int] = {}
    for pair in pairs:
        stage, _, count = pair.partition("=")
        if stage not in SERVICES or not count.isdigit() or int(count) < 1:
            raise SystemExit(f"--replicas wants STAGE=N with STAGE one of {', '.join(SERVICES)}")
        out[stage] = int(count)
    return out


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--log-dir", type=Path, required=True)
    parser.add_argument("--gateway-module", default="services.gateway")
    parser.add_argument("--port", type=int, default=int(os.environ.get("MNEMO_PORT", "8080")))
    parser.add_argument("--metrics-base", type=int, default=9100)
    parser.add_argument("--replicas", action="append", default=[], metavar="STAGE=N")
    parser.add_argument("--gateways", type=int, default=1, choices=range(1, 9), metavar="N")
    parser.add_argument("--check-ports", action="store_true", help="check the ports, then exit")
    args = parser.parse_args(argv)
    stack = programs(
        args.log_dir, args.gateway_module, args.port, args.metrics_base,
        parse_replicas(args.replicas), args.gateways,
    )  # fmt: skip
    check_ports(stack)
    if args.check_ports:
        return
    raise SystemExit(asyncio.run(Supervisor(stack).run()))


if __name__ == "__main__":
    main()
