from __future__ import annotations

from starlette.requests import Request

from mnemo.console.login import safe_next
from mnemo.console.session import same_origin


def _request(**headers: str) -> Request:
    raw = [(k.replace("_", "-").lower().encode(), v.encode()) for k, v in headers.items()]
    return Request({"type": "http", "method": "POST", "path": "/", "headers": raw})


def test_same_origin_compares_the_host_and_trusts_a_missing_header() -> None:
    assert same_origin(_request(host="console.example:8080"))
    assert same_origin(_request(host="console.example:8080", origin="http://console.example:8080"))
    # TLS ending at a proxy: the browser says https, the gateway sees http.
    assert same_origin(_request(host="console.example", origin="https://console.example"))
    assert not same_origin(_request(host="console.example", origin="https://evil.example"))
    assert not same_origin(_request(host="console.example:8080", origin="http://console.example"))
    assert not same_origin(_request(host="console.example", origin="null"))
    assert same_origin(
        _request(host="console.example", referer="http://console.example/console/runs")
    )
    assert not same_origin(_request(host="console.example", referer="https://evil.example/x"))


def test_login_only_redirects_inside_the_console() -> None:
    assert safe_next("/console/runs?status=failed") == "/console/runs?status=failed"
    for target in (
        None,
        "",
        "https://evil.example/",
        "//evil.example/console",
        "/v1/runs",
        "/consolex",
    ):
        assert safe_next(target) == "/console/memories"
