"""The pages a browser opens: the chat page at / and the API docs at /docs and /redoc.

Everything they load is served from here, nothing from another host: the chat page is the
plain HTML/CSS/JS of `static/` (inside the package), and the docs load Swagger UI's and ReDoc's
files from the `fastapi-offline` package instead of FastAPI's default CDN (without network the
default /docs is a blank page). None of them needs the API key: the page asks for it when the
API answers 401.
"""

from __future__ import annotations

from pathlib import Path

import fastapi_offline
from fastapi import FastAPI, Request
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import FileResponse, HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC_DIR = Path(__file__).parent / "static"
DOCS_ASSETS_DIR = Path(fastapi_offline.__file__).parent / "static"
DOCS_ASSETS_URL = "/docs-assets"


def add_pages(app: FastAPI) -> None:
    """Add the chat page and the offline docs to `app`, made with `docs_url=None` and
    `redoc_url=None` (FastAPI's own pages would load from a CDN)."""
    if app.docs_url is not None or app.redoc_url is not None:
        raise ValueError(
            "create the app with docs_url=None, redoc_url=None: these pages replace them"
        )
    app.mount("/static", StaticFiles(directory=STATIC_DIR), name="static")
    app.mount(DOCS_ASSETS_URL, StaticFiles(directory=DOCS_ASSETS_DIR), name="docs-assets")
    openapi_url = app.openapi_url or "/openapi.json"
    oauth2_redirect_url = app.swagger_ui_oauth2_redirect_url or "/docs/oauth2-redirect"

    @app.get("/", include_in_schema=False)
    async def chat_page() -> FileResponse:
        return FileResponse(STATIC_DIR / "index.html", headers={"Cache-Control": "no-cache"})

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_swagger_ui_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - Swagger UI",
            oauth2_redirect_url=oauth2_redirect_url,
            swagger_js_url=f"{root}{DOCS_ASSETS_URL}/swagger-ui-bundle.js",
            swagger_css_url=f"{root}{DOCS_ASSETS_URL}/swagger-ui.css",
            swagger_favicon_url=f"{root}{DOCS_ASSETS_URL}/favicon.png",
            # Swagger UI would otherwise send the spec's URL to its online validator.
            swagger_ui_parameters={**(app.swagger_ui_parameters or {}), "validatorUrl": None},
        )

    @app.get(oauth2_redirect_url, include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return get_redoc_html(
            openapi_url=root + openapi_url,
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}{DOCS_ASSETS_URL}/redoc.standalone.js",
            redoc_favicon_url=f"{root}{DOCS_ASSETS_URL}/favicon.png",
            with_google_fonts=False,
        )
