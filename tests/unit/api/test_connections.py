"""Query strings never reach the access log: values (and bare items) become `***`."""

from __future__ import annotations

import logging

from mnemo.api.connections import RedactQuery, redact_query


def test_every_query_value_and_bare_item_is_redacted() -> None:
    assert redact_query("/v1/runs/r1?wait=5&api_key=mnemo_secret") == (
        "/v1/runs/r1?wait=***&api_key=***"
    )
    assert redact_query("/v1/auth/verify?mnemo_secret") == "/v1/auth/verify?***"
    assert redact_query("/health") == "/health"
    assert redact_query("/x?=mnemo_secret&a=") == "/x?***&a=***"


def test_the_access_log_filter_rewrites_uvicorns_path_argument() -> None:
    record = logging.LogRecord(
        "uvicorn.access",
        logging.INFO,
        __file__,
        1,
        '%s - "%s %s HTTP/%s" %d',
        ("127.0.0.1:5000", "GET", "/v1/memories/m1?key=mnemo_secret", "1.1", 401),
        None,
    )
    assert RedactQuery().filter(record)
    message = record.getMessage()
    assert "mnemo_secret" not in message
    assert message == '127.0.0.1:5000 - "GET /v1/memories/m1?key=*** HTTP/1.1" 401'
