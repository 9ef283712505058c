"""The API's pages for people: Swagger UI at /docs, ReDoc at /redoc, `/` to the console.

Both pages load their scripts from the gateway itself (the assets of the `fastapi-offline`
wheel), so they work on a machine with no internet access and fetch nothing from another
origin. The OpenAPI document declares the bearer scheme the API uses, so Swagger UI's
"Authorize" button takes an API key (or, for /admin, the operator token) and sends it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import fastapi_offline
from fastapi import FastAPI
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.staticfiles import StaticFiles

ASSETS = "/docs/assets"
BEARER = "bearer"
_ASSETS_DIR = Path(fastapi_offline.__file__).with_name("static")


def mount(app: FastAPI, openapi_url: str) -> None:
    """Adds /, /docs, /redoc and their assets; `FastAPI(docs_url=None, redoc_url=None)` leaves these to us."""

    async def swagger(request: Request) -> Response:
        return get_swagger_ui_html(
            openapi_url=openapi_url,
            title=f"{app.title} API",
            swagger_js_url=f"{ASSETS}/swagger-ui-bundle.js",
            swagger_css_url=f"{ASSETS}/swagger-ui.css",
            swagger_favicon_url=f"{ASSETS}/favicon.png",
            swagger_ui_parameters={"persistAuthorization": True},
        )

    async def redoc(request: Request) -> Response:
        return get_redoc_html(
            openapi_url=openapi_url,
            title=f"{app.title} API",
            redoc_js_url=f"{ASSETS}/redoc.standalone.js",
            redoc_favicon_url=f"{ASSETS}/favicon.png",
            with_google_fonts=False,
        )

    async def home(request: Request) -> Response:
        return RedirectResponse("/console", status_code=307)

    app.add_route("/docs", swagger, include_in_schema=False)
    app.add_route("/redoc", redoc, include_in_schema=False)
    app.add_route("/", home, include_in_schema=False)
    app.mount(ASSETS, StaticFiles(directory=_ASSETS_DIR), name="docs-assets")


def declare_bearer(schema: dict[str, Any]) -> dict[str, Any]:
    """Every /v1 and /admin operation takes `Authorization: Bearer <key or operator token>`."""
    schemes = schema.setdefault("components", {}).setdefault("securitySchemes", {})
    schemes[BEARER] = {
        "type": "http",
        "scheme": "bearer",
        "description": "A tenant's API key (`herald tenant create`, `/v1/api-keys`); the operator token for /admin.",
    }
    for path, operations in schema.get("paths", {}).items():
        if path.startswith(("/v1/", "/admin/")):
            for operation in operations.values():
                operation.setdefault("security", [{BEARER: []}])
    return schema


__all__ = ["declare_bearer", "mount"]
