"""The internal gRPC mesh with mutual TLS (herald.grpcio.mesh): a server on the mesh answers only
callers presenting a certificate its CA signed, a caller checks it reached the service it meant,
and the plaintext health listener beside it serves health and nothing else. Certificates are the
ones `herald up` makes (herald.cli.mesh_certs); tests/test_herald_up.py shows a stack's router
refusing a call without one."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import grpc
import pytest
from grpc_health.v1 import health_pb2, health_pb2_grpc

from herald.cli.embedded import free_port
from herald.cli.mesh_certs import MeshCertificates
from herald.config import Settings
from herald.grpcio.client import open_channel
from herald.grpcio.mesh import MeshTls
from herald.grpcio.server import GrpcServer

SERVICES = ("ledger", "router", "gateway")


def mesh_of(certificates: MeshCertificates, service: str) -> MeshTls:
    tls = MeshTls.from_settings(
        Settings(**{k.removeprefix("HERALD_").lower(): v for k, v in certificates.service_env(service).items()})
    )
    assert tls is not None
    return tls


@pytest.fixture
async def ledger_on_the_mesh(tmp_path: Path) -> AsyncIterator[tuple[str, str, MeshCertificates]]:
    """A server with the ledger's certificate on the mesh port and a plaintext health port."""
    certificates = MeshCertificates.made(tmp_path / "mesh", SERVICES)
    server = GrpcServer("ledger")
    health_port = free_port()
    port = await server.start("127.0.0.1", 0, mesh_of(certificates, "ledger"), health_port)
    await server.set_serving(True)
    try:
        yield f"127.0.0.1:{port}", f"127.0.0.1:{health_port}", certificates
    finally:
        await server.stop(0)


async def check(channel: grpc.aio.Channel) -> health_pb2.HealthCheckResponse.ServingStatus.ValueType:
    answer = await health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(service=""), timeout=5)
    return answer.status


async def test_a_caller_with_a_mesh_certificate_is_answered(
    ledger_on_the_mesh: tuple[str, str, MeshCertificates],
) -> None:
    address, _, certificates = ledger_on_the_mesh
    # As the router calls the ledger: its own certificate, the ledger's name checked.
    async with open_channel(address, mesh_of(certificates, "router"), "ledger") as channel:
        assert await check(channel) == health_pb2.HealthCheckResponse.SERVING
    # Also over an `ipv4:` list, as callers of a replicated service dial it.
    async with open_channel(f"ipv4:{address}", mesh_of(certificates, "gateway"), "ledger") as channel:
        assert await check(channel) == health_pb2.HealthCheckResponse.SERVING


async def test_a_call_without_a_valid_client_certificate_is_refused(
    ledger_on_the_mesh: tuple[str, str, MeshCertificates], tmp_path: Path
) -> None:
    address, _, certificates = ledger_on_the_mesh
    ca = certificates.ca_file.read_bytes()
    stranger = MeshCertificates.made(tmp_path / "another-ca", ("router",))
    callers = {
        "plaintext": grpc.aio.insecure_channel(address),
        "TLS, no client certificate": grpc.aio.secure_channel(
            address, grpc.ssl_channel_credentials(ca), options=[("grpc.ssl_target_name_override", "herald-ledger")]
        ),
        "a certificate of another CA": grpc.aio.secure_channel(
            address,
            grpc.ssl_channel_credentials(
                ca,
                private_key=stranger.key_file("router").read_bytes(),
                certificate_chain=stranger.cert_file("router").read_bytes(),
            ),
            options=[("grpc.ssl_target_name_override", "herald-ledger")],
        ),
    }
    refused = {}
    for who, channel in callers.items():
        async with channel:
            with pytest.raises(grpc.aio.AioRpcError) as raised:
                await check(channel)
            refused[who] = raised.value.code()
    assert refused == dict.fromkeys(callers, grpc.StatusCode.UNAVAILABLE)


async def test_a_caller_checks_it_reached_the_service_it_meant(
    ledger_on_the_mesh: tuple[str, str, MeshCertificates],
) -> None:
    """The ledger's certificate does not pass for the router's: a mesh member cannot stand in for another."""
    address, _, certificates = ledger_on_the_mesh
    async with open_channel(address, mesh_of(certificates, "gateway"), "router") as channel:
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await check(channel)
    assert raised.value.code() == grpc.StatusCode.UNAVAILABLE


async def test_the_plaintext_health_port_serves_health_only(
    ledger_on_the_mesh: tuple[str, str, MeshCertificates],
) -> None:
    _, health_address, _ = ledger_on_the_mesh
    async with grpc.aio.insecure_channel(health_address) as channel:
        assert await check(channel) == health_pb2.HealthCheckResponse.SERVING
        # Nothing else answers there: not reflection, not a service's methods.
        other = channel.unary_unary("/herald.v1.LedgerJobsService/CreateJobs")
        with pytest.raises(grpc.aio.AioRpcError) as raised:
            await other(b"", timeout=5)
    assert raised.value.code() == grpc.StatusCode.UNIMPLEMENTED


def test_the_keys_are_their_owners_alone(tmp_path: Path) -> None:
    certificates = MeshCertificates.made(tmp_path / "mesh", SERVICES)
    for service in ("ca", *SERVICES):
        assert certificates.key_file(service).stat().st_mode & 0o777 == 0o600
    # Made once: a restarted stack keeps them (its services still trust each other).
    before = certificates.ca_file.read_bytes()
    assert MeshCertificates.made(tmp_path / "mesh", SERVICES).ca_file.read_bytes() == before
