"""Which clients get search results wrapped as {"Body": memory}: weaviate-engram 0.1 and
0.2 only (their parsers read `m["Body"]`; 0.3.0 onward read the memory, checked against
the releases' wheels on 2026-12-07)."""

from __future__ import annotations

import pytest

from mnemo.api.engram_releases import wrapped, wraps_search_results


@pytest.mark.parametrize("agent", ["weaviate-engram/0.1.0", "weaviate-engram/0.2.0 ",
                                   "weaviate-engram/0.2.7 extra"])  # fmt: skip
def test_the_two_oldest_releases_are_wrapped(agent: str) -> None:
    assert wraps_search_results(agent)


@pytest.mark.parametrize("agent", [None, "", "python-httpx/0.28.1", "weaviate-engram/0.3.0",
                                   "weaviate-engram/0.5.0", "weaviate-engram/0.10.0",
                                   "weaviate-engram/1.0.1", "my-app weaviate-engram/0.1.0"])  # fmt: skip
def test_every_other_client_reads_the_current_shape(agent: str | None) -> None:
    assert not wraps_search_results(agent)


def test_each_memory_goes_under_body_and_the_rest_is_kept() -> None:
    page = {"memories": [{"id": "a"}, {"id": "b"}], "total": 2}
    assert wrapped(page) == {"memories": [{"Body": {"id": "a"}}, {"Body": {"id": "b"}}],
                             "total": 2}  # fmt: skip
