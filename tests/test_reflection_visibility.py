"""The gateway's public gRPC port lists its services by reflection, but the operator surface
(AdminService, its methods and messages) only to a caller presenting the operator token:
a tenant's tooling sees the NotificationService, and no map of the admin API."""

from __future__ import annotations

from collections.abc import Iterator

import grpc
from google.protobuf import descriptor_pb2
from grpc_reflection.v1alpha import reflection_pb2, reflection_pb2_grpc

from herald.cli.stack import Stack
from tests.support.api import TenantKey

ADMIN = "herald.v1.AdminService"
NOTIFICATIONS = "herald.v1.NotificationService"


def ask(stack: Stack, authorization: str | None, *requests: reflection_pb2.ServerReflectionRequest) -> list[object]:
    metadata = [("authorization", authorization)] if authorization else []
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        stub = reflection_pb2_grpc.ServerReflectionStub(channel)
        return list(stub.ServerReflectionInfo(iter(requests), metadata=metadata, timeout=10))


def services(answer: reflection_pb2.ServerReflectionResponse) -> set[str]:
    return {s.name for s in answer.list_services_response.service}


def files(answer: reflection_pb2.ServerReflectionResponse) -> Iterator[descriptor_pb2.FileDescriptorProto]:
    for raw in answer.file_descriptor_response.file_descriptor_proto:
        yield descriptor_pb2.FileDescriptorProto.FromString(raw)


def test_reflection_shows_the_admin_service_to_operators_only(
    stack: Stack, operator_token: str, tenant: TenantKey
) -> None:
    listing = reflection_pb2.ServerReflectionRequest(list_services="")
    admin_symbol = reflection_pb2.ServerReflectionRequest(file_containing_symbol=ADMIN)
    method_symbol = reflection_pb2.ServerReflectionRequest(file_containing_symbol=f"{ADMIN}.CreateTenant")
    public_symbol = reflection_pb2.ServerReflectionRequest(file_containing_symbol=NOTIFICATIONS)

    for who in (None, f"Bearer {tenant.api_key}", "Bearer not-the-operator-token"):
        listed, admin, method, public = ask(stack, who, listing, admin_symbol, method_symbol, public_symbol)
        assert NOTIFICATIONS in services(listed) and ADMIN not in services(listed), who
        for refused in (admin, method):
            assert refused.error_response.error_code == grpc.StatusCode.NOT_FOUND.value[0], who
        # The file that defines the public service no longer carries the admin one, nor its messages.
        [gateway_proto] = [f for f in files(public) if any(s.name == "NotificationService" for s in f.service)]
        assert [s.name for s in gateway_proto.service] == ["NotificationService"]
        assert not [m.name for m in gateway_proto.message_type if m.name.startswith("AdminService")]
        # What is left still resolves: every message a public method names is in the file or its imports.
        kept = {f".{gateway_proto.package}.{m.name}" for m in gateway_proto.message_type}
        for rpc in gateway_proto.service[0].method:
            for name in (rpc.input_type, rpc.output_type):
                assert name in kept or not name.startswith(f".{gateway_proto.package}.Admin"), name

    listed, admin, public = ask(stack, f"Bearer {operator_token}", listing, admin_symbol, public_symbol)
    assert {NOTIFICATIONS, ADMIN} <= services(listed)
    assert any(s.name == "AdminService" for f in files(admin) for s in f.service)
