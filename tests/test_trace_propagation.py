"""Traces: a work message carries its publisher's trace context through JetStream, so the consumer's span
joins the same trace; and end to end, one trace runs from the gateway's HTTP request (its root) through the
gRPC hops and the bus to the delivery and the ledger update."""

from __future__ import annotations

import secrets
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import httpx
import nats
import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from herald.bus.publisher import AckPipeline, OutgoingMessage
from herald.cli.stack import Stack
from herald.config import nats_servers
from herald.telemetry.propagation import extract_context
from tests.standins.otlp import Collector, ReceivedSpan
from tests.support.api import create_tenant, wait_for_status
from tests.support.receiver import Receiver


async def test_trace_context_survives_the_bus(infra: dict[str, str]) -> None:
    tracer = TracerProvider().get_tracer("test")
    stream = f"TRACE_{secrets.token_hex(4).upper()}"
    subject = f"{stream.lower()}.work"
    nc = await nats.connect(nats_servers(infra["nats_url"]))
    try:
        js = nc.jetstream()
        await js.add_stream(name=stream, subjects=[subject])
        with tracer.start_as_current_span("accept") as producer:
            [error] = await AckPipeline(nc).publish([OutgoingMessage(subject, "job-1", b"{}")])
            assert error is None
        subscription = await js.pull_subscribe(subject, durable="reader", stream=stream)
        [message] = await subscription.fetch(1, timeout=5)
        assert message.headers is not None and "traceparent" in message.headers
        with tracer.start_as_current_span("deliver", context=extract_context(message.headers)) as consumer:
            assert consumer.get_span_context().trace_id == producer.get_span_context().trace_id
        assert trace.get_current_span().get_span_context().is_valid is False
        await js.delete_stream(stream)
    finally:
        await nc.close()


@pytest.fixture
def traced_stack(patient_stack: Stack) -> Stack:
    """The run's patient stack, whose services export their spans (OTLP, from the standard variables)
    to `collector` (tests/conftest.py); other files' traffic goes there too, so each test reads only
    the spans that arrive after it began (`since`)."""
    return patient_stack


def since(collector: Collector) -> Callable[[], list[ReceivedSpan]]:
    """The spans the collector receives from now on."""
    start = len(collector.spans)
    return lambda: collector.spans[start:]


def test_one_trace_runs_from_the_http_request_to_the_delivery_and_the_ledger_update(
    traced_stack: Stack, collector: Collector, receiver: Receiver
) -> None:
    fresh = since(collector)
    gateway = traced_stack.endpoints["gateway_http"]
    token = Path(traced_stack.endpoints["operator_token_file"]).read_text().strip()
    tenant = create_tenant(gateway, token, "traced")
    # A caller's own trace context is not continued from the internet (only linked).
    foreign = "00-" + "ab" * 16 + "-" + "cd" * 8 + "-01"
    sent = httpx.post(
        f"{gateway}/v1/webhooks",
        json={"url": receiver.url, "payload": {"traced": True}},
        headers={**tenant.headers, "traceparent": foreign},
        timeout=10,
    )
    assert sent.status_code == 202, sent.text
    assert wait_for_status(gateway, tenant, sent.json()["id"])["status"] == "delivered"

    def request_span() -> ReceivedSpan | None:
        return next((s for s in fresh() if s.service == "herald-gateway" and s.name == "POST /v1/webhooks"), None)

    def whole_trace() -> list[ReceivedSpan]:
        root = request_span()
        if root is None:
            return []
        spans = collector.trace(root.trace_id)
        names = {(s.service, s.name) for s in spans}
        wanted = {("herald-webhook-sender", "webhook.deliver"), ("herald-ledger", RECORD_ATTEMPTS)}
        # Each service exports its spans in its own batches: wait for the router's too.
        exported = {"herald-gateway", "herald-router", "herald-ledger"} <= {s.service for s in spans}
        return spans if wanted <= names and exported else []

    deadline = time.monotonic() + 15
    while not (spans := whole_trace()):
        assert time.monotonic() < deadline, f"no complete trace: {[(s.service, s.name) for s in fresh()]}"
        time.sleep(0.1)

    root = request_span()
    assert root is not None and root.is_server
    assert root.parent_span_id == ""
    assert root.trace_id != "ab" * 16  # the HTTP span is the trace's root, whatever the caller sent
    assert [s.name for s in fresh() if s.service == "herald-gateway" and s.name.startswith("fastapi.")] == []
    assert root.attributes == {
        "http.request.method": "POST",
        "http.route": "/v1/webhooks",
        "http.response.status_code": 202,
    }
    # Every other span descends from it: gateway -> router -> ledger, across the bus to the sender, whose
    # delivery records its attempt in the ledger.
    by_id = {s.span_id: s for s in spans}

    def ancestors(span: ReceivedSpan) -> list[str]:
        chain = []
        while span.parent_span_id:
            assert span.parent_span_id in by_id, f"{span.service} {span.name}: parent not in the trace"
            span = by_id[span.parent_span_id]
            chain.append(span.service)
        assert span is root
        return chain

    services = {s.service for s in spans}
    assert {"herald-gateway", "herald-router", "herald-ledger", "herald-webhook-sender"} <= services
    for span in spans:
        if span is not root:
            ancestors(span)
    [delivery] = [s for s in spans if s.name == "webhook.deliver"]
    assert "herald-router" in ancestors(delivery)
    recorded = [s for s in spans if s.service == "herald-ledger" and s.name == RECORD_ATTEMPTS]
    assert any("herald-webhook-sender" in ancestors(s) for s in recorded)
    # No span carries the API key or any header.
    for span in spans:
        for key, value in span.attributes.items():
            assert tenant.api_key not in str(value) and "authorization" not in key.lower()


def test_the_verifiers_receivers_start_a_trace_named_by_route(traced_stack: Stack, collector: Collector) -> None:
    fresh = since(collector)
    verifier = traced_stack.endpoints["verifier_http"]
    refused = httpx.post(f"{verifier}/inbound/resend/{uuid.uuid4()}", content=b"{}", timeout=10)
    assert refused.status_code == 401

    def receiver_span() -> ReceivedSpan | None:
        return next((s for s in fresh() if s.service == "herald-verifier" and s.name.startswith("POST")), None)

    deadline = time.monotonic() + 15
    while (span := receiver_span()) is None:
        assert time.monotonic() < deadline, "no span from the verifier"
        time.sleep(0.1)
    assert span.is_server and span.parent_span_id == ""
    assert span.name == "POST /inbound/resend/{tenant}"  # the template: no tenant id in the name
    assert span.attributes["http.response.status_code"] == 401

    # Whatever a client sends as the method, spans and metrics see a known method or "_OTHER".
    odd = httpx.request("PROPFIND", f"{verifier}/inbound/resend/{uuid.uuid4()}", content=b"{}", timeout=10)
    assert odd.status_code >= 400
    port = traced_stack.services["verifier"].env["HERALD_METRICS_PORT"]
    metrics = httpx.get(f"http://127.0.0.1:{port}/metrics", timeout=10).text
    assert 'method="_OTHER"' in metrics and 'method="PROPFIND"' not in metrics


RECORD_ATTEMPTS = "/herald.v1.LedgerJobsService/AdvanceDeliveries"
