"""Pages that work offline: `/` leads to the console, and /docs and /redoc load every
script, style and icon from this server (they used to load Swagger UI from a CDN)."""

from __future__ import annotations

import re

import httpx
import pytest

from tests.api.live_server import LiveServer

pytestmark = pytest.mark.integration
REFERENCE = re.compile(r"""(?:src|href)\s*=\s*["']([^"']+)["']|url:\s*['"]([^'"]+)['"]""")


def test_the_front_page_leads_to_the_console(live_server: LiveServer) -> None:
    answer = httpx.get(f"{live_server.url}/", follow_redirects=False)
    assert answer.status_code in (302, 303, 307)
    assert answer.headers["location"] == "/console/"
    landed = httpx.get(f"{live_server.url}/", follow_redirects=True)
    assert landed.status_code == 200 and landed.url.path.startswith("/console")


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_api_docs_load_only_from_this_server(live_server: LiveServer, page: str) -> None:
    answer = httpx.get(f"{live_server.url}{page}")
    assert answer.status_code == 200
    references = [a or b for a, b in REFERENCE.findall(answer.text)]
    scripts = [r for r in references if r.endswith(".js")]
    assert scripts, answer.text  # the page loads its bundle ...
    for reference in references:
        assert not reference.startswith(("http:", "https:", "//")), reference  # ... from here
        fetched = httpx.get(f"{live_server.url}{reference}")
        assert fetched.status_code == 200, reference
    assert "fonts.googleapis" not in answer.text
