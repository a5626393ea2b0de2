"""Fixtures of the HTTP API tests (see tests/api/fixtures.py)."""

from tests.api.fixtures import Tenant, http, live_server, llm_server, tenant

__all__ = ["Tenant", "http", "live_server", "llm_server", "tenant"]
