"""`mnemo status`: is the server at --url up, its database ready, and the API key valid?"""

from __future__ import annotations

from typing import Any

import typer

from mnemo.cli.common import DEFAULT_URL, ApiKeyOption, UrlOption, print_json


def status_command(url: UrlOption = DEFAULT_URL, api_key: ApiKeyOption = None) -> None:
    """Check a running server; prints a JSON report and exits 1 unless it is ready for
    this key (reachable, database answering, key accepted)."""
    import httpx

    from mnemo.client.transport import default_headers

    report: dict[str, Any] = {"url": url, "mcp": f"{url.rstrip('/')}/mcp"}
    try:
        with httpx.Client(base_url=url, headers=default_headers(api_key), timeout=10) as http:
            report["server"] = "up" if http.get("/healthz").status_code == 200 else "down"
            ready = http.get("/readyz")
            report["database"] = "ready" if ready.status_code == 200 else _detail(ready)
            verify = http.get("/v1/auth/verify").status_code
    except httpx.TransportError as exc:
        report["server"] = f"unreachable: {exc}"
        print_json(report)
        raise typer.Exit(code=1) from exc
    report["api_key"] = {204: "accepted" if api_key else "not needed (auth disabled)"}.get(
        verify, "refused" if api_key else "missing (--api-key or MNEMO_API_KEY)"
    )
    print_json(report)
    ok = report["server"] == "up" and report["database"] == "ready" and verify == 204
    raise typer.Exit(code=0 if ok else 1)


def _detail(response: Any) -> str:
    try:
        return str(response.json().get("detail", response.status_code))
    except ValueError:
        return f"HTTP {response.status_code}"
