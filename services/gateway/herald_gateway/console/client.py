"""The console's only way to Herald: the gateway's own HTTP API, called in process.

Each page calls the same routes an API user calls (through the same middleware, the same
authentication, rate limits and validation), with the session's credential as the bearer
token. So the console can do nothing the API does not allow, and the tenant scoping of
every read is the API's, not the console's.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import httpx
from starlette.types import ASGIApp


@dataclass
class Answer:
    status: int
    body: Any
    headers: httpx.Headers

    @property
    def ok(self) -> bool:
        return self.status < 400

    @property
    def problem(self) -> str:
        """A refused call as one line for the page: the problem's title and detail."""
        if isinstance(self.body, dict):
            detail = self.body.get("detail") or ""
            return f"{self.body.get('title', 'Refused')} ({self.status}): {detail}".rstrip(": ")
        return f"Refused ({self.status})"


class ApiClient:
    def __init__(self, app: ASGIApp, credential: str) -> None:
        self._client = httpx.AsyncClient(
            transport=httpx.ASGITransport(app=app),
            base_url="http://gateway.console",
            headers={"authorization": f"Bearer {credential}"},
            timeout=30.0,
        )

    async def __aenter__(self) -> ApiClient:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._client.aclose()

    async def call(self, method: str, path: str, json: Any = None, params: dict[str, str] | None = None) -> Answer:
        response = await self._client.request(
            method, path, json=json, params={k: v for k, v in (params or {}).items() if v}
        )
        body: Any = None
        if response.content:
            try:
                body = response.json()
            except ValueError:
                body = response.text
        return Answer(response.status_code, body, response.headers)

    async def get(self, path: str, params: dict[str, str] | None = None) -> Answer:
        return await self.call("GET", path, params=params)
