"""One settings object: a nested Kafka section under the documented names, and no silent typos."""

from __future__ import annotations

import pytest

from mnemo.domain.limits import InputLimits
from mnemo.settings import (
    CLIENT_VARIABLES,
    KafkaSettings,
    OAuthSettings,
    Settings,
    known_variables,
)


def test_kafka_variables_keep_their_documented_names(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_KAFKA_BOOTSTRAP_SERVERS", "10.0.0.1:9092")
    monkeypatch.setenv("MNEMO_KAFKA_PARTITIONS", "8")
    monkeypatch.setenv("MNEMO_KAFKA_TOPIC_PREFIX", "acme")
    monkeypatch.setenv("MNEMO_KAFKA_BUFFER_TICK_SECONDS", "0.5")
    monkeypatch.setenv("MNEMO_METRICS_PORT", "9101")
    monkeypatch.setenv("MNEMO_DATABASE_URL", "postgresql://db/mnemo")
    settings = Settings()
    assert settings.kafka.bootstrap_servers == "10.0.0.1:9092"
    assert (settings.kafka.partitions, settings.kafka.topic_prefix) == (8, "acme")
    assert settings.kafka.buffer_tick_seconds == 0.5
    assert settings.metrics_port == 9101
    assert settings.database_url == "postgresql://db/mnemo"  # not split into a section


def test_the_kafka_section_is_validated(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_KAFKA_PARTITIONS", "0")
    with pytest.raises(ValueError, match="partitions"):
        Settings()


def test_an_unknown_mnemo_variable_is_refused_by_name(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_WORKER", "8")
    monkeypatch.setenv("MNEMO_KAFKA_PARTITION", "8")
    with pytest.raises(ValueError) as refused:
        Settings()
    message = str(refused.value)
    assert "MNEMO_WORKER (did you mean MNEMO_WORKERS?)" in message
    assert "MNEMO_KAFKA_PARTITION (did you mean MNEMO_KAFKA_PARTITIONS?)" in message


def test_variables_read_by_clients_and_scripts_are_allowed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name in CLIENT_VARIABLES:
        monkeypatch.setenv(name, "x")
    monkeypatch.setenv("OTHER_TOOL_SETTING", "1")  # not ours: none of our business
    assert Settings().workers == 16
    assert {"MNEMO_URL", "MNEMO_API_KEY", "MNEMO_LOG_DIR"} <= CLIENT_VARIABLES


def test_every_field_has_one_variable() -> None:
    known = known_variables()
    assert {"MNEMO_WORKERS", "MNEMO_MODE", "MNEMO_KAFKA_DLQ_ENABLED"} <= known
    assert "MNEMO_KAFKA" not in known and "MNEMO_KAFKA_KAFKA_PARTITIONS" not in known
    assert "MNEMO_LIMITS_MEMORY_CHARS" in known and "MNEMO_LIMITS" not in known
    assert "MNEMO_OAUTH_RESOURCE" in known and "MNEMO_OAUTH" not in known
    sections = (
        len(KafkaSettings.model_fields)
        + len(InputLimits.model_fields)
        + len(OAuthSettings.model_fields)
    )
    assert len(known) == len(Settings.model_fields) - 3 + sections
    assert not known & CLIENT_VARIABLES


def test_limits_come_from_their_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_LIMITS_MEMORY_CHARS", "8000")
    monkeypatch.setenv("MNEMO_LIMITS_GROUPS_PER_PROJECT", "5")
    limits = Settings().limits
    assert (limits.memory_chars, limits.groups_per_project) == (8000, 5)
    assert limits.add_units == InputLimits().add_units
    monkeypatch.setenv("MNEMO_LIMITS_MEMORY_CHARS", "1000000")  # past what Postgres can index
    with pytest.raises(ValueError, match="memory_chars"):
        Settings()


@pytest.mark.parametrize(
    ("variables", "refusal"),
    [
        ({"MNEMO_OAUTH_BUILTIN": "true"}, "MNEMO_OAUTH_RESOURCE is required"),
        ({"MNEMO_OAUTH_RESOURCE": "https://m.example/mcp"}, "needs MNEMO_OAUTH_ISSUER"),
        (
            {"MNEMO_OAUTH_RESOURCE": "http://m.example/mcp", "MNEMO_OAUTH_BUILTIN": "true"},
            "MNEMO_OAUTH_RESOURCE must be an https:// URL",
        ),
        (
            {"MNEMO_OAUTH_RESOURCE": "https://m.example/mcp", "MNEMO_OAUTH_ISSUER": "idp"},
            "MNEMO_OAUTH_ISSUER must be an https:// URL",
        ),
    ],
)
def test_oauth_settings_are_checked_at_start_up(
    monkeypatch: pytest.MonkeyPatch, variables: dict[str, str], refusal: str
) -> None:
    for name, value in variables.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ValueError, match=refusal):
        Settings()


def test_oauth_on_loopback_may_use_http(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MNEMO_OAUTH_RESOURCE", "http://127.0.0.1:8080/mcp")
    monkeypatch.setenv("MNEMO_OAUTH_BUILTIN", "true")
    assert Settings().oauth.enabled
