"""Records the gRPC surface's configuration changes in the audit log (herald_gateway.audit),
called by the servicers' wrapper (`grpc.errors.answers_errors`) after an RPC succeeded: the
RPC, the resource's id (the request's, or the answer's for a create), the request's fields
(secrets redacted), the caller the RPC authenticated (`CURRENT_ACTOR`) and its peer address."""

from __future__ import annotations

from typing import Any

from google.protobuf.json_format import MessageToDict
from google.protobuf.message import Message

from herald.grpcio.context import Context
from herald_gateway.audit import CURRENT_ACTOR, Auditor, audited_rpc

ID_FIELDS = ("id", "target_id", "filter_id", "subscription_id", "key_id", "name")


def _resource_id(request: Message, response: Any) -> str:
    fields = MessageToDict(request, preserving_proto_field_name=True)
    for name in ID_FIELDS:
        if fields.get(name):
            return str(fields[name])
    if isinstance(response, Message):
        answer = MessageToDict(response, preserving_proto_field_name=True)
        for value in (answer, *answer.values()):
            if isinstance(value, dict) and value.get("id"):
                return str(value["id"])
    return str(fields.get("tenant_id", ""))


async def record_rpc(servicer: Any, service: str, rpc: str, request: Message, response: Any, context: Context) -> None:
    actor = CURRENT_ACTOR.get()
    if actor is None or not audited_rpc(service, rpc):
        return
    auditor: Auditor = servicer.operations.auditor
    tenant_id = actor.tenant_id or str(getattr(request, "tenant_id", "") or "")
    if not tenant_id and _has(response, "tenant"):
        tenant_id = response.tenant.id
    changes = MessageToDict(request, preserving_proto_field_name=True)
    await auditor.record(
        actor, f"grpc {service}/{rpc}", tenant_id, _resource_id(request, response), changes, context.peer() or ""
    )


def _has(message: Any, field: str) -> bool:
    return isinstance(message, Message) and field in message.DESCRIPTOR.fields_by_name
