"""HTTP of `mnemo export` and `mnemo import --memories`: the export stream and import batches.

Errors are the clients' typed errors (`mnemo.client.errors`), so the commands report them
as every remote command does.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from mnemo.client.errors import MnemoConnectionError, error_for
from mnemo.client.transport import default_headers

# An export streams for as long as the project takes; each read waits this long at most.
READ_TIMEOUT = 300.0


class TransferClient:
    def __init__(self, url: str, api_key: str | None) -> None:
        self.http = httpx.Client(
            base_url=url.rstrip("/"),
            headers=default_headers(api_key),
            timeout=httpx.Timeout(60.0, read=READ_TIMEOUT),
        )

    def close(self) -> None:
        self.http.close()

    def __enter__(self) -> TransferClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    @contextmanager
    def export(self, after: str | None, vectors: bool) -> Iterator[Iterator[str]]:
        """The export's lines (GET /v1/export), as they arrive."""
        params: dict[str, Any] = {"vectors": str(vectors).lower()}
        if after is not None:
            params["after"] = after
        try:
            with self.http.stream("GET", "/v1/export", params=params) as response:
                if response.status_code >= 400:
                    response.read()
                    raise error_for(response.status_code, _problem(response))
                yield response.iter_lines()
        except httpx.TransportError as exc:
            raise MnemoConnectionError(f"the export stream broke off: {exc}") from exc

    def import_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        """POST /v1/import; the server's report."""
        try:
            response = self.http.post(
                "/v1/import",
                content=json.dumps(body, ensure_ascii=False).encode("utf-8"),
                headers={"Content-Type": "application/json"},
            )
        except httpx.TransportError as exc:
            raise MnemoConnectionError(str(exc)) from exc
        if response.status_code >= 400:
            raise error_for(response.status_code, _problem(response))
        report: dict[str, Any] = response.json()
        return report


def _problem(response: httpx.Response) -> dict[str, Any] | None:
    try:
        data = response.json()
    except ValueError:
        return {"detail": response.text[:500]}
    return data if isinstance(data, dict) else None
