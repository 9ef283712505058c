"""`GET /healthz` and `GET /readyz` for every HTTP service (the gateway, the verifier).

/healthz says the process answers HTTP at all (a liveness probe: it never looks at anything else, so
an outage elsewhere never gets a healthy pod restarted). /readyz says its dependencies answer too: each
one is asked (a gRPC peer its `grpc.health.v1` status, the bus a JetStream request) within a second,
all at once; 200 lists them, 503 is problem+json naming the ones that did not answer, so a load balancer
takes the pod out of rotation and an operator reads which dependency is the cause. While the process
shuts down /readyz answers 503 too.

Both sit in front of the application (`serve_asgi(..., health=...)`): no authentication, no rate limit,
no span or request metric per probe. One check runs at a time and its answer serves every caller for a
second, so probes (or anyone calling the gateway's public /readyz) cannot multiply calls onto the
router, the ledger or the bus.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import grpc
import orjson
from grpc_health.v1 import health_pb2, health_pb2_grpc

from herald.http_limits import PROBLEM_BASE

ALIVE_PATH = "/healthz"
READY_PATH = "/readyz"
CHECK_TIMEOUT_S = 1.0
REUSE_S = 1.0
OK = "ok"


@dataclass(frozen=True)
class Dependency:
    """Something the service needs to do its work. `check` returns None when it answers,
    else a short reason (a status name, never an address or a message from the peer)."""

    name: str
    check: Callable[[], Awaitable[str | None]]


def grpc_dependency(name: str, channel: grpc.aio.Channel, timeout_s: float = CHECK_TIMEOUT_S) -> Dependency:
    """A gRPC peer, through the channel the service already calls it on: SERVING or not."""
    stub = health_pb2_grpc.HealthStub(channel)

    async def check() -> str | None:
        try:
            answer = await stub.Check(health_pb2.HealthCheckRequest(service=""), timeout=timeout_s)
        except grpc.aio.AioRpcError as error:
            return str(error.code().name)
        if answer.status != health_pb2.HealthCheckResponse.SERVING:
            return str(health_pb2.HealthCheckResponse.ServingStatus.Name(answer.status))
        return None

    return Dependency(name, check)


def jetstream_dependency(name: str, jetstream: Callable[[], Any], timeout_s: float = CHECK_TIMEOUT_S) -> Dependency:
    """The bus: `jetstream()` gives the service's JetStream context (None until it connected);
    an account-info request must come back (the server and JetStream both answer)."""

    async def check() -> str | None:
        js = jetstream()
        if js is None:
            return "NOT_CONNECTED"
        try:
            await asyncio.wait_for(js.account_info(), timeout=timeout_s)
        except TimeoutError:
            return "DEADLINE_EXCEEDED"
        except Exception as error:
            return type(error).__name__
        return None

    return Dependency(name, check)


class Health:
    """The two routes, over the service's dependencies and its `stopping` event."""

    def __init__(
        self,
        dependencies: list[Dependency],
        stopping: asyncio.Event | None = None,
        reuse_s: float = REUSE_S,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.dependencies = dependencies
        self.stopping = stopping
        self.reuse_s = reuse_s
        self.clock = clock
        self._last: asyncio.Task[dict[str, str]] | None = None
        self._last_at = 0.0

    async def readiness(self) -> dict[str, str]:
        """Each dependency's name -> "ok" or why not (the last answer if under a second old)."""
        if self._last is None or (self._last.done() and self.clock() - self._last_at >= self.reuse_s):
            self._last = asyncio.ensure_future(self._check_all())
            self._last_at = self.clock()
        return await asyncio.shield(self._last)

    async def _check_all(self) -> dict[str, str]:
        results = await asyncio.gather(*(d.check() for d in self.dependencies), return_exceptions=True)
        out: dict[str, str] = {}
        for dependency, result in zip(self.dependencies, results, strict=True):
            if isinstance(result, BaseException):
                out[dependency.name] = type(result).__name__
            else:
                out[dependency.name] = result or OK
        return out

    async def answer(self, path: str) -> tuple[int, dict[str, Any]]:
        """(status, body) for GET `path` (one of the two routes)."""
        if path == ALIVE_PATH:
            return 200, {"status": "ok"}
        if self.stopping is not None and self.stopping.is_set():
            return 503, _not_ready({}, "shutting down")
        checks = await self.readiness()
        failing = [name for name, verdict in checks.items() if verdict != OK]
        if failing:
            detail = "; ".join(f"{name} does not answer ({checks[name]})" for name in failing)
            return 503, _not_ready(checks, detail, failing)
        return 200, {"status": "ready", "checks": checks}

    def wrap(self, app: Any) -> Any:
        """`app` with the two routes answered in front of it."""

        async def asgi(scope: dict[str, Any], receive: Any, send: Any) -> None:
            path = scope.get("path")
            if scope["type"] != "http" or path not in (ALIVE_PATH, READY_PATH):
                await app(scope, receive, send)
                return
            headers = [(b"cache-control", b"no-store")]
            if scope["method"] not in ("GET", "HEAD"):
                status, body = 405, _problem(405, "method-not-allowed", "Method Not Allowed", "GET only")
                headers.append((b"allow", b"GET, HEAD"))
            else:
                status, body = await self.answer(str(path))
            media = b"application/json" if status == 200 else b"application/problem+json"
            content = orjson.dumps(body)
            headers += [(b"content-type", media), (b"content-length", str(len(content)).encode())]
            await send({"type": "http.response.start", "status": status, "headers": headers})
            await send({"type": "http.response.body", "body": b"" if scope["method"] == "HEAD" else content})

        return asgi


def _problem(status: int, kind: str, title: str, detail: str, **extra: Any) -> dict[str, Any]:
    return {"type": PROBLEM_BASE + kind, "title": title, "status": status, "detail": detail, **extra}


def _not_ready(checks: dict[str, str], detail: str, failing: list[str] | None = None) -> dict[str, Any]:
    return _problem(503, "not-ready", "Not ready", detail, failing=failing or [], checks=checks)


_CHECKS_SCHEMA = {
    "type": "object",
    "description": 'Each dependency (e.g. router, ledger, bus) -> "ok", or why it did not answer (a status name).',
    "additionalProperties": {"type": "string"},
}
_NOT_READY = {
    "description": "Not ready: problem details whose `failing` names the dependencies that did not answer "
    "(or the process is shutting down).",
    "content": {
        "application/problem+json": {
            "schema": {
                "type": "object",
                "required": ["type", "title", "status", "detail", "failing", "checks"],
                "properties": {
                    "type": {"type": "string"},
                    "title": {"type": "string"},
                    "status": {"type": "integer"},
                    "detail": {"type": "string"},
                    "failing": {"type": "array", "items": {"type": "string"}},
                    "checks": _CHECKS_SCHEMA,
                },
            }
        }
    },
}
OPENAPI_PATHS: dict[str, Any] = {
    ALIVE_PATH: {
        "get": {
            "tags": ["health"],
            "summary": "Alive",
            "description": "The process answers HTTP. Looks at nothing else (a liveness probe). No key needed.",
            "operationId": "healthz",
            "security": [],
            "responses": {
                "200": {
                    "description": "Alive.",
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["status"],
                                "properties": {"status": {"type": "string", "enum": ["ok"]}},
                            }
                        }
                    },
                }
            },
        }
    },
    READY_PATH: {
        "get": {
            "tags": ["health"],
            "summary": "Ready",
            "description": "Every dependency answers (the gateway: router, ledger, bus), each asked within a "
            "second; an answer is reused for a second. No key needed.",
            "operationId": "readyz",
            "security": [],
            "responses": {
                "200": {
                    "description": "Ready: every dependency answered.",
                    "content": {
                        "application/json": {
                            "schema": {
                                "type": "object",
                                "required": ["status", "checks"],
                                "properties": {
                                    "status": {"type": "string", "enum": ["ready"]},
                                    "checks": _CHECKS_SCHEMA,
                                },
                            }
                        }
                    },
                },
                "503": _NOT_READY,
            },
        }
    },
}


def document(schema: dict[str, Any]) -> dict[str, Any]:
    """Adds the two routes to an OpenAPI document, in place."""
    schema.setdefault("paths", {}).update(OPENAPI_PATHS)
    return schema
