"""Isolation (tests/resilience/README.md): tenant B's key on tenant A's resources answers 404 and
changes nothing, for every tenant-scoped operation, over REST and gRPC.

Nothing here lists routes. REST operations come from the gateway's /openapi.json and gRPC
methods from the NotificationService descriptor, so a route added later is called the day
it appears. A path parameter or a field naming a kind of resource this test cannot create
fails the test, saying where to teach it (`RESOURCE_OF_PARAM`, `RESOURCE_OF_FIELD`,
`KIND_OF_WORD` in isolation.py, and the `world` fixture here).

Every call is made twice with B's key: naming A's resources, and naming resources that do
not exist (the control). Then:
- where the control answers 404 (NOT_FOUND), the call naming A's resource must too: another
  tenant's resource is indistinguishable from a missing one;
- otherwise (a value in B's own namespace, such as an address, an event id to de-duplicate
  on, a tenant id the API ignores) both answers must be the same;
- no answer carries any of A's identifiers that B did not send itself;
- and afterwards every database row of A (every table with a tenant_id, and those hanging off
  A's jobs) is exactly as before.
Operator routes are called with B's key too: refused (401/403), A unchanged.
"""

from __future__ import annotations

import base64
import re
import secrets
from collections.abc import Iterator
from typing import Any

import grpc
import httpx
import pytest
from google.protobuf import descriptor as pb_descriptor
from google.protobuf import json_format, message_factory
from google.protobuf.message import Message

from herald.v1 import gateway_pb2
from tests.resilience.conftest import Resilient, remember
from tests.resilience.isolation import (
    EVENT_TYPE,
    KIND_OF_WORD,
    RESOURCE_OF_FIELD,
    RESOURCE_OF_PARAM,
    World,
    body_values,
    changed,
    kind_of,
    leaked,
    settled_snapshot,
)
from tests.resilience.openapi import Operation, minimal, operations
from tests.resilience.receivers import FlakyReceiver
from tests.resilience.report import REPORT
from tests.standins.sendgrid import SEND_PATH, SendGridStandIn
from tests.support.api import TenantKey, openapi_document, wait_for_status


