"""`mnemo status`: one screen on a running server: gateway, API key, Postgres, broker,
workers, backlog and lag, runs, and the key's project's last errors.

It reads what the server publishes (/healthz, /readyz, /metrics, and with the key
/v1/auth/verify and /v1/status), so it works the same against `mnemo serve` and a
distributed gateway. Exit status 0 only when the server is ready and the key accepted.
"""

from __future__ import annotations

from typing import Annotated, Any

import typer

from mnemo.cli.common import DEFAULT_URL, ApiKeyOption, UrlOption, print_json

JsonOption = Annotated[bool, typer.Option("--json", help="Print the report as JSON")]


def status_command(
    url: UrlOption = DEFAULT_URL, api_key: ApiKeyOption = None, as_json: JsonOption = False
) -> None:
    """Check a running server and show its state on one screen (exit 1 unless it is
    ready for this key: reachable, database answering, workers alive, key accepted)."""
    import httpx

    from mnemo.cli.status_view import render
    from mnemo.client.transport import default_headers

    report: dict[str, Any] = {"url": url, "mcp": f"{url.rstrip('/')}/mcp"}
    try:
        with httpx.Client(base_url=url, headers=default_headers(api_key), timeout=10) as http:
            gather(http, report, api_key is not None)
    except httpx.TransportError as exc:
        report["server"] = f"unreachable: {exc}"
    ok = report.get("ready") is True and report.get("api_key") in ACCEPTED
    if as_json:
        print_json(report)
    else:
        typer.echo(render(report))
    raise typer.Exit(code=0 if ok else 1)


ACCEPTED = ("accepted", "not needed (auth disabled)")


def gather(http: Any, report: dict[str, Any], keyed: bool) -> None:
    """Fill `report` from the server's endpoints."""
    from prometheus_client.parser import text_string_to_metric_families

    report["server"] = "up" if http.get("/healthz").status_code == 200 else "down"
    ready = http.get("/readyz")
    body = _json(ready)
    report["ready"] = ready.status_code == 200
    report["checks"] = body.get("checks", [])
    report["workers"] = body.get("workers", [])
    report["oldest_running_run_age_seconds"] = body.get("oldest_running_run_age_seconds")
    report["database"] = "ready" if report["ready"] else str(body.get("detail", ready.status_code))
    verify = http.get("/v1/auth/verify").status_code
    report["api_key"] = {204: ACCEPTED[0] if keyed else ACCEPTED[1]}.get(
        verify, "refused" if keyed else "missing (--api-key or MNEMO_API_KEY)"
    )
    metrics = http.get("/metrics")
    if metrics.status_code == 200:
        report["metrics"] = [
            {"name": s.name, "labels": dict(s.labels), "value": s.value}
            for family in text_string_to_metric_families(metrics.text)
            for s in family.samples
            if s.name.startswith("mnemo_") and not s.name.endswith(("_bucket", "_created"))
        ]
    if verify == 204:
        status = http.get("/v1/status")
        if status.status_code == 200:
            report.update(_json(status))


def _json(response: Any) -> dict[str, Any]:
    try:
        body = response.json()
    except ValueError:
        return {"detail": f"HTTP {response.status_code}"}
    return body if isinstance(body, dict) else {}
