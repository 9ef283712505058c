"""One table of cases, run over both surfaces: the HTTP API and NotificationService over gRPC
answer every case alike, because both are thin over the same operations
(herald_gateway.operations). Each case is a list of steps on webhook targets, event filters and
subscriptions; a step says what it does and what must come of it — an outcome (`ok`,
`not-found`, `invalid` with the fields named, `unauthenticated`) and, for `ok`, the fields of
the answer. A surface is an adapter that speaks its own protocol and reports in these terms."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

import grpc
import httpx
import orjson
import pytest
from google.protobuf.json_format import MessageToDict
from google.rpc import error_details_pb2
from grpc_status import rpc_status

from herald.cli.stack import Stack
from herald.v1 import common_pb2, gateway_pb2, gateway_pb2_grpc
from tests.support.api import create_tenant


@dataclass
class Answer:
    outcome: str
    body: dict[str, Any] = field(default_factory=dict)
    fields: frozenset[str] = frozenset()


class Surface(Protocol):
    def call(self, key: str, verb: str, kind: str, item_id: str, values: dict[str, Any]) -> Answer: ...


HTTP_OUTCOMES = {200: "ok", 201: "ok", 202: "ok", 204: "ok", 401: "unauthenticated", 404: "not-found", 422: "invalid"}
GRPC_OUTCOMES = {
    grpc.StatusCode.NOT_FOUND: "not-found",
    grpc.StatusCode.INVALID_ARGUMENT: "invalid",
    grpc.StatusCode.UNAUTHENTICATED: "unauthenticated",
}
PATHS = {
    "target": "/v1/webhooks/targets",
    "filter": "/v1/webhooks/filters",
    "subscription": "/v1/webhooks/subscriptions",
    "event": "/v1/events",
}
RPC_NAMES = {"target": "WebhookTarget", "filter": "EventFilter", "subscription": "Subscription"}
# Events are published (not created) and never updated nor deleted: "create" is PublishEvent.
EVENT_RPCS = {"create": "PublishEvent", "get": "GetEvent", "list": "ListEvents"}
MESSAGES = {
    "target": common_pb2.WebhookTarget,
    "filter": common_pb2.EventFilter,
    "subscription": common_pb2.Subscription,
}


class Http:
    def __init__(self, base: str) -> None:
        self.base = base

    def call(self, key: str, verb: str, kind: str, item_id: str, values: dict[str, Any]) -> Answer:
        url = f"{self.base}{PATHS[kind]}" + (f"/{item_id}" if verb not in ("create", "list") else "")
        method = {"create": "POST", "get": "GET", "list": "GET", "update": "PATCH", "delete": "DELETE"}[verb]
        body = values if verb in ("create", "update") else None
        response = httpx.request(method, url, json=body, headers={"authorization": f"Bearer {key}"}, timeout=30)
        outcome = HTTP_OUTCOMES.get(response.status_code, f"http {response.status_code}")
        found = response.json() if response.content else {}
        if outcome != "ok":
            return Answer(outcome, fields=frozenset(e["field"] for e in found.get("errors", ())))
        if verb == "list":
            found = {"ids": [item["id"] for item in found["data"]]}
        if kind == "event" and verb == "create":
            found["id"] = found["event_id"]
        return Answer(outcome, found)


class Grpc:
    def __init__(self, api: gateway_pb2_grpc.NotificationServiceStub) -> None:
        self.api = api

    def call(self, key: str, verb: str, kind: str, item_id: str, values: dict[str, Any]) -> Answer:
        if kind == "event":
            return self._event(key, verb, item_id, values)
        name = RPC_NAMES[kind]
        rpc = f"{verb.capitalize()}{name}" + ("s" if verb == "list" else "")
        request_type = getattr(gateway_pb2, f"NotificationService{rpc}Request")
        one = {"target": "target", "filter": "filter", "subscription": "subscription"}[kind]
        if verb == "create":
            request = request_type(**{one: MESSAGES[kind](**values)})
        elif verb == "update":
            request = request_type(**{f"{kind}_id": item_id}, **values)
            if "headers" in values:
                request.replace_headers = True
            if "event_types" in values:
                request.replace_event_types = True
        elif verb == "list":
            request = request_type()
        else:
            request = request_type(**{f"{kind}_id": item_id})
        try:
            answer = getattr(self.api, rpc)(request, metadata=(("authorization", f"Bearer {key}"),), timeout=30)
        except grpc.RpcError as error:
            return Answer(GRPC_OUTCOMES.get(error.code(), str(error.code())), fields=_violations(error))  # type: ignore[attr-defined]
        if verb == "list":
            return Answer("ok", {"ids": [item.id for item in getattr(answer, f"{one}s")]})
        if verb == "delete":
            return Answer("ok")
        message = getattr(answer, one)
        return Answer(
            "ok", MessageToDict(message, preserving_proto_field_name=True, always_print_fields_with_no_presence=True)
        )

    def _event(self, key: str, verb: str, item_id: str, values: dict[str, Any]) -> Answer:
        rpc = EVENT_RPCS[verb]
        request_type = getattr(gateway_pb2, f"NotificationService{rpc}Request")
        if verb == "create":
            request = request_type(**{**values, "payload": orjson.dumps(values.get("payload"))})
        else:
            request = request_type(id=item_id) if verb == "get" else request_type()
        try:
            answer = getattr(self.api, rpc)(request, metadata=(("authorization", f"Bearer {key}"),), timeout=30)
        except grpc.RpcError as error:
            return Answer(GRPC_OUTCOMES.get(error.code(), str(error.code())), fields=_violations(error))  # type: ignore[attr-defined]
        if verb == "create":
            return Answer("ok", {"id": answer.event_id, "replayed": answer.replayed})
        if verb == "list":
            return Answer("ok", {"ids": [event.id for event in answer.events]})
        return Answer("ok", MessageToDict(answer.event, preserving_proto_field_name=True))


def _violations(error: grpc.RpcError) -> frozenset[str]:
    status = rpc_status.from_call(error)  # type: ignore[arg-type]
    found: set[str] = set()
    for detail in status.details if status is not None else ():
        request = error_details_pb2.BadRequest()
        if detail.Is(request.DESCRIPTOR):
            detail.Unpack(request)
            found.update(v.field for v in request.field_violations)
    return frozenset(found)


# A step: (who, verb, kind, which item, values, expected outcome, expected answer fields or invalid fields).
# `which` names an item created by an earlier step of the case ("$t" is the target made by a step
# saved as "t"), a literal id, or "". `who` is "me", "other" (another tenant) or "nobody" (a bad key).
Step = tuple[str, str, str, str, dict[str, Any], str, Any, str]
UNKNOWN = str(uuid.UUID(int=7))

CASES: dict[str, list[Step]] = {
    "a target's life": [
        (
            "me",
            "create",
            "target",
            "",
            {"url": "https://example.com/a", "description": "orders", "enabled": True},
            "ok",
            {"url": "https://example.com/a", "description": "orders", "enabled": True},
            "t",
        ),
        ("me", "get", "target", "$t", {}, "ok", {"url": "https://example.com/a", "description": "orders"}, ""),
        ("me", "list", "target", "", {}, "ok", {"contains": "$t"}, ""),
        (
            "me",
            "update",
            "target",
            "$t",
            {"description": "billing"},
            "ok",
            {"description": "billing", "url": "https://example.com/a"},
            "",
        ),
        # Header values read back masked (sealed at rest).
        ("me", "update", "target", "$t", {"headers": {"X-Team": "a"}}, "ok", {"headers": {"X-Team": "****"}}, ""),
        ("other", "get", "target", "$t", {}, "not-found", None, ""),
        ("other", "update", "target", "$t", {"description": "x"}, "not-found", None, ""),
        ("other", "delete", "target", "$t", {}, "not-found", None, ""),
        ("me", "delete", "target", "$t", {}, "ok", None, ""),
        ("me", "get", "target", "$t", {}, "not-found", None, ""),
    ],
    "a target's refusals": [
        ("me", "create", "target", "", {"url": "ftp://example.com/x"}, "invalid", {"url"}, ""),
        (
            "me",
            "create",
            "target",
            "",
            {"url": "https://example.com/x", "headers": {"Webhook-Id": "x"}},
            "invalid",
            {"headers.Webhook-Id"},
            "",
        ),
        (
            "me",
            "create",
            "target",
            "",
            {"url": "https://example.com/x", "headers": {"Host": "x"}},
            "invalid",
            {"headers.Host"},
            "",
        ),
        ("me", "get", "target", "not-an-id", {}, "not-found", None, ""),
        ("me", "get", "target", UNKNOWN, {}, "not-found", None, ""),
        ("me", "delete", "target", UNKNOWN, {}, "not-found", None, ""),
        ("me", "update", "target", UNKNOWN, {"description": "x"}, "not-found", None, ""),
        ("nobody", "get", "target", UNKNOWN, {}, "unauthenticated", None, ""),
        ("nobody", "list", "filter", "", {}, "unauthenticated", None, ""),
    ],
    "a filter's life and refusals": [
        ("me", "create", "filter", "", {"event_types": []}, "invalid", {"event_types"}, ""),
        ("me", "create", "filter", "", {"event_types": ["orders.*.v1"]}, "invalid", {"event_types[0]"}, ""),
        (
            "me",
            "create",
            "filter",
            "",
            {"event_types": ["orders.*"], "description": "o"},
            "ok",
            {"event_types": ["orders.*"], "description": "o"},
            "f",
        ),
        (
            "me",
            "update",
            "filter",
            "$f",
            {"event_types": ["orders.created.v1", "*"]},
            "ok",
            {"event_types": ["orders.created.v1", "*"]},
            "",
        ),
        ("me", "update", "filter", "$f", {"event_types": ["a b"]}, "invalid", {"event_types[0]"}, ""),
        ("other", "get", "filter", "$f", {}, "not-found", None, ""),
        ("me", "get", "filter", "$f", {}, "ok", {"event_types": ["orders.created.v1", "*"]}, ""),
        ("me", "delete", "filter", "$f", {}, "ok", None, ""),
        ("me", "delete", "filter", "$f", {}, "not-found", None, ""),
    ],
    "a subscription joins the tenant's own target and filter": [
        ("me", "create", "target", "", {"url": "https://example.com/s", "enabled": True}, "ok", {}, "t"),
        ("me", "create", "filter", "", {"event_types": ["*"]}, "ok", {}, "f"),
        ("other", "create", "filter", "", {"event_types": ["*"]}, "ok", {}, "g"),
        (
            "me",
            "create",
            "subscription",
            "",
            {"target_id": "$t", "filter_id": "$g", "active": True},
            "not-found",
            None,
            "",
        ),
        (
            "me",
            "create",
            "subscription",
            "",
            {"target_id": UNKNOWN, "filter_id": "$f", "active": True},
            "not-found",
            None,
            "",
        ),
        (
            "me",
            "create",
            "subscription",
            "",
            {"target_id": "$t", "filter_id": "$f", "active": False},
            "ok",
            {"target_id": "$t", "filter_id": "$f", "active": False},
            "s",
        ),
        ("me", "update", "subscription", "$s", {"active": True}, "ok", {"active": True}, ""),
        ("me", "update", "subscription", "$s", {"filter_id": "$g"}, "not-found", None, ""),
        ("me", "list", "subscription", "", {}, "ok", {"contains": "$s"}, ""),
        ("other", "get", "subscription", "$s", {}, "not-found", None, ""),
        ("me", "delete", "target", "$t", {}, "ok", None, ""),
        ("me", "get", "subscription", "$s", {}, "not-found", None, ""),
    ],
    "an event is kept, the tenant's own": [
        (
            "me",
            "create",
            "event",
            "",
            {"event_type": "herald.target.disabled", "payload": {}},
            "invalid",
            {"event_type"},
            "",
        ),
        ("me", "create", "event", "", {"event_type": "a b", "payload": {}}, "invalid", {"event_type"}, ""),
        ("me", "create", "event", "", {"event_type": "kept.v1", "payload": {"n": 1}}, "ok", {"replayed": False}, "e"),
        (
            "me",
            "get",
            "event",
            "$e",
            {},
            "ok",
            {"id": "$e", "event_type": "kept.v1", "content_type": "application/json"},
            "",
        ),
        ("me", "list", "event", "", {}, "ok", {"contains": "$e"}, ""),
        ("other", "get", "event", "$e", {}, "not-found", None, ""),
        ("other", "list", "event", "", {}, "ok", {"ids": []}, ""),
        ("me", "get", "event", "unknown-event", {}, "not-found", None, ""),
        ("nobody", "get", "event", "$e", {}, "unauthenticated", None, ""),
    ],
}


@pytest.fixture(scope="module")
def grpc_api(stack: Stack) -> Iterator[gateway_pb2_grpc.NotificationServiceStub]:
    with grpc.insecure_channel(stack.endpoints["gateway_grpc"]) as channel:
        yield gateway_pb2_grpc.NotificationServiceStub(channel)


def _resolve(value: Any, saved: dict[str, str]) -> Any:
    if isinstance(value, str) and value.startswith("$"):
        return saved[value[1:]]
    if isinstance(value, dict):
        return {k: _resolve(v, saved) for k, v in value.items()}
    if isinstance(value, list):
        return [_resolve(v, saved) for v in value]
    return value


@pytest.mark.parametrize("surface_name", ["http", "grpc"])
@pytest.mark.parametrize("case", list(CASES))
def test_the_surfaces_answer_alike(
    case: str,
    surface_name: str,
    gateway: str,
    operator_token: str,
    grpc_api: gateway_pb2_grpc.NotificationServiceStub,
) -> None:
    surface: Surface = Http(gateway) if surface_name == "http" else Grpc(grpc_api)
    keys = {
        "me": create_tenant(gateway, operator_token, f"surfaces-{surface_name}").api_key,
        "other": create_tenant(gateway, operator_token, f"surfaces-{surface_name}-other").api_key,
        "nobody": "hk_live_nobody_" + "x" * 32,
    }
    saved: dict[str, str] = {}
    for number, (who, verb, kind, which, values, outcome, expected, save_as) in enumerate(CASES[case]):
        where = f"{case}, step {number} ({surface_name} {verb} {kind})"
        answer = surface.call(keys[who], verb, kind, _resolve(which, saved), _resolve(values, saved))
        assert answer.outcome == outcome, where
        if outcome == "invalid":
            assert answer.fields == frozenset(expected), where
        elif outcome == "ok" and expected:
            wanted = _resolve(expected, saved)
            if "contains" in wanted:
                assert wanted["contains"] in answer.body["ids"], where
            else:
                assert {k: answer.body.get(k) for k in wanted} == wanted, where
        if save_as:
            saved[save_as] = answer.body["id"]


def test_every_resource_of_the_table_is_on_both_surfaces() -> None:
    """The table covers the CRUD of each resource on both: an RPC for each HTTP verb."""
    methods = {m.name for m in gateway_pb2.DESCRIPTOR.services_by_name["NotificationService"].methods}
    assert set(EVENT_RPCS.values()) <= methods
    for kind, name in RPC_NAMES.items():
        verbs = {step[1] for steps in CASES.values() for step in steps if step[2] == kind}
        assert verbs <= {"create", "get", "list", "update", "delete"}
        for verb in ("Create", "Get", "Update", "Delete"):
            assert f"{verb}{name}" in methods
        assert f"List{name}s" in methods
