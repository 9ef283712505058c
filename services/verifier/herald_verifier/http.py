"""The verifier's public HTTP surface: one receiver per provider.

    POST /inbound/sendgrid/{tenant}   ECDSA P-256 with the tenant's SendGrid verification key
    POST /inbound/resend/{tenant}     Svix, the tenant's Resend signing secret
    POST /inbound/postmark/{tenant}   HTTP Basic, the credentials Herald issued the tenant
    POST /inbound/paystack            HMAC-SHA512, the platform's Paystack secret key (settings)
    POST /inbound/polar               Standard Webhooks, the platform's Polar webhook secret (settings)

Each request is read raw (at most `HERALD_INBOUND_MAX_BODY_BYTES`, else 413) and verified before anything
parses it. A refusal is 401 with a problem+json body saying why in words (the sender's developer reads
it in their provider's delivery log; an unknown tenant reads as a signature that does not match, so the
answer tells nobody which tenants exist), logged and counted by (provider, reason). A verified request
is normalised, published to the inbound stream (`Nats-Msg-Id` = provider:event id) and recorded by the ledger
in one transaction (which de-duplicates on (provider, tenant, event id)); only then does the provider get 200.
If the bus or the ledger fails the answer is 503 and the provider retries; a replay is recorded as nothing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from functools import partial
from typing import Any, Protocol

import grpc
import orjson
from prometheus_client import Counter
from starlette.applications import Starlette
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from herald.expiring import MISSING, ExpiringCache
from herald.grpcio.ledger import Ledger
from herald.http_limits import PROBLEM_BASE, body_too_large_detail
from herald.ids import parse_id
from herald.inbound_keys import inbound_aad, load_material
from herald.secrets import KeyRing, SecretUnavailable
from herald.v1 import ledger_inbound_pb2
from herald_verifier import normalise
from herald_verifier.catalogue import Catalogue
from herald_verifier.schemes import MalformedPayload, Outcome, Reason, Rejected, paystack, polar
from herald_verifier.schemes import postmark as postmark_scheme
from herald_verifier.schemes import resend as resend_scheme
from herald_verifier.schemes import sendgrid as sendgrid_scheme

log = logging.getLogger("herald.verifier")

VERIFICATIONS = Counter(
    "herald_inbound_verifications_total",
    "Inbound provider webhooks by verdict: ok, or the reason they were refused.",
    ["provider", "result"],
)
EVENTS = Counter(
    "herald_inbound_events_total", "Verified provider events handed to the ledger.", ["provider", "outcome"]
)

TENANT_PROVIDERS = ("sendgrid", "resend", "postmark")
PAYMENT_PROVIDERS = ("paystack", "polar")
for _provider in (*TENANT_PROVIDERS, *PAYMENT_PROVIDERS):
    VERIFICATIONS.labels(_provider, "ok")


class Publisher(Protocol):
    async def publish(self, subject: str, payload: bytes, *, headers: dict[str, str]) -> Any: ...


class KeyCache:
    """Tenants' verification keys, opened from the sealed material the ledger holds, kept for a few seconds
    (a miss too, so a flood of requests for an unconfigured tenant does not reach the database each time)."""

    def __init__(
        self,
        ledger: Ledger,
        ring: KeyRing | None,
        ttl_s: float,
        clock: Callable[[], float],
    ) -> None:
        self.ledger = ledger
        self.ring = ring
        self.entries: ExpiringCache[tuple[str, str], Any] = ExpiringCache(ttl_s, clock=clock)

    def evict(self, tenant_id: str) -> None:
        for provider in TENANT_PROVIDERS:
            self.entries.forget((provider, tenant_id))

    async def on_change(self, message: Any) -> None:
        """The ledger's `inbound` change notification: this tenant's material was replaced or deleted."""
        try:
            tenant_id = orjson.loads(message.data).get("tenant_id")
        except (orjson.JSONDecodeError, AttributeError):
            return
        if isinstance(tenant_id, str):
            self.evict(tenant_id)

    async def get(self, provider: str, tenant_id: str) -> Any:
        cached = self.entries.get((provider, tenant_id))
        if cached is not MISSING:
            return cached
        found = await self.ledger.inbound.GetInboundKey(
            ledger_inbound_pb2.GetInboundKeyRequest(tenant_id=tenant_id, provider=provider), timeout=5
        )
        key = None
        if found.found and self.ring is not None:
            try:
                key = load_material(provider, self.ring.open(found.sealed, inbound_aad(provider, tenant_id)))
            except (SecretUnavailable, ValueError, KeyError, TypeError) as error:
                log.error(
                    "inbound verification material cannot be opened",
                    extra={"provider": provider, "tenant_id": tenant_id, "why": type(error).__name__},
                )
        self.entries.put((provider, tenant_id), key)
        return key


@dataclass
class Receivers:
    ledger: Ledger
    publisher: Publisher
    keys: KeyCache
    subjects: Any
    paystack_key: Any
    polar_key: Any
    max_body_bytes: int
    tolerance_s: float
    clock: Callable[[], float] = time.time
    # The operator's mapping of provider plan / product ids to Herald plans (see catalogue).
    paystack_plans: Catalogue = field(default_factory=Catalogue)
    polar_products: Catalogue = field(default_factory=Catalogue)

    async def tenant_receiver(self, request: Request) -> Response:
        provider = request.url.path.split("/")[2]
        tenant = request.path_params["tenant"]
        body = await self._body(request)
        if body is None:
            return self._too_large()
        tenant_id = parse_id(tenant)
        key = await self.keys.get(provider, str(tenant_id)) if tenant_id is not None else None
        if key is None:
            return self._refuse(provider, Reason.UNKNOWN_TENANT, tenant)
        headers = request.headers
        outcome: Outcome
        if provider == "sendgrid":
            outcome = sendgrid_scheme.verify(headers, body, key, now=self.clock, tolerance_s=self.tolerance_s)
        elif provider == "resend":
            outcome = resend_scheme.verify(headers, body, key, now=self.clock, tolerance_s=self.tolerance_s)
        else:
            outcome = postmark_scheme.verify(headers, body, key)
        if isinstance(outcome, Rejected):
            return self._refuse(provider, outcome.reason, tenant)
        try:
            if provider == "sendgrid":
                events = normalise.sendgrid(str(tenant_id), body, sendgrid_scheme.event_ids(headers, body))
            elif provider == "resend":
                events = normalise.resend(str(tenant_id), body, resend_scheme.event_ids(headers, body))
            else:
                events = normalise.postmark(str(tenant_id), body, postmark_scheme.event_ids(headers, body))
        except MalformedPayload:
            return self._malformed(provider)
        VERIFICATIONS.labels(provider, "ok").inc()
        return await self._accept(provider, events)

    async def paystack_receiver(self, request: Request) -> Response:
        events = partial(normalise.paystack, catalogue=self.paystack_plans)
        return await self._platform_receiver(
            request, "paystack", self.paystack_key, paystack.verify, paystack.event_ids, events
        )

    async def polar_receiver(self, request: Request) -> Response:
        verify = partial(polar.verify, now=self.clock, tolerance_s=self.tolerance_s)
        events = partial(normalise.polar, catalogue=self.polar_products)
        return await self._platform_receiver(request, "polar", self.polar_key, verify, polar.event_ids, events)

    async def _platform_receiver(
        self,
        request: Request,
        provider: str,
        key: Any,
        verify: Callable[[Mapping[str, str], bytes, Any], Outcome],
        event_ids: Callable[[Mapping[str, str], bytes], list[str]],
        events: Callable[[bytes, list[str]], list[normalise.Normalised]],
    ) -> Response:
        """A payment provider's events for Herald's own billing: checked with the operator's key
        (none configured: refused), their de-duplication ids from the provider's scheme."""
        body = await self._body(request)
        if body is None:
            return self._too_large()
        if key is None:
            return self._refuse(provider, Reason.UNKNOWN_TENANT, "platform")
        outcome = verify(request.headers, body, key)
        if isinstance(outcome, Rejected):
            return self._refuse(provider, outcome.reason, "platform")
        try:
            found = events(body, event_ids(request.headers, body))
        except MalformedPayload:
            return self._malformed(provider)
        VERIFICATIONS.labels(provider, "ok").inc()
        return await self._accept(provider, found)

    async def _body(self, request: Request) -> bytes | None:
        """The raw body, or None when it is larger than allowed (declared or actual)."""
        declared = request.headers.get("content-length")
        if declared is not None and (
            not (declared.isascii() and declared.isdigit()) or int(declared) > self.max_body_bytes
        ):
            return None
        chunks: list[bytes] = []
        size = 0
        try:
            async for chunk in request.stream():
                size += len(chunk)
                if size > self.max_body_bytes:
                    return None
                chunks.append(chunk)
        except ClientDisconnect:
            return b""
        return b"".join(chunks)

    def _refuse(self, provider: str, reason: Reason, tenant: str) -> Response:
        VERIFICATIONS.labels(provider, reason.value).inc()
        log.warning("inbound webhook refused", extra={"provider": provider, "reason": reason.value, "tenant": tenant})
        detail = REFUSALS[Reason.BAD_SIGNATURE if reason is Reason.UNKNOWN_TENANT else reason].format(provider=provider)
        return _problem(401, "unverified", "Not verified", detail)

    def _too_large(self) -> Response:
        return _problem(413, "payload-too-large", "Payload too large", body_too_large_detail(self.max_body_bytes))

    def _malformed(self, provider: str) -> Response:
        """Authentic, but not a body we can read events from: counted as malformed, answered 400."""
        VERIFICATIONS.labels(provider, Reason.MALFORMED.value).inc()
        log.warning("verified inbound webhook has an unreadable body", extra={"provider": provider})
        return _problem(400, "malformed", "Malformed", "verified, but the body is not events this provider sends")

    async def _accept(self, provider: str, events: list[normalise.Normalised]) -> Response:
        events = [e for e in events if parse_id(e.tenant_id) is not None]
        if not events:
            log.info("verified inbound webhook names no tenant; acknowledged", extra={"provider": provider})
            return JSONResponse({"received": 0})
        try:
            for event in events:
                await self.publisher.publish(
                    self.subjects.inbound(provider, event.tenant_id),
                    _feed_message(event),
                    headers={"Nats-Msg-Id": f"{provider}:{event.event_id}"},
                )
        except Exception:
            log.exception("inbound event not published", extra={"provider": provider})
            EVENTS.labels(provider, "unavailable").inc(len(events))
            return Response(status_code=503)
        try:
            result = await self.ledger.inbound.RecordInboundEvents(
                ledger_inbound_pb2.RecordInboundEventsRequest(events=[_to_proto(e) for e in events]), timeout=10
            )
        except grpc.aio.AioRpcError as error:
            log.error("inbound events not recorded", extra={"provider": provider, "code": error.code().name})
            EVENTS.labels(provider, "unavailable").inc(len(events))
            return Response(status_code=503)
        EVENTS.labels(provider, "recorded").inc(result.recorded)
        EVENTS.labels(provider, "duplicate").inc(result.duplicates)
        return JSONResponse({"received": len(events)})


