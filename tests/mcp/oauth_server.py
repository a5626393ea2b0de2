"""A live `mnemo serve` with OAuth on (the built-in authorization server, and the test
issuer of tests/support/oidc_issuer.py as the external one), keys made with `mnemo keys
create`, and a scripted browser that signs in to the console and answers the consent page
(a real HTML form: its CSRF token and request id are read from the page)."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx

from tests.support.oidc_issuer import OidcIssuer
from tests.support.ports import free_port

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class OAuthServer:
    url: str
    database_url: str
    issuer: OidcIssuer
    env: dict[str, str] = field(default_factory=dict)

    @property
    def resource(self) -> str:
        return f"{self.url}/mcp"

    def create_key(self, project: str, *options: str) -> str:
        done = subprocess.run(
            [sys.executable, "-m", "mnemo.cli.main", "keys", "create", "--project", project,
             *options],
            env=self.env, capture_output=True, text=True, timeout=120, check=True,
        )  # fmt: skip
        return done.stdout.strip()


def serve_with_oauth(database_url: str, issuer: OidcIssuer, log: Path) -> Iterator[OAuthServer]:
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    env = {
        **os.environ,
        "PYTHONPATH": f"{ROOT / 'libs'}{os.pathsep}{ROOT}",
        "MNEMO_DATABASE_URL": database_url,
        "MNEMO_EMBEDDING_PROVIDER": "hash",
        "MNEMO_WORKER_PROCESSES": "0",
        "MNEMO_BUS_POLL_SECONDS": "0.1",
        "MNEMO_OAUTH_RESOURCE": f"{url}/mcp",
        "MNEMO_OAUTH_BUILTIN": "true",
        "MNEMO_OAUTH_ISSUER": issuer.url,
        "MNEMO_OAUTH_PROJECT": "oidc",
        "MNEMO_OAUTH_USER_CLAIM": "sub",
    }
    for name in ("MNEMO_LLM_BASE_URL", "MNEMO_LLM_API_KEY", "MNEMO_AUTH_DISABLED"):
        env.pop(name, None)
    server = OAuthServer(url, database_url, issuer, env)
    server.create_key("warmup")  # creates the schema before the server starts
    process = subprocess.Popen(
        [sys.executable, "-m", "mnemo.cli.main", "serve", "--port", str(port)],
        env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 180
        while True:
            assert process.poll() is None, f"mnemo serve exited: {log.read_text()[-3000:]}"
            try:
                if httpx.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert time.monotonic() < deadline, log.read_text()[-3000:]
            time.sleep(0.3)
        yield server
    finally:
        process.terminate()
        try:
            process.wait(60)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _form_value(html: str, name: str) -> str:
    found = re.search(rf'name="{name}" value="([^"]*)"', html)
    assert found, f"no {name} in the page: {html[:2000]}"
    return found.group(1)


@dataclass
class ConsentBrowser:
    """Follows an authorization URL as a person would: signs in to the console with `key`
    when asked, then answers the consent page. `pages` keeps the consent page's HTML."""

    key: str
    decision: str = "approve"
    write: bool = True
    user_id: str = ""
    redirect_uri: str = "http://127.0.0.1:1/callback"
    final: str = ""
    pages: list[str] = field(default_factory=list)
    redirects: list[dict[str, list[str]]] = field(default_factory=list)

    def authorize(self, authorization_url: str) -> dict[str, list[str]]:
        """The query of the final redirect to the client's redirect_uri (not followed;
        `final` holds its URL)."""
        with httpx.Client(timeout=60) as browser:
            answer = browser.get(authorization_url)
            assert answer.status_code in (302, 303, 307), answer.text
            consent_url = answer.headers["location"]
            page = browser.get(consent_url)
            if page.status_code == 303 and "/console/login" in page.headers["location"]:
                login = browser.get(urljoin(consent_url, page.headers["location"]))
                signed_in = browser.post(
                    urljoin(consent_url, "/console/login"),
                    data={
                        "key": self.key,
                        "next": _form_value(login.text, "next"),
                        "csrf_token": _form_value(login.text, "csrf_token"),
                    },
                )
                assert signed_in.status_code == 303, signed_in.text
                page = browser.get(urljoin(consent_url, signed_in.headers["location"]))
            assert page.status_code == 200, page.text
            self.pages.append(page.text)
            form = {
                "csrf_token": _form_value(page.text, "csrf_token"),
                "request": _form_value(page.text, "request"),
                "decision": self.decision,
                "user_id": self.user_id,
                **({"write": "true"} if self.write else {}),
            }
            answered = browser.post(urljoin(consent_url, "/console/oauth/consent"), data=form)
            assert answered.status_code == 303, answered.text
            assert answered.headers["location"].startswith(self.redirect_uri)
            self.final = answered.headers["location"]
            self.redirects.append(parse_qs(urlsplit(answered.headers["location"]).query))
            return self.redirects[-1]