@pytest.fixture(scope="module")
def world(resilient: Resilient) -> Iterator[World]:
    """Tenant A with one resource of every kind the gateway offers today, and tenant B."""
    gateway = resilient.gateway
    paths = set(openapi_document(gateway)["paths"])
    receiver = FlakyReceiver("isolation")
    sendgrid = SendGridStandIn()
    try:
        a = resilient.tenant("isolation-a", unlimited=False)
        b = resilient.tenant("isolation-b", unlimited=False)
        a_key = remember(sendgrid.add_key(f"SG.isolation-a-{secrets.token_hex(8)}.{secrets.token_hex(12)}"))
        b_key = remember(sendgrid.add_key(f"SG.isolation-b-{secrets.token_hex(8)}.{secrets.token_hex(12)}"))
        w = World(a, b, receiver, sendgrid, b_key)
        w.resources["tenant"] = a.tenant_id
        w.resources["operator"] = "admin"  # the stack's first operator: B's key must not reach it

        def post(path: str, body: Any = None, expect: int = 201) -> dict[str, Any]:
            response = httpx.post(f"{gateway}{path}", json=body, headers=a.headers, timeout=30)
            assert response.status_code == expect, f"setting up {path}: {response.status_code} {response.text}"
            return response.json() if response.content else {}

        delivered = post("/v1/webhooks", {"url": f"{receiver.base_url}/a", "payload": {"mode": "ok"}}, 202)["id"]
        failed = post("/v1/webhooks", {"url": f"{receiver.base_url}/a", "payload": {"mode": "reject"}}, 202)["id"]
        assert wait_for_status(gateway, a, delivered)["status"] == "delivered"
        assert wait_for_status(gateway, a, failed)["status"] == "failed"
        # The failed one: a retry leaking across tenants would show as a status change.
        w.resources["job"] = failed
        w.private.append(delivered)
        created_key = post("/v1/api-keys", {"name": "second"})
        w.resources["api_key"] = created_key["id"]
        w.private.append(remember(created_key["api_key"]))
        provider = post(
            "/v1/providers",
            {"provider": "sendgrid", "api_key": a_key, "priority": 5, "base_url": sendgrid.base_url},
        )
        w.resources["provider"] = provider["id"]
        w.private.append(a_key)
        address = f"victim-{secrets.token_hex(4)}@example.com"
        post("/v1/suppressions", {"address": address})
        w.resources["suppression"] = address
        w.private.append(remember(post("/v1/webhook-secret")["secret"]))
        domain = post(
            "/v1/domains", {"domain": f"mail-{secrets.token_hex(3)}.a.example", "provider_id": provider["id"]}
        )
        w.resources["domain"] = domain["id"]
        if "/v1/webhooks/targets" in paths:
            target = post("/v1/webhooks/targets", {"url": f"{receiver.base_url}/a-target"})
            w.resources["target"] = target["id"]
            event_filter = post("/v1/webhooks/filters", {"event_types": [EVENT_TYPE]})
            w.resources["filter"] = event_filter["id"]
            subscription = post(
                "/v1/webhooks/subscriptions", {"target_id": target["id"], "filter_id": event_filter["id"]}
            )
            w.resources["subscription"] = subscription["id"]
        if "/v1/inbound/{provider}" in paths:
            inbound_secret = remember("whsec_" + base64.b64encode(secrets.token_bytes(24)).decode())
            response = httpx.put(
                f"{gateway}/v1/inbound/resend", json={"secret": inbound_secret}, headers=a.headers, timeout=30
            )
            assert response.status_code == 200, response.text
            w.resources["inbound_provider"] = "resend"
            w.private.append(inbound_secret)
        if "/v1/events" in paths:
            event_id = f"evt-a-{secrets.token_hex(6)}"
            marker = f"a-only-{secrets.token_hex(6)}"
            event = post("/v1/events", {"event_type": EVENT_TYPE, "payload": {"a": marker}, "event_id": event_id}, 202)
            w.resources["event"] = event_id
            # As JSON (REST) and as the payload's bytes in base64 (gRPC).
            w.private += [marker, base64.b64encode(f'{{"a":"{marker}"}}'.encode()).decode()]
            # Replaying A's event id as B must not answer A's deliveries.
            w.private += [d["job_id"] for d in event.get("deliveries", [])]
            for job_id in [d["job_id"] for d in event.get("deliveries", [])]:
                wait_for_status(gateway, a, job_id)
        yield w
    finally:
        receiver.close()
        sendgrid.close()


def fill_path(operation: Operation, references: dict[str, str]) -> str:
    path = operation.path
    for name in operation.path_params:
        kind = kind_of(name, RESOURCE_OF_PARAM, operation.label)
        if kind not in references:
            pytest.fail(f"{operation.label}: the `world` fixture made no {kind} for tenant A")
        path = path.replace("{" + name + "}", references[kind])
    return path


def problem_kind(response: httpx.Response) -> str:
    try:
        return str(response.json().get("type", ""))
    except (ValueError, AttributeError):
        return ""


def call(resilient: Resilient, operation: Operation, path: str, key: TenantKey, body: Any) -> httpx.Response:
    return httpx.request(
        operation.method.upper(), f"{resilient.gateway}{path}", json=body, headers=key.headers, timeout=30
    )


