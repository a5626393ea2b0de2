"""Access tokens of an external authorization server: JWTs signed with a key of the
issuer's JWKS, checked for issuer, expiry and audience (this resource, RFC 8707).

The JWKS is fetched when first needed and again (at most every REFETCH_SECONDS) when a token
names a key id it does not hold, so the issuer can rotate its keys.
"""

from __future__ import annotations

import asyncio
import logging
import time
from typing import Any

import httpx
import jwt

from mnemo.domain.grants import SCOPE_WRITE, Grant, bound
from mnemo.settings import OAuthSettings

log = logging.getLogger(__name__)

# At most one JWKS fetch this often for an unknown key id (the issuer rotated its keys).
REFETCH_SECONDS = 5.0
ALGORITHMS = ["RS256", "RS384", "RS512", "PS256", "ES256", "ES384", "EdDSA"]


def looks_like_jwt(secret: str) -> bool:
    return secret.count(".") == 2


class ExternalIssuer:
    def __init__(self, settings: OAuthSettings) -> None:
        assert settings.issuer and settings.resource
        self.settings = settings
        self.issuer = settings.issuer
        self._keys: jwt.PyJWKSet | None = None
        self._fetched = 0.0
        self._lock = asyncio.Lock()

    async def grant_for(self, token: str) -> Grant | None:
        """The grant of a valid token; None for any token that does not check out."""
        try:
            header = jwt.get_unverified_header(token)
            key = await self._key(str(header.get("kid", "")))
            if key is None:
                return None
            claims: dict[str, Any] = jwt.decode(
                token,
                key=key.key,
                algorithms=ALGORITHMS,
                audience=self.settings.resource,
                issuer=self.issuer,
                options={"require": ["exp", "iss", "aud"]},
            )
        except (jwt.PyJWTError, ValueError) as exc:
            log.info("external token refused: %s", exc)
            return None
        scopes = str(claims.get("scope", "")).split()
        user = claims.get(self.settings.user_claim) if self.settings.user_claim else None
        if self.settings.user_claim and not isinstance(user, str):
            return None  # bound by configuration, but the token names no user
        try:
            return bound(self.settings.project, SCOPE_WRITE in scopes, user)
        except ValueError:
            return None

    async def _key(self, kid: str) -> jwt.PyJWK | None:
        found = self._find(kid)
        if found is not None:
            return found
        async with self._lock:
            if time.monotonic() - self._fetched >= REFETCH_SECONDS or self._keys is None:
                await self._fetch()
        return self._find(kid)

    def _find(self, kid: str) -> jwt.PyJWK | None:
        if self._keys is None:
            return None
        for key in self._keys.keys:
            if key.key_id == kid or (not kid and len(self._keys.keys) == 1):
                return key
        return None

    async def _fetch(self) -> None:
        self._fetched = time.monotonic()
        try:
            async with httpx.AsyncClient(timeout=10.0) as http:
                url = self.settings.jwks_url or await self._discover(http)
                answer = await http.get(url)
                answer.raise_for_status()
                self._keys = jwt.PyJWKSet.from_dict(answer.json())
        except (httpx.HTTPError, jwt.PyJWTError, ValueError) as exc:
            log.warning("could not fetch the JWKS of %s: %s", self.issuer, exc)

    async def _discover(self, http: httpx.AsyncClient) -> str:
        base = self.issuer.rstrip("/")
        answer = await http.get(f"{base}/.well-known/openid-configuration")
        answer.raise_for_status()
        return str(answer.json()["jwks_uri"])
