"""A hop that passes requests on (the router) answers UNAVAILABLE (or DEADLINE_EXCEEDED) with the
message of the service behind it when that service is away, without a logged traceback, so its
caller retries as it would had it called that service itself. Any other failure stays the hop's
own error (UNKNOWN): the router's calls carry many callers' submissions, and one caller's
INVALID_ARGUMENT must not reach the others."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from grpc_health.v1 import health_pb2

from herald.grpcio.errors import abort_invalid, field_violations
from herald.grpcio.server import GrpcServer

CALL = "/herald.test.Hop/Call"


def handler(behaviour: Any) -> grpc.GenericRpcHandler:
    method = grpc.unary_unary_rpc_method_handler(
        behaviour,
        request_deserializer=health_pb2.HealthCheckRequest.FromString,
        response_serializer=health_pb2.HealthCheckResponse.SerializeToString,
    )
    return grpc.method_handlers_generic_handler("herald.test.Hop", {"Call": method})


async def behind(request: health_pb2.HealthCheckRequest, context: Any) -> health_pb2.HealthCheckResponse:
    """The service behind the hop: refuses a field, or is away."""
    if request.service == "invalid":
        await abort_invalid(context, [("webhook.url", "is not a public address")])
    await context.abort(grpc.StatusCode.UNAVAILABLE, "the database is away")
    raise AssertionError("unreachable")


async def serve(server: GrpcServer) -> str:
    port = await server.start("127.0.0.1", 0)
    await server.set_serving(True)
    return f"127.0.0.1:{port}"


@pytest.fixture
async def hop_to(request: pytest.FixtureRequest) -> AsyncIterator[str]:
    """The hop's address: a server whose handler passes the call on to the service behind it,
    relaying its status or not (the test's parameter)."""
    inner = GrpcServer("behind")
    inner.server.add_generic_rpc_handlers((handler(behind),))
    inner_address = await serve(inner)
    channel = grpc.aio.insecure_channel(inner_address)
    call = channel.unary_unary(
        CALL,
        request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
        response_deserializer=health_pb2.HealthCheckResponse.FromString,
    )

    async def passes_on(message: health_pb2.HealthCheckRequest, context: Any) -> health_pb2.HealthCheckResponse:
        response: health_pb2.HealthCheckResponse = await call(message, timeout=10)
        return response

    hop = GrpcServer("hop")
    hop.server.add_generic_rpc_handlers((handler(passes_on),))
    if request.param:
        hop.relay_downstream()
    try:
        yield await serve(hop)
    finally:
        await channel.close()
        await hop.stop(0)
        await inner.stop(0)


async def call_hop(address: str, service: str) -> grpc.aio.AioRpcError:
    async with grpc.aio.insecure_channel(address) as channel:
        call = channel.unary_unary(
            CALL,
            request_serializer=health_pb2.HealthCheckRequest.SerializeToString,
            response_deserializer=health_pb2.HealthCheckResponse.FromString,
        )
        with pytest.raises(grpc.aio.AioRpcError) as failed:
            await call(health_pb2.HealthCheckRequest(service=service), timeout=10)
        return failed.value


@pytest.mark.parametrize("hop_to", [True], indirect=True)
async def test_a_service_away_behind_the_hop_is_unavailable_to_its_caller(
    hop_to: str, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.ERROR)
    away = await call_hop(hop_to, "away")
    assert away.code() == grpc.StatusCode.UNAVAILABLE
    assert away.details() == "the database is away"
    assert not [r for r in caplog.records if "Unexpected" in r.getMessage()], "a relayed status logs no traceback"


@pytest.mark.parametrize("hop_to", [True, False], indirect=True)
async def test_a_refusal_behind_the_hop_is_not_passed_to_its_callers(hop_to: str) -> None:
    failed = await call_hop(hop_to, "invalid")
    assert failed.code() == grpc.StatusCode.UNKNOWN
    assert field_violations(failed) == []


@pytest.mark.parametrize("hop_to", [False], indirect=True)
async def test_without_the_relay_an_outage_behind_is_the_hops_own_error(hop_to: str) -> None:
    failed = await call_hop(hop_to, "away")
    assert failed.code() == grpc.StatusCode.UNKNOWN
