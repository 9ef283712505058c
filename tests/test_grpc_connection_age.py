"""The gateway's public gRPC server has a maximum connection age: a connection, and a call
still open on it past the grace, does not live forever on what was true when it opened."""

from __future__ import annotations

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc
from herald_gateway.main import grpc_options

from herald.config import Settings
from herald.grpcio.options import max_connection_age
from herald.grpcio.server import GrpcServer


def test_the_gateway_sets_a_maximum_connection_age_by_default() -> None:
    options = dict(grpc_options(Settings()))
    assert options["grpc.max_connection_age_ms"] > 0
    assert "grpc.max_connection_age_grace_ms" in options
    assert grpc_options(Settings(grpc_max_connection_age_s=0)) == []


async def test_a_call_open_past_the_age_and_grace_is_cut() -> None:
    server = GrpcServer("age-test", max_connection_age(0.3, 0.3))
    port = await server.start("127.0.0.1", 0)
    await server.set_serving(True)
    try:
        async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
            # Health.Watch streams until the client leaves: only the connection age can end it early.
            watch = health_pb2_grpc.HealthStub(channel).Watch(health_pb2.HealthCheckRequest(service=""), timeout=20)
            with pytest.raises(grpc.aio.AioRpcError) as ended:
                async for _ in watch:
                    pass
        assert ended.value.code() == grpc.StatusCode.UNAVAILABLE, ended.value
    finally:
        await server.stop(0)