def _problem(status: int, kind: str, title: str, detail: str) -> Response:
    body = {"type": PROBLEM_BASE + kind, "title": title, "status": status, "detail": detail}
    return Response(orjson.dumps(body), status_code=status, media_type="application/problem+json")


REFUSALS = {
    Reason.BAD_SIGNATURE: "the signature (or Basic credentials) does not match this tenant's {provider} key: check the "
    "secret configured on both sides",
    Reason.STALE_TIMESTAMP: "the signed timestamp is too old or in the future: a replay, or a skewed clock",
    Reason.MISSING_HEADER: "a signature header {provider} sends is missing",
    Reason.MALFORMED: "a signature header is present but malformed (empty, bad encoding, not a number)",
}


def _to_proto(event: normalise.Normalised) -> ledger_inbound_pb2.InboundEvent:
    """Every field of `Normalised` goes to the InboundEvent field of its name (times as Timestamps,
    left unset when None)."""
    message = ledger_inbound_pb2.InboundEvent()
    for item in fields(event):
        value = getattr(event, item.name)
        if isinstance(value, datetime):
            getattr(message, item.name).FromDatetime(value)
        elif value is not None:
            setattr(message, item.name, value)
    return message


def _feed_message(event: normalise.Normalised) -> bytes:
    return orjson.dumps(
        {
            "provider": event.provider,
            "tenant_id": event.tenant_id,
            "event_id": event.event_id,
            "type": event.type,
            "provider_message_id": event.provider_message_id,
            "recipient": event.recipient,
            "occurred_at": event.occurred_at.isoformat() if event.occurred_at else None,
            "plan": event.plan,
        }
    )


def create_app(receivers: Receivers | None = None) -> Starlette:
    # /healthz and /readyz are answered in front of this app (herald.http_health, see main).
    routes: list[Route] = []
    if receivers is not None:
        routes += [
            Route(f"/inbound/{provider}/{{tenant}}", receivers.tenant_receiver, methods=["POST"])
            for provider in TENANT_PROVIDERS
        ]
        routes += [
            Route("/inbound/paystack", receivers.paystack_receiver, methods=["POST"]),
            Route("/inbound/polar", receivers.polar_receiver, methods=["POST"]),
        ]
    return Starlette(routes=routes)
