"""Fixtures of the console tests: the live gateway of tests/api (its own instance here), a
second one with auth disabled, and a real headless Chromium (see browser.py)."""

from tests.api.fixtures import Tenant, live_server, llm_server, tenant
from tests.console.fixtures import browser, llm, open_server, other_tenant

__all__ = [
    "Tenant",
    "browser",
    "live_server",
    "llm",
    "llm_server",
    "open_server",
    "other_tenant",
    "tenant",
]
