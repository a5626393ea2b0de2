"""OAuth 2.1 on /mcp against a live `mnemo serve` (issue 40), driven by the mcp SDK's own
client-side auth (`OAuthClientProvider`): discovery from the 401's resource_metadata hint,
Protected Resource Metadata, authorization server metadata, dynamic registration,
authorization code with PKCE through the console's consent page, then tool calls; and
the external issuer's JWTs, checked for audience (RFC 8707), issuer, key and expiry."""

from __future__ import annotations

import asyncio
import hashlib
import re
import uuid
import webbrowser
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import httpx
import httpx2
import psycopg
import pytest
from mcp.client import Client
from mcp.client.auth import OAuthClientProvider, TokenStorage
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)

from tests.mcp.oauth_server import ConsentBrowser, OAuthServer, free_port, serve_with_oauth
from tests.mcp.tools import call, refusal
from tests.support.oidc_issuer import OidcIssuer, other_key

pytestmark = pytest.mark.integration
WAIT = 30
REDIRECT = "http://127.0.0.1:1/callback"  # never opened: the browser stops at the redirect


@pytest.fixture(scope="module")
def issuer() -> Iterator[OidcIssuer]:
    with OidcIssuer() as running:
        yield running


@pytest.fixture(scope="module")
def server(
    postgres: Any, issuer: OidcIssuer, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[OAuthServer]:
    log = Path(tmp_path_factory.mktemp("oauth")) / "serve.log"
    yield from serve_with_oauth(postgres.new_database("oauth"), issuer, log)


class MemoryStorage(TokenStorage):
    def __init__(self) -> None:
        self.tokens: OAuthToken | None = None
        self.client: OAuthClientInformationFull | None = None

    async def get_tokens(self) -> OAuthToken | None:
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.tokens = tokens

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.client = client_info


def provider_for(
    server: OAuthServer, browser: ConsentBrowser, storage: MemoryStorage
) -> OAuthClientProvider:
    answers: asyncio.Queue[dict[str, list[str]]] = asyncio.Queue()

    async def redirect(url: str) -> None:
        await answers.put(await asyncio.to_thread(browser.authorize, url))

    async def callback() -> AuthorizationCodeResult:
        query = await answers.get()
        assert "code" in query, query
        return AuthorizationCodeResult(code=query["code"][0], state=query["state"][0])

    metadata = OAuthClientMetadata(
        client_name="test agent",
        redirect_uris=[REDIRECT],  # type: ignore[list-item]
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        scope="mnemo:read mnemo:write",
    )
    return OAuthClientProvider(server.resource, metadata, storage, redirect, callback)


@asynccontextmanager
async def oauth_client(server: OAuthServer, auth: httpx2.Auth) -> AsyncIterator[Client]:
    async with (
        httpx2.AsyncClient(auth=auth, timeout=httpx2.Timeout(30, read=120)) as http,
        Client(streamable_http_client(server.resource, http_client=http)) as client,
    ):
        yield client


async def http_post(url: str, **options: Any) -> httpx.Response:
    async with httpx.AsyncClient(timeout=60) as http:
        return await http.post(url, **options)


async def http_get(url: str, **options: Any) -> httpx.Response:
    async with httpx.AsyncClient(timeout=60) as http:
        return await http.get(url, **options)


class Bearer(httpx2.Auth):
    def __init__(self, token: str) -> None:
        self.token = token

    def auth_flow(self, request: httpx2.Request) -> Iterator[httpx2.Request]:
        request.headers["Authorization"] = f"Bearer {self.token}"
        yield request


def test_a_401_names_the_protected_resource_metadata(server: OAuthServer) -> None:
    refused = httpx.post(server.resource, json={})
    assert refused.status_code == 401
    challenge = refused.headers["www-authenticate"]
    hint = f'resource_metadata="{server.url}/.well-known/oauth-protected-resource/mcp"'
    assert challenge.startswith("Bearer") and hint in challenge
    prm = httpx.get(f"{server.url}/.well-known/oauth-protected-resource/mcp").json()
    assert prm["resource"] == server.resource
    assert prm["authorization_servers"][0].rstrip("/") == server.url
    assert server.issuer.url in [s.rstrip("/") for s in prm["authorization_servers"]]
    assert prm["scopes_supported"] == ["mnemo:read", "mnemo:write"]
    metadata = httpx.get(f"{server.url}/.well-known/oauth-authorization-server").json()
    assert metadata["code_challenge_methods_supported"] == ["S256"]
    assert metadata["registration_endpoint"] == f"{server.url}/register"


async def test_the_sdk_client_completes_the_flow_and_calls_tools(server: OAuthServer) -> None:
    project = f"p-{uuid.uuid4().hex[:8]}"
    key = server.create_key(project)
    browser, storage = ConsentBrowser(key), MemoryStorage()
    async with oauth_client(server, provider_for(server, browser, storage)) as client:
        tools = {t.name for t in (await client.list_tools()).tools}
        assert {"add_memory", "search_memories"} <= tools
        run = await call(client, "add_memory", text="I sail catamarans", user_id="ana",
                         wait_seconds=WAIT)  # fmt: skip
        assert run["status"] == "completed"
    # The consent page showed the client, the project and the scopes.
    page = browser.pages[0]
    assert "test agent" in page and f">{project}<" in page and "mnemo:write" in page
    assert storage.tokens is not None and storage.tokens.access_token.startswith("mnat_")
    assert storage.tokens.scope == "mnemo:read mnemo:write"
    # The token acts on the approving key's project, on REST too.
    headers = {"Authorization": f"Bearer {storage.tokens.access_token}"}
    found = await http_post(
        f"{server.url}/v1/memories/list", json={"user_id": "ana"}, headers=headers
    )
    memories = found.json()["memories"]
    assert len(memories) == 1 and "catamarans" in memories[0]["content"]
    keyed = {"Authorization": f"Bearer {key}"}  # the key itself still works beside tokens
    by_key = await http_post(f"{server.url}/v1/memories/list", json={"user_id": "ana"},
                             headers=keyed)  # fmt: skip
    assert by_key.json()["total"] == 1


async def test_refresh_rotates_and_a_replayed_refresh_token_revokes_the_family(
    server: OAuthServer,
) -> None:
    key = server.create_key(f"p-{uuid.uuid4().hex[:8]}")
    storage = MemoryStorage()
    async with oauth_client(server, provider_for(server, ConsentBrowser(key), storage)) as client:
        await client.list_tools()
    assert storage.tokens is not None and storage.client is not None
    first = storage.tokens
    # At rest, only hashes: no row holds a secret the client was given.
    with psycopg.connect(server.database_url) as db:
        rows = db.execute("SELECT row_to_json(t)::text FROM oauth_tokens t").fetchall()
        clients = db.execute("SELECT info::text FROM oauth_clients").fetchall()
    stored = " ".join(r[0] for r in rows)
    assert hashlib.sha256(first.access_token.encode()).hexdigest() in stored
    for secret in (first.access_token, first.refresh_token):
        assert secret and secret not in stored
    assert any(storage.client.client_id in c[0] for c in clients)
    form = {
        "grant_type": "refresh_token", "refresh_token": first.refresh_token,
        "client_id": storage.client.client_id, "client_secret": storage.client.client_secret,
    }  # fmt: skip
    rotated = await http_post(f"{server.url}/token", data=form)
    assert rotated.status_code == 200, rotated.text
    second = rotated.json()
    assert second["refresh_token"] != first.refresh_token
    assert second["access_token"] != first.access_token
    replay = await http_post(f"{server.url}/token", data=form)
    assert replay.status_code == 400 and replay.json()["error"] == "invalid_grant"
    # The replay revoked every token of that consent, the new ones included.
    for token in (first.access_token, second["access_token"]):
        verify = await http_get(f"{server.url}/v1/auth/verify",
                           headers={"Authorization": f"Bearer {token}"})  # fmt: skip
        assert verify.status_code == 401


async def test_a_read_only_approval_gives_a_token_that_cannot_write(server: OAuthServer) -> None:
    key = server.create_key(f"p-{uuid.uuid4().hex[:8]}")
    browser = ConsentBrowser(key, write=False, user_id="Bo")
    storage = MemoryStorage()
    async with oauth_client(server, provider_for(server, browser, storage)) as client:
        problem = await refusal(client, "add_memory", text="I sail", user_id="bo")
        assert problem["status"] == 403 and "read-only" in problem["detail"]
        other = await refusal(client, "list_memories", user_id="carla")
        assert other["status"] == 403
    assert storage.tokens is not None and storage.tokens.scope == "mnemo:read"


async def test_denying_consent_sends_access_denied(server: OAuthServer) -> None:
    key = server.create_key(f"p-{uuid.uuid4().hex[:8]}")
    browser = ConsentBrowser(key, decision="deny")
    provider = provider_for(server, browser, MemoryStorage())
    with pytest.raises(BaseException):  # noqa: B017 - the SDK's flow fails without a code
        async with oauth_client(server, provider) as client:
            await client.list_tools()
    assert browser.pages, "the consent page was shown"
    [answer] = browser.redirects
    assert answer["error"] == ["access_denied"] and "code" not in answer and answer["state"]


async def test_external_issuer_tokens_are_checked_and_bound_to_their_subject(
    server: OAuthServer,
) -> None:
    issuer = server.issuer
    token = issuer.token(server.resource, sub=f"dana-{uuid.uuid4().hex[:6]}")
    async with oauth_client(server, Bearer(token)) as client:
        run = await call(client, "add_memory", text="I fly kites", wait_seconds=WAIT)
        assert run["status"] == "completed" and run["user_id"]
        problem = await refusal(client, "list_memories", user_id="someone-else")
        assert problem["status"] == 403
    refused = [
        issuer.token("https://elsewhere.example/mcp"),  # another resource's token
        issuer.token(server.resource, issuer="https://other-issuer.example"),
        issuer.token(server.resource, key=other_key()),  # not signed by the issuer
        issuer.token(server.resource, lifetime=-120),  # expired
    ]
    for bad in refused:
        answer = await http_post(
            server.resource, json={}, headers={"Authorization": f"Bearer {bad}"}
        )
        assert answer.status_code == 401, bad
        assert 'error="invalid_token"' in answer.headers["www-authenticate"]
    read_only = issuer.token(server.resource, sub="erin", scope="mnemo:read")
    add = await http_post(f"{server.url}/v1/memories", json={"input": {"string": {"content": ["x"]}}},
                     headers={"Authorization": f"Bearer {read_only}"})  # fmt: skip
    assert add.status_code == 403 and "read-only" in add.json()["detail"]


PAGE = Path(__file__).resolve().parents[2] / "docs/guides/agents-and-mcp.md"


def test_the_guides_oauth_client_runs_as_written(
    server: OAuthServer, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The page's example, with the browser played by a scripted one that signs in with a
    key, approves, and follows the redirect to the example's loopback callback."""
    [block] = re.findall(
        r'```python title="mcp_oauth_client.py"\n(.*?)```', PAGE.read_text(encoding="utf-8"), re.S
    )
    key = server.create_key(f"p-{uuid.uuid4().hex[:8]}")
    port = free_port()
    browser = ConsentBrowser(key, redirect_uri=f"http://127.0.0.1:{port}/callback")

    def open_browser(url: str) -> bool:
        browser.authorize(url)
        assert httpx.get(browser.final).status_code == 200  # the example's callback page
        return True

    monkeypatch.setattr(webbrowser, "open", open_browser)
    monkeypatch.setenv("MNEMO_MCP_URL", server.resource)
    monkeypatch.setenv("CALLBACK_PORT", str(port))
    exec(compile(block, str(PAGE), "exec"), {"__name__": "__main__"})
    assert capsys.readouterr().out == "groups: ['default']\n"
    assert "my agent" in browser.pages[0]
