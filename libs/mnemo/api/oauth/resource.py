"""mnemo as an OAuth resource server: which bearer secrets it accepts, the Protected
Resource Metadata it serves (RFC 9728), and the hint its 401s carry.

A bearer secret is an API key (`mnemo_...`), an access token of the built-in server
(`mnat_...`), or a JWT of the configured external issuer; each resolves to a `Grant`.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from mcp.server.auth.routes import (
    build_resource_metadata_url,
    create_auth_routes,
    create_protected_resource_routes,
)
from mcp.server.auth.settings import ClientRegistrationOptions, RevocationOptions
from pydantic import AnyHttpUrl
from starlette.routing import Route

from mnemo.api.oauth.builtin import ACCESS_PREFIX, BuiltinProvider
from mnemo.api.oauth.external import ExternalIssuer, looks_like_jwt
from mnemo.domain.grants import SCOPES, Grant
from mnemo.store.keys import KEY_PREFIX

if TYPE_CHECKING:
    from mnemo.core.engine import Engine
    from mnemo.settings import Settings


class Credentials:
    """Turns a bearer secret into what it may do; built once per app from the settings."""

    def __init__(self, settings: Settings, engine: Callable[[], Engine]) -> None:
        oauth = settings.oauth
        self._engine = engine
        self.builtin = BuiltinProvider(oauth, engine) if oauth.builtin else None
        self.external = ExternalIssuer(oauth) if oauth.issuer else None
        self.metadata_url = (
            str(build_resource_metadata_url(AnyHttpUrl(oauth.resource))) if oauth.resource else None
        )

    async def grant_for(self, secret: str) -> Grant | None:
        if secret.startswith(KEY_PREFIX):
            return await self._engine().grant_for_key(secret)
        if self.builtin is not None and secret.startswith(ACCESS_PREFIX):
            return await self.builtin.grant_for(secret)
        if self.external is not None and looks_like_jwt(secret):
            return await self.external.grant_for(secret)
        return None

    def challenge(self, error: str | None = None) -> str:
        """The WWW-Authenticate value of a 401: with OAuth on, where to find out how to
        get a token (RFC 9728 section 5.1)."""
        if not self.metadata_url:
            return "Bearer"  # API keys only: nothing more to say
        parts = []
        if error:
            parts.append(f'error="{error}"')
        parts.append(f'resource_metadata="{self.metadata_url}"')
        parts.append(f'scope="{" ".join(SCOPES)}"')
        return "Bearer " + ", ".join(parts)


def oauth_routes(settings: Settings, credentials: Credentials) -> list[Route]:
    """The metadata routes (and the built-in server's endpoints) for the settings."""
    oauth = settings.oauth
    if not oauth.resource:
        return []
    # The built-in server first: the mcp SDK's client takes the first one listed.
    issuers = [credentials.builtin.issuer] if credentials.builtin is not None else []
    servers = [AnyHttpUrl(s) for s in (*issuers, oauth.issuer) if s]
    routes: list[Route] = []
    if credentials.builtin is not None:
        routes += create_auth_routes(
            credentials.builtin,
            issuer_url=AnyHttpUrl(credentials.builtin.issuer),
            client_registration_options=ClientRegistrationOptions(
                enabled=True, valid_scopes=list(SCOPES), default_scopes=list(SCOPES)
            ),
            revocation_options=RevocationOptions(enabled=True),
        )
    prm = create_protected_resource_routes(
        resource_url=AnyHttpUrl(oauth.resource),
        authorization_servers=servers,
        scopes_supported=list(SCOPES),
        resource_name="mnemo",
    )
    # Also at the root: clients that do not insert the resource's path ask there.
    root = Route(
        "/.well-known/oauth-protected-resource", prm[0].endpoint, methods=["GET", "OPTIONS"]
    )
    return [*routes, *prm, root]
