"""The gateway's listening socket, bound before `mnemo serve` creates anything: a busy or
forbidden port is reported before a data dir, a database or a key exists."""

from __future__ import annotations

import socket


class PortUnavailable(RuntimeError):
    """The configured host and port cannot be listened on (in use, or not allowed)."""


def listen(host: str, port: int) -> socket.socket:
    """A socket bound to (host, port) and listening, for uvicorn to serve on; so no other
    process can take the port between this check and the server's start."""
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as uvicorn binds
    try:
        sock.bind((host, port))
        sock.listen(2048)
    except OSError as exc:
        sock.close()
        raise PortUnavailable(
            f"cannot listen on {host}:{port}: {exc.strerror or exc}; "
            "stop what uses it, or choose another with --port or MNEMO_PORT"
        ) from exc
    return sock
