"""The gateway's own CPU per submit request, in-process: `python bench/gateway_micro.py [N]`.

Drives the ASGI app (with the server span wrapper `serve_asgi` adds) directly, no sockets, with
the router and ledger replaced by in-process answers, so what is measured is the gateway's own
work per request: routing, authentication (cached); and NotificationService's SendWebhook and SendEmail called
as grpc core would call them, rate limit (leased), validation, building the
submission, serialization and the coalescing batcher. Not a test and not `make bench`: a quick
way to compare implementations of the submit path (docs/performance.md, "How to reproduce")."""

from __future__ import annotations

import asyncio
import sys
import time
from types import SimpleNamespace
from typing import Any

import orjson
from herald_gateway.auth import ApiKeyAuthenticator, OperatorAuthenticator
from herald_gateway.grpc.notification import NotificationServicer
from herald_gateway.http.app import create_app
from herald_gateway.idempotency import Idempotency
from herald_gateway.operations import Operations
from herald_gateway.rate_limit import RateLimiter
from herald_gateway.target_check import TargetCheck

from herald.config import Settings
from herald.telemetry.http_spans import ServerSpans
from herald.telemetry.tracing import configure_tracing
from herald.v1 import common_pb2, gateway_pb2, ledger_jobs_pb2, ledger_tenants_pb2, router_pb2

KEY = "hk_live_bench_" + "x" * 32


class Router:
    async def SubmitJobs(self, request: router_pb2.SubmitJobsRequest, **_: Any) -> router_pb2.SubmitJobsResponse:
        outcomes = [
            ledger_jobs_pb2.DraftOutcome(job=common_pb2.Job(id="0190f0f0-0000-7000-8000-000000000000", status=1))
            for _ in request.submissions
        ]
        return router_pb2.SubmitJobsResponse(outcomes=outcomes)


class Tenants:
    async def AuthenticateApiKey(self, request: Any, **_: Any) -> ledger_tenants_pb2.AuthenticateApiKeyResponse:
        tenant = common_pb2.Tenant(id="0190f0f0-0000-7000-8000-000000000001", plan=common_pb2.PLAN_STARTUP)
        tenant.rate_per_min = -1
        return ledger_tenants_pb2.AuthenticateApiKeyResponse(found=True, key_id="k", tenant=tenant)


BODIES = {
    "/v1/webhooks": orjson.dumps({"url": "http://127.0.0.1:9/hook", "payload": {"n": 1, "text": "hello"}}),
    "/v1/emails": orjson.dumps({"from": "a@example.com", "to": ["b@example.com"], "subject": "hi", "text": "hello"}),
    "/v1/webhooks/batch": orjson.dumps(
        {"items": [{"url": "http://127.0.0.1:9/hook", "payload": {"n": i}} for i in range(100)]}
    ),
}


async def measure(app: Any, path: str, body: bytes, n: int) -> None:
    headers = [
        (b"authorization", f"Bearer {KEY}".encode()),
        (b"content-type", b"application/json"),
        (b"content-length", str(len(body)).encode()),
        (b"host", b"gw"),
    ]

    async def one() -> int:
        status = 0
        sent = False

        async def receive() -> dict[str, Any]:
            nonlocal sent
            if sent:
                await asyncio.sleep(3600)
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        async def send(message: dict[str, Any]) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]

        scope = {
            "type": "http",
            "asgi": {"version": "3.0"},
            "http_version": "1.1",
            "method": "POST",
            "scheme": "http",
            "path": path,
            "raw_path": path.encode(),
            "query_string": b"",
            "root_path": "",
            "headers": headers,
            "client": ("127.0.0.1", 1),
            "server": ("gw", 80),
        }
        await app(scope, receive, send)
        return status

    # A batch carries 100 items: a fiftieth as many requests, 8 at a time.
    concurrency, count = (8, max(n // 50, 8)) if "batch" in path else (64, max(n, 64))
    statuses = await asyncio.gather(*(one() for _ in range(concurrency)))  # warm-up
    started = time.process_time()
    for _ in range(count // concurrency):
        statuses = await asyncio.gather(*(one() for _ in range(concurrency)))
    spent = time.process_time() - started
    done = count // concurrency * concurrency
    print(f"{path:22} {statuses[0]}  {spent / done * 1e3:.3f} ms CPU per request ({done} requests)")


class Context:
    """What NotificationServicer reads of a call: the metadata (grpc core's own work is not measured)."""

    def invocation_metadata(self) -> tuple[tuple[str, str], ...]:
        return (("authorization", f"Bearer {KEY}"),)

    def set_trailing_metadata(self, metadata: Any) -> None:
        pass


async def measure_grpc(servicer: NotificationServicer, n: int) -> None:
    webhook = gateway_pb2.SendWebhookRequest(url="http://127.0.0.1:9/hook", body=b'{"n":1,"text":"hello"}')
    email = gateway_pb2.SendEmailRequest()
    email.email.to.add(email="b@example.com")
    email.email.subject, email.email.text = "hi", "hello"
    getattr(email.email, "from").email = "a@example.com"
    context: Any = Context()
    for name, call in (
        ("grpc SendWebhook", lambda: servicer.SendWebhook(webhook, context)),
        ("grpc SendEmail", lambda: servicer.SendEmail(email, context)),
    ):
        await asyncio.gather(*(call() for _ in range(64)))  # warm-up
        started = time.process_time()
        for _ in range(n // 64):
            await asyncio.gather(*(call() for _ in range(64)))
        spent = time.process_time() - started
        print(f"{name:22} OK   {spent / (n // 64 * 64) * 1e3:.3f} ms CPU per request ({n // 64 * 64} requests)")


async def main(n: int) -> None:
    configure_tracing("gateway")  # as the service does: spans made, not exported
    ledger: Any = SimpleNamespace(tenants=Tenants())
    operations = Operations(ledger, Router(), None)  # type: ignore[arg-type]
    operations.target_check = TargetCheck.from_settings(Settings(webhook_allow_loopback=True))
    tenants = ApiKeyAuthenticator(ledger, 300)
    app = ServerSpans(
        create_app(operations, tenants, OperatorAuthenticator("op"), RateLimiter(False), Idempotency(ledger))
    )
    for path, body in BODIES.items():
        await measure(app, path, body, n)
    await measure_grpc(NotificationServicer(operations, tenants, RateLimiter(False)), n)


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 4000))
