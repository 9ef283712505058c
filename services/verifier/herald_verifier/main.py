"""`herald run verifier`: gRPC status service plus the public HTTP receivers."""

from __future__ import annotations

import logging
import time
from typing import Any

import grpc

from herald.asgi import serve_asgi
from herald.http_health import Health, grpc_dependency, jetstream_dependency
from herald.http_limits import HttpLimits
from herald.links import open_links
from herald.secrets import KeyRing
from herald.service import ServiceRuntime, run_service
from herald.v1 import verifier_pb2, verifier_pb2_grpc
from herald_verifier.catalogue import Catalogue
from herald_verifier.http import PAYMENT_PROVIDERS, TENANT_PROVIDERS, KeyCache, Receivers, create_app
from herald_verifier.schemes import paystack, polar

log = logging.getLogger("herald.verifier")

SUPPORTED_PROVIDERS: list[str] = [*TENANT_PROVIDERS, *PAYMENT_PROVIDERS]


class VerifierServicer(verifier_pb2_grpc.VerifierServiceServicer):
    async def GetVerifierStatus(
        self, request: verifier_pb2.GetVerifierStatusRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> verifier_pb2.GetVerifierStatusResponse:
        return verifier_pb2.GetVerifierStatusResponse(providers=SUPPORTED_PROVIDERS)


async def build(runtime: ServiceRuntime) -> None:
    settings = runtime.settings
    verifier_pb2_grpc.add_VerifierServiceServicer_to_server(VerifierServicer(), runtime.grpc.server)
    runtime.grpc.register([verifier_pb2.DESCRIPTOR.services_by_name["VerifierService"].full_name])
    channel, ledger, nc, js = await open_links(runtime)
    ring: KeyRing | None = None
    if settings.master_keys:
        ring = settings.key_ring()
    else:
        log.warning("no master keys (HERALD_MASTER_KEYS): tenants' inbound webhooks are refused")
    keys = KeyCache(ledger, ring, settings.inbound_key_cache_ttl_s, time.monotonic)
    # A replaced or deleted key applies at once (the TTL only bounds a lost notification).
    await nc.subscribe(settings.subjects().control("inbound"), cb=keys.on_change)
    receivers = Receivers(
        ledger=ledger,
        publisher=js,
        keys=keys,
        subjects=settings.subjects(),
        paystack_key=paystack.load_secret(settings.paystack_secret_key) if settings.paystack_secret_key else None,
        polar_key=polar.load_secret(settings.polar_webhook_secret) if settings.polar_webhook_secret else None,
        max_body_bytes=settings.inbound_max_body_bytes,
        tolerance_s=settings.inbound_tolerance_s,
        paystack_plans=Catalogue.parse(settings.paystack_plans),
        polar_products=Catalogue.parse(settings.polar_products),
    )
    app = create_app(receivers)
    # The body is bounded by the receivers themselves (413 past inbound_max_body_bytes, chunked or not).
    limits = HttpLimits(
        head_timeout_s=settings.http_head_timeout_s,
        body_timeout_s=settings.http_body_timeout_s,
        keep_alive_s=settings.http_keep_alive_s,
    )
    health = Health([grpc_dependency("ledger", channel), jetstream_dependency("bus", lambda: js)], runtime.stopping)
    runtime.add_loop(
        lambda: serve_asgi(
            app,
            settings.http_host,
            settings.http_port,
            runtime.stopping,
            limits,
            metrics_service="verifier",
            health=health,
        )
    )


def run() -> None:
    run_service("verifier", build)
