"""create_app refuses to serve without authentication beyond loopback."""

from __future__ import annotations

import pytest

from mnemo.gateway.app import UnsafeConfiguration, create_app
from mnemo.settings import Settings


def _settings(**values) -> Settings:
    return Settings(embedding_provider="hash", **values)


@pytest.mark.parametrize("host", ["0.0.0.0", "10.0.0.5", "example.com"])
def test_auth_disabled_needs_loopback(host: str) -> None:
    with pytest.raises(UnsafeConfiguration):
        create_app(_settings(auth_disabled=True, host=host))


@pytest.mark.parametrize("host", ["127.0.0.1", "::1", "localhost"])
def test_auth_disabled_on_loopback_is_allowed(host: str) -> None:
    assert create_app(_settings(auth_disabled=True, host=host)).title == "mnemo"


def test_auth_enabled_anywhere() -> None:
    assert create_app(_settings(host="0.0.0.0")) is not None


def test_gateway_factory_reads_settings_when_called(monkeypatch: pytest.MonkeyPatch) -> None:
    from services.gateway.main import create

    monkeypatch.setenv("MNEMO_EMBEDDING_PROVIDER", "hash")
    monkeypatch.setenv("MNEMO_MAX_BODY_BYTES", "4096")
    app = create()
    assert app.state.settings.max_body_bytes == 4096 and app.state.engine is None
