"""A work message carries its publisher's trace context through JetStream, so the
consumer's span joins the same trace."""

from __future__ import annotations

import secrets

import nats
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider

from herald.bus.publisher import OutgoingMessage, publish_all
from herald.telemetry.propagation import extract_context


async def test_trace_context_survives_the_bus(infra: dict[str, str]) -> None:
    tracer = TracerProvider().get_tracer("test")
    stream = f"TRACE_{secrets.token_hex(4).upper()}"
    subject = f"{stream.lower()}.work"
    nc = await nats.connect(infra["nats_url"])
    try:
        js = nc.jetstream()
        await js.add_stream(name=stream, subjects=[subject])
        with tracer.start_as_current_span("accept") as producer:
            [error] = await publish_all(js, [OutgoingMessage(subject, "job-1", b"{}")])
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
