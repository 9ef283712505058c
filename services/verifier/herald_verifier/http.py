"""The verifier's public HTTP surface. Provider receivers (`/inbound/...`) arrive
with the inbound-webhooks issue; until then every inbound path answers 404."""

from __future__ import annotations

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


async def healthz(request: Request) -> Response:
    return JSONResponse({"status": "ok"})


def create_app() -> Starlette:
    return Starlette(routes=[Route("/healthz", healthz)])
