"""Fixtures of the HTTP API tests (see tests/api/fixtures.py)."""

from tests.api.fixtures import Tenant, live_server, llm_server, tenant

__all__ = ["Tenant", "live_server", "llm_server", "tenant"]