def test_rest_operations_with_another_tenants_key(resilient: Resilient, world: World) -> None:
    document = openapi_document(resilient.gateway)
    # Operations on A's resources (by path) first, before B has made anything of its own with the
    # same values (B may suppress the same address); deletions last within each group.
    ordered = sorted(operations(document), key=lambda op: (not op.path_params, op.method == "delete", op.path))
    before = settled_snapshot(resilient, world.a)
    wrong: list[str] = []
    counted = {"404 like a missing one": 0, "same answer as for a missing one": 0, "names none of A's": 0}
    for operation in ordered:
        label = f"{operation.label} as B"
        missing = world.missing()
        schema = operation.body_schema()
        body = minimal(document, schema, body_values(world, world.resources)) if schema is not None else None
        control_body = minimal(document, schema, body_values(world, missing)) if schema is not None else None
        path = fill_path(operation, world.resources)
        response = call(resilient, operation, path, world.b, body)
        sent = f"{path} {body}"
        if response.status_code >= 500:
            wrong.append(f"{label}: {response.status_code} {response.text[:200]}")
        if leaked(response.text, world, sent):
            wrong.append(f"{label}: the answer carries A's identifiers {leaked(response.text, world, sent)}")
        if operation.is_admin:
            if response.status_code not in (401, 403):
                wrong.append(f"{label}: an operator route answered a tenant key with {response.status_code}")
            continue
        names_a = bool(operation.path_params) or any(v in str(body) for k, v in world.resources.items())
        if not names_a:
            counted["names none of A's"] += 1
            continue
        control = call(resilient, operation, fill_path(operation, missing), world.b, control_body)
        ours, theirs = (response.status_code, problem_kind(response)), (control.status_code, problem_kind(control))
        if control.status_code == 404:
            counted["404 like a missing one"] += 1
            if response.status_code != 404:
                wrong.append(f"{label} on A's resource: {response.status_code}, not 404: {response.text[:200]}")
        else:
            counted["same answer as for a missing one"] += 1
            if ours != theirs:
                wrong.append(f"{label} naming A's resources answered {ours}, naming missing ones {theirs}")
    after = settled_snapshot(resilient, world.a)
    wrong.extend(f"A's rows changed: {c}" for c in changed(before, after))
    assert not world.sendgrid.received("POST", SEND_PATH), "A's provider was called on B's behalf"
    assert not wrong, "\n".join(wrong)
    assert counted["404 like a missing one"] >= 5, counted  # the route table was really walked
    REPORT.add(
        "isolation (REST, walked from /openapi.json)",
        f"{len(ordered)} operations: " + ", ".join(f"{k} {v}" for k, v in counted.items()),
    )


# --- gRPC ----------------------------------------------------------------------------------


def method_kind(method: pb_descriptor.MethodDescriptor) -> str | None:
    words = re.findall(r"[A-Z][a-z]+|[A-Z]+(?![a-z])", method.name)
    for size in (2, 1):
        for i in range(len(words) - size + 1):
            kind = KIND_OF_WORD.get("".join(words[i : i + size]))
            if kind is not None:
                return kind
    return None


def fill(message: Message, world: World, references: dict[str, str], method: pb_descriptor.MethodDescriptor) -> None:
    """Fills what a request needs to be valid, and every field that names a resource with `references`."""
    plain = body_values(world, {})
    top = message.DESCRIPTOR.full_name == method.input_type.full_name
    for fd in message.DESCRIPTOR.fields:
        name = fd.name
        if fd.type == fd.TYPE_MESSAGE:
            if fd.message_type.GetOptions().map_entry or fd.message_type.full_name.startswith("google.protobuf."):
                continue
            if name in ("cc", "bcc", "reply_to"):
                continue
            child = getattr(message, name).add() if fd.is_repeated else getattr(message, name)
            fill(child, world, references, method)
            if not fd.is_repeated:
                getattr(message, name).SetInParent()
        elif fd.type == fd.TYPE_STRING:
            if name == "id" and not top:
                continue  # the id of a thing being created: the server assigns it
            if name == "id" or name.endswith("_id"):
                kind = method_kind(method) if name == "id" else None
                kind = kind or kind_of(name, RESOURCE_OF_FIELD, f"{message.DESCRIPTOR.full_name}.{name}")
                if kind not in references:
                    pytest.fail(f"{method.name}: the `world` fixture made no {kind} for tenant A")
                setattr(message, name, references[kind])
            elif fd.is_repeated and name in plain and isinstance(plain[name], list):
                getattr(message, name).extend(plain[name])
            elif not fd.is_repeated and name in plain and isinstance(plain[name], str):
                setattr(message, name, plain[name])
        elif fd.type == fd.TYPE_BYTES and not fd.is_repeated:
            setattr(message, name, b'{"from": "b"}')


def status_code_of(code: int) -> grpc.StatusCode:
    return next(c for c in grpc.StatusCode if c.value[0] == code)


