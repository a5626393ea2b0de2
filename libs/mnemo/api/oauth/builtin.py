"""The built-in authorization server's provider for the mcp SDK's OAuth handlers.

The SDK serves the endpoints (RFC 8414 metadata, dynamic registration, /authorize with
PKCE S256, /token, /revoke) and calls this provider; its records live in Postgres
(`mnemo.store.oauth`), secrets hashed. `/authorize` sends the browser to the console's
consent page (`mnemo.console.consent`), where someone holding a key of the project
approves; the token then carries that key's grant, narrowed to the scopes approved.
Codes are single use, refresh tokens rotate, and a replayed one revokes its whole family.
"""

from __future__ import annotations

import secrets
import uuid
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    AuthorizeError,
    RefreshToken,
    TokenError,
)
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from sqlalchemy.ext.asyncio import AsyncEngine

from mnemo.clock import Clock
from mnemo.domain.grants import SCOPE_READ, SCOPE_WRITE, Grant
from mnemo.settings import OAuthSettings
from mnemo.store import oauth as store

if TYPE_CHECKING:
    from mnemo.core.engine import Engine

ACCESS_PREFIX = "mnat_"
REFRESH_PREFIX = "mnrt_"
CODE_PREFIX = "mnac_"
CONSENT_PREFIX = "mncs_"
CONSENT_SECONDS = 600
CODE_SECONDS = 300
CONSENT_PATH = "/console/oauth/consent"


def origin_of(url: str) -> str:
    scheme, _, rest = url.partition("://")
    return f"{scheme}://{rest.split('/', 1)[0]}"


