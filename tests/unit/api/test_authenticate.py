"""Reading the bearer key from the request head, as FastAPI's HTTPBearer does."""

from __future__ import annotations

from mnemo.api.authenticate import bearer_secret, is_protected


def head(*headers: tuple[bytes, bytes]) -> dict[str, object]:
    return {"type": "http", "headers": list(headers)}


def test_the_bearer_credentials_are_read_case_insensitively() -> None:
    assert bearer_secret(head((b"authorization", b"Bearer mnemo_k"))) == "mnemo_k"
    assert bearer_secret(head((b"authorization", b"bearer  mnemo_k "))) == "mnemo_k"


def test_other_schemes_and_empty_credentials_are_no_key() -> None:
    assert bearer_secret(head()) is None
    assert bearer_secret(head((b"authorization", b"Basic dXNlcjpwdw=="))) is None
    assert bearer_secret(head((b"authorization", b"Bearer "))) is None


def test_the_api_and_mcp_need_a_key_probes_and_the_console_do_not() -> None:
    assert is_protected("/v1/memories") and is_protected("/mcp") and is_protected("/mcp/")
    for path in ("/health", "/healthz", "/readyz", "/metrics", "/console", "/openapi.json"):
        assert not is_protected(path)
