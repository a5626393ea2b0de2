"""A small real OIDC issuer for tests: an HTTP server on 127.0.0.1 (a background thread)
serving /.well-known/openid-configuration and its JWKS, and signing RS256 access tokens
with its own key. Tests ask it for tokens (`token(...)`) as an authorization server would
issue them, including wrong ones (another audience, another key, expired)."""

from __future__ import annotations

import json
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import jwt
from cryptography.hazmat.primitives.asymmetric import rsa


def _new_key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


class OidcIssuer:
    def __init__(self) -> None:
        self.key = _new_key()
        self.kid = uuid.uuid4().hex[:8]
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.url = f"http://127.0.0.1:{self._server.server_address[1]}"
        self.jwks_requests = 0

    def _jwks(self) -> dict[str, Any]:
        public = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(self.key.public_key()))
        return {"keys": [{**public, "kid": self.kid, "use": "sig", "alg": "RS256"}]}

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        issuer = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                if self.path == "/.well-known/openid-configuration":
                    body: dict[str, Any] = {
                        "issuer": issuer.url,
                        "jwks_uri": f"{issuer.url}/jwks.json",
                        "authorization_endpoint": f"{issuer.url}/authorize",
                        "token_endpoint": f"{issuer.url}/token",
                        "response_types_supported": ["code"],
                        "subject_types_supported": ["public"],
                        "id_token_signing_alg_values_supported": ["RS256"],
                    }
                elif self.path == "/jwks.json":
                    issuer.jwks_requests += 1
                    body = issuer._jwks()
                else:
                    self.send_error(404)
                    return
                data = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            def log_message(self, *args: Any) -> None:
                pass

        return Handler

    def token(
        self,
        audience: str,
        *,
        sub: str = "agent",
        scope: str = "mnemo:read mnemo:write",
        lifetime: int = 600,
        issuer: str | None = None,
        key: rsa.RSAPrivateKey | None = None,
        **claims: Any,
    ) -> str:
        now = int(time.time())
        payload = {
            "iss": issuer or self.url, "aud": audience, "sub": sub, "scope": scope,
            "iat": now, "exp": now + lifetime, **claims,
        }  # fmt: skip
        return jwt.encode(payload, key or self.key, algorithm="RS256", headers={"kid": self.kid})

    def rotate(self) -> None:
        """A new signing key (and key id); tokens signed before no longer verify."""
        self.key, self.kid = _new_key(), uuid.uuid4().hex[:8]

    def __enter__(self) -> OidcIssuer:
        threading.Thread(target=self._server.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def other_key() -> rsa.RSAPrivateKey:
    return _new_key()
