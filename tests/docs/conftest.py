"""Fixtures of the docs tests (see tests/api/fixtures.py)."""

from tests.api.fixtures import llm_server

__all__ = ["llm_server"]