def grpc_call(
    channel: grpc.Channel, method: pb_descriptor.MethodDescriptor, request: Message, key: TenantKey
) -> tuple[grpc.StatusCode, str]:
    """A unary call, or for a streaming method, a stream of the one request: there the item's own
    error (a per-item `error` status, as SubmitWebhooks answers) counts as the call's."""
    path = f"/{method.containing_service.full_name}/{method.name}"
    serialize = lambda m: m.SerializeToString()  # noqa: E731
    deserialize = message_factory.GetMessageClass(method.output_type).FromString
    metadata = [("authorization", f"Bearer {key.api_key}")]
    try:
        if method.client_streaming and method.server_streaming:
            stream = channel.stream_stream(path, request_serializer=serialize, response_deserializer=deserialize)
            answers = list(stream(iter([request]), metadata=metadata, timeout=30))
        elif method.client_streaming:
            gather = channel.stream_unary(path, request_serializer=serialize, response_deserializer=deserialize)
            answers = [gather(iter([request]), metadata=metadata, timeout=30)]
        elif method.server_streaming:
            spread = channel.unary_stream(path, request_serializer=serialize, response_deserializer=deserialize)
            answers = list(spread(request, metadata=metadata, timeout=30))
        else:
            invoke = channel.unary_unary(path, request_serializer=serialize, response_deserializer=deserialize)
            answers = [invoke(request, metadata=metadata, timeout=30)]
    except grpc.RpcError as error:
        return error.code(), str(error.details())
    text = "\n".join(json_format.MessageToJson(answer) for answer in answers)
    for answer in answers:
        if "error" in answer.DESCRIPTOR.fields_by_name and answer.HasField("error"):
            return status_code_of(answer.error.code), text  # type: ignore[attr-defined]
    return grpc.StatusCode.OK, text


def test_grpc_methods_with_another_tenants_key(resilient: Resilient, world: World) -> None:
    service = gateway_pb2.DESCRIPTOR.services_by_name["NotificationService"]
    # Lookups and changes of A's things first, deletions last (as over REST).
    methods = sorted(service.methods, key=lambda m: (m.name.startswith("Delete"), m.name))
    before = settled_snapshot(resilient, world.a)
    wrong: list[str] = []
    counted = {"NOT_FOUND like a missing one": 0, "same answer as for a missing one": 0, "names none of A's": 0}
    with grpc.insecure_channel(resilient.gateway_grpc) as channel:
        for method in methods:
            request_class = message_factory.GetMessageClass(method.input_type)
            request, control = request_class(), request_class()
            fill(request, world, world.resources, method)
            fill(control, world, world.missing(), method)
            code, text = grpc_call(channel, method, request, world.b)
            label = f"{method.name} as B"
            sent = str(request)
            if code in (grpc.StatusCode.INTERNAL, grpc.StatusCode.UNKNOWN):
                wrong.append(f"{label}: {code.name} {text[:200]}")
            if leaked(text, world, sent):
                wrong.append(f"{label}: the answer carries A's identifiers {leaked(text, world, sent)}")
            if request == control:
                counted["names none of A's"] += 1
                continue
            control_code, _ = grpc_call(channel, method, control, world.b)
            if control_code == grpc.StatusCode.NOT_FOUND:
                counted["NOT_FOUND like a missing one"] += 1
                if code != grpc.StatusCode.NOT_FOUND:
                    wrong.append(f"{label} on A's resource: {code.name}, not NOT_FOUND ({text[:200]})")
            else:
                counted["same answer as for a missing one"] += 1
                if code != control_code:
                    wrong.append(f"{label} naming A's resources: {code.name}, naming missing ones: {control_code.name}")
    after = settled_snapshot(resilient, world.a)
    wrong.extend(f"A's rows changed: {c}" for c in changed(before, after))
    assert not wrong, "\n".join(wrong)
    assert counted["NOT_FOUND like a missing one"] >= 2, counted
    REPORT.add(
        "isolation (gRPC, walked from NotificationService)",
        f"{len(methods)} methods: " + ", ".join(f"{k} {v}" for k, v in counted.items()),
    )
