"""Pages that work offline: `/` leads to the console, and the API docs (`/docs`, Swagger
UI; `/redoc`) load their scripts and styles from this server, not from a CDN.

The assets are the Swagger UI and ReDoc bundles the `fastapi-offline` package ships; mnemo
reads only its static folder, as files, never its code.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles

ASSETS_PATH = "/docs/assets"


def assets_dir() -> Path:
    """The folder of Swagger UI's and ReDoc's files, from the installed package."""
    spec = importlib.util.find_spec("fastapi_offline")
    if spec is None or spec.origin is None:
        raise RuntimeError(
            "the API docs' assets come from the fastapi-offline package: "
            "pip install 'fastapi-offline>=1.7,<2'"
        )
    return Path(spec.origin).parent / "static"


def install_api_docs(app: FastAPI) -> None:
    """`/docs`, `/redoc` and `/`, on an app created with docs_url=None, redoc_url=None."""
    app.mount(ASSETS_PATH, StaticFiles(directory=assets_dir()), name="api-docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"

    @app.get("/", include_in_schema=False)
    async def front() -> RedirectResponse:
        return RedirectResponse("/console/", status_code=307)

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui() -> HTMLResponse:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title}: API docs",
            swagger_js_url=f"{ASSETS_PATH}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS_PATH}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS_PATH}/favicon.png",
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc() -> HTMLResponse:
        return get_redoc_html(
            openapi_url=openapi_url,
            title=f"{app.title}: API reference",
            redoc_js_url=f"{ASSETS_PATH}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS_PATH}/favicon.png",
            with_google_fonts=False,
        )
