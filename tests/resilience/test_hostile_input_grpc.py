"""Hostile input (tests/resilience/README.md): garbage on every service's gRPC port, every method
found through the service's own reflection, and a message over the size limit.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import grpc
import pytest
from google.protobuf import descriptor_pool
from grpc_reflection.v1alpha.proto_reflection_descriptor_database import ProtoReflectionDescriptorDatabase
from grpc_status import rpc_status

from herald.grpcio.options import MAX_MESSAGE_BYTES
from tests.resilience.conftest import Resilient, assert_still_healthy
from tests.resilience.report import REPORT
from tests.support.api import TenantKey

SERVICES = ("gateway", "router", "ledger", "webhook-sender", "email-sender", "verifier")

GARBAGE = {
    "invalid wire type": b"\xff" * 16,
    "length past the end": b"\x0a\xff\xff\xff\xff\x0f" + b"x" * 8,
    "truncated varint": b"\x08\xff\xff\xff",
}


def grpc_methods(channel: grpc.Channel) -> tuple[list[str], list[str], list[tuple[str, bool]]]:
    """Every method the server exposes, found through its own reflection service: the unary
    ones, the server-streaming ones (one request each), and the client-streaming ones with
    whether they stream back too."""
    database = ProtoReflectionDescriptorDatabase(channel)
    pool = descriptor_pool.DescriptorPool(database)
    methods, server_streaming, client_streaming = [], [], []
    for name in database.get_services():
        for method in pool.FindServiceByName(name).methods:
            if method.client_streaming:
                client_streaming.append((f"/{name}/{method.name}", method.server_streaming))
            elif method.server_streaming:
                server_streaming.append(f"/{name}/{method.name}")
            else:
                methods.append(f"/{name}/{method.name}")
    return methods, server_streaming, client_streaming


def _read_all(stream: Callable[..., Any]) -> Callable[..., list[Any]]:
    return lambda garbage, **kwargs: list(stream(garbage, **kwargs))


def stream_garbage(channel: grpc.Channel, method: str, server: bool, garbage: bytes, key: str) -> None:
    """One garbage message on a client-streaming method (raw bytes in, raw bytes out), every answer read."""
    metadata = [("authorization", f"Bearer {key}")]
    if server:
        list(channel.stream_stream(method)(iter([garbage]), timeout=10, metadata=metadata))
    else:
        channel.stream_unary(method)(iter([garbage]), timeout=10, metadata=metadata)


@pytest.mark.parametrize("name", SERVICES)
def test_garbage_grpc_messages_are_refused_with_a_status(resilient: Resilient, attacker: TenantKey, name: str) -> None:
    """Every method of the service (found by reflection, so new ones are covered) gets bytes that
    are no protobuf message, and one message over the size limit. A method taking one request
    answers promptly with a rich INVALID_ARGUMENT (RESOURCE_EXHAUSTED for the size) and no
    traceback is logged for it; a client-streaming method gets the garbage as a message of the
    stream, with a real tenant key so that it is read, and answers with an error status
    promptly. The process stays up and SERVING."""
    service = resilient.stack.services[name]
    pid = service.process.pid if service.process else None
    log_path = resilient.stack.data_dir / "logs" / f"{name}.log"
    log_offset = log_path.stat().st_size if log_path.exists() else 0
    wrong: list[str] = []
    codes: Counter[str] = Counter()
    with grpc.insecure_channel(service.grpc_addr) as channel:
        methods, server_streaming, client_streaming = grpc_methods(channel)
        assert methods, f"{name} exposes no unary method through reflection"
        for method in methods + server_streaming:
            # Raw bytes in, raw bytes out; a stream is read to its end (or its error).
            call = (
                _read_all(channel.unary_stream(method)) if method in server_streaming else channel.unary_unary(method)
            )
            for label, garbage in GARBAGE.items():
                try:
                    call(garbage, timeout=10, metadata=[("authorization", "Bearer not-a-key")])
                    wrong.append(f"{method} ({label}): answered OK")
                except grpc.RpcError as error:
                    codes[error.code().name] += 1
                    if error.code() != grpc.StatusCode.INVALID_ARGUMENT:
                        wrong.append(f"{method} ({label}): {error.code().name} {error.details()}")
                    elif rpc_status.from_call(error) is None:
                        wrong.append(f"{method} ({label}): INVALID_ARGUMENT without a google.rpc.Status")
        for method, server in client_streaming:
            for label, garbage in GARBAGE.items():
                try:
                    stream_garbage(channel, method, server, garbage, attacker.api_key)
                    wrong.append(f"{method} (stream, {label}): answered OK")
                except grpc.RpcError as error:
                    codes[f"stream {error.code().name}"] += 1
                    if error.code() in (grpc.StatusCode.DEADLINE_EXCEEDED, grpc.StatusCode.UNAVAILABLE):
                        wrong.append(f"{method} (stream, {label}): {error.code().name} {error.details()}")
        try:
            channel.unary_unary(methods[0])(b"\x0a" + b"x" * (MAX_MESSAGE_BYTES + 1024 * 1024), timeout=30)
            wrong.append(f"{methods[0]}: a message over {MAX_MESSAGE_BYTES} bytes answered OK")
        except grpc.RpcError as error:
            codes[f"over the size limit: {error.code().name}"] += 1
            if error.code() != grpc.StatusCode.RESOURCE_EXHAUSTED:
                wrong.append(f"{methods[0]} over the size limit: {error.code().name}")
    assert_still_healthy(resilient, name)
    logged = log_path.read_bytes()[log_offset:].decode(errors="replace") if log_path.exists() else ""
    if "DecodeError" in logged:
        wrong.append(f"{name} logged an error for an undecodable request")
    if service.process is not None and service.process.pid != pid:
        wrong.append(f"{name} was restarted during the test")
    REPORT.add(
        "hostile input: garbage gRPC (status codes answered)",
        f"{name:<15} {len(methods)} unary, {len(server_streaming)} server-streaming and "
        f"{len(client_streaming)} client-streaming methods: "
        + ", ".join(f"{code} x{n}" for code, n in sorted(codes.items())),
    )
    assert not wrong, "\n".join(wrong[:40])