class BuiltinProvider:
    """`OAuthAuthorizationServerProvider` over mnemo's database (engine read per call)."""

    def __init__(self, settings: OAuthSettings, engine: Callable[[], Engine]) -> None:
        assert settings.resource
        self.settings = settings
        self.resource = settings.resource
        self.issuer = origin_of(settings.resource)
        self._engine = engine

    @property
    def _db(self) -> AsyncEngine:
        return self._engine().db

    @property
    def _clock(self) -> Clock:
        return self._engine().deps.clock

    def _now(self) -> datetime:
        return self._clock.now()

    # -- clients --------------------------------------------------------------------
    async def get_client(self, client_id: str) -> OAuthClientInformationFull | None:
        async with self._db.connect() as conn:
            info = await store.client(conn, client_id)
        return None if info is None else OAuthClientInformationFull.model_validate(info)

    async def register_client(self, client_info: OAuthClientInformationFull) -> None:
        assert client_info.client_id
        info = client_info.model_dump(mode="json", exclude_none=True)
        async with self._db.begin() as conn:
            await store.save_client(conn, client_info.client_id, info, self._now())

    # -- authorization: the consent page finishes it -------------------------------
    async def authorize(
        self, client: OAuthClientInformationFull, params: AuthorizationParams
    ) -> str:
        if params.resource is not None and params.resource.rstrip("/") != self.resource.rstrip("/"):
            raise AuthorizeError("invalid_target", f"this server issues tokens for {self.resource}")
        scopes = params.scopes or [SCOPE_READ, SCOPE_WRITE]
        request_id = CONSENT_PREFIX + secrets.token_urlsafe(32)
        record = store.TokenRecord(
            "consent",
            str(client.client_id),
            str(uuid.uuid4()),
            None,
            False,
            None,
            scopes,
            self.resource,
            {
                "params": params.model_dump(mode="json"),
                "client_name": client.client_name or str(client.client_id),
            },
            self._now() + timedelta(seconds=CONSENT_SECONDS),
            None,
        )
        async with self._db.begin() as conn:
            await store.purge_expired(conn, self._now())  # expired rows go as new ones come
            await store.save_token(conn, request_id, record, self._now())
        return f"{self.issuer}{CONSENT_PATH}?request={request_id}"

    async def consent(self, request_id: str) -> store.TokenRecord | None:
        """The pending consent (unused, unexpired), for the consent page."""
        async with self._db.connect() as conn:
            found = await store.token(conn, request_id, "consent", self._now())
        return found if found is not None and found.used_at is None else None

    async def approve(self, request_id: str, grant: Grant, scopes: list[str]) -> str | None:
        """Issue a code for the consent, bound to `grant` (already narrowed to what the
        approver may give); the redirect URL with code and state, None when the consent
        is gone (expired, or answered already)."""
        now = self._now()
        async with self._db.begin() as conn:
            pending = await store.token(conn, request_id, "consent", now)
            if pending is None or not await store.mark_used(conn, request_id, now):
                return None
            params = AuthorizationParams.model_validate(pending.data["params"])
            code = CODE_PREFIX + secrets.token_urlsafe(32)
            record = store.TokenRecord(
                "code", pending.client_id, pending.family, grant.project, grant.writable,
                grant.user_id, scopes, pending.resource, {"params": pending.data["params"]},
                now + timedelta(seconds=CODE_SECONDS), None,
            )  # fmt: skip
            await store.save_token(conn, code, record, now)
        return _with_query(str(params.redirect_uri), code=code, state=params.state)

    async def deny(self, request_id: str) -> str | None:
        now = self._now()
        async with self._db.begin() as conn:
            pending = await store.token(conn, request_id, "consent", now)
            if pending is None or not await store.mark_used(conn, request_id, now):
                return None
        params = AuthorizationParams.model_validate(pending.data["params"])
        return _with_query(str(params.redirect_uri), error="access_denied", state=params.state)

    # -- codes and tokens -------------------------------------------------------------
    async def load_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: str
    ) -> AuthorizationCode | None:
        async with self._db.begin() as conn:
            found = await store.token(conn, authorization_code, "code", self._now())
            if found is None or found.client_id != client.client_id:
                return None
            if found.used_at is not None:  # replayed: whatever it gave is revoked
                await store.revoke_family(conn, found.family)
                return None
        params = AuthorizationParams.model_validate(found.data["params"])
        return AuthorizationCode(
            code=authorization_code,
            scopes=found.scopes,
            expires_at=found.expires_at.timestamp(),
            client_id=found.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=found.resource,
            subject=found.user_id,
        )

    async def exchange_authorization_code(
        self, client: OAuthClientInformationFull, authorization_code: AuthorizationCode
    ) -> OAuthToken:
        return await self._rotate(authorization_code.code, "code", None)

    async def load_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: str
    ) -> RefreshToken | None:
        async with self._db.begin() as conn:
            found = await store.token(conn, refresh_token, "refresh", self._now())
            if found is None or found.client_id != client.client_id:
                return None
            if found.used_at is not None:
                await store.revoke_family(conn, found.family)
                return None
        return RefreshToken(**_presented(refresh_token, found))

    async def exchange_refresh_token(
        self, client: OAuthClientInformationFull, refresh_token: RefreshToken, scopes: list[str]
    ) -> OAuthToken:
        return await self._rotate(refresh_token.token, "refresh", scopes)

    async def _rotate(self, used: str, kind: store.Kind, scopes: list[str] | None) -> OAuthToken:
        """Spend a code or refresh token (once) for a new access and refresh token."""
        now = self._now()
        async with self._db.begin() as conn:
            found = await store.token(conn, used, kind, now)
            if found is None or not await store.mark_used(conn, used, now):
                if found is not None:
                    await store.revoke_family(conn, found.family)
                raise TokenError("invalid_grant", f"the {kind} was used already or has expired")
            kept = [s for s in found.scopes if scopes is None or s in scopes]
            writable = found.writable and SCOPE_WRITE in kept
            access = ACCESS_PREFIX + secrets.token_urlsafe(32)
            refresh = REFRESH_PREFIX + secrets.token_urlsafe(32)
            lifetimes = (
                ("access", access, self.settings.access_token_seconds),
                ("refresh", refresh, self.settings.refresh_token_seconds),
            )
            for new_kind, secret, seconds in lifetimes:
                record = store.TokenRecord(
                    new_kind, found.client_id, found.family, found.project, writable,  # type: ignore[arg-type]
                    found.user_id, kept, found.resource, {}, now + timedelta(seconds=seconds), None,
                )  # fmt: skip
                await store.save_token(conn, secret, record, now)
        return OAuthToken(
            access_token=access,
            expires_in=self.settings.access_token_seconds,
            scope=" ".join(kept),
            refresh_token=refresh,
        )

    async def load_access_token(self, token: str) -> AccessToken | None:
        async with self._db.connect() as conn:
            found = await store.token(conn, token, "access", self._now())
        if found is None:
            return None
        return AccessToken(**_presented(token, found))

    async def grant_for(self, token: str) -> Grant | None:
        """The grant an access token carries; None when unknown, expired or revoked."""
        async with self._db.connect() as conn:
            found = await store.token(conn, token, "access", self._now())
        if found is None or found.project is None or found.resource != self.resource:
            return None
        return Grant(found.project, found.writable, found.user_id)

    async def revoke_token(self, token: AccessToken | RefreshToken) -> None:
        kind: store.Kind = "access" if isinstance(token, AccessToken) else "refresh"
        async with self._db.begin() as conn:
            found = await store.token(conn, token.token, kind, self._now())
            if found is not None:
                await store.revoke_family(conn, found.family)

    async def exchange_identity_assertion(self, client: Any, params: Any) -> OAuthToken:
        raise TokenError("unsupported_grant_type", "identity assertions are not supported")


def _with_query(url: str, **values: str | None) -> str:
    from urllib.parse import urlencode, urlsplit, urlunsplit

    parts = urlsplit(url)
    extra = urlencode({k: v for k, v in values.items() if v is not None})
    query = f"{parts.query}&{extra}" if parts.query else extra
    return urlunsplit(parts._replace(query=query))


def _presented(secret: str, found: store.TokenRecord) -> dict[str, Any]:
    """The fields the SDK's access and refresh token models share, from a stored token."""
    return {
        "token": secret,
        "client_id": found.client_id,
        "scopes": found.scopes,
        "expires_at": int(found.expires_at.timestamp()),
        "resource": found.resource,
        "subject": found.user_id,
    }
