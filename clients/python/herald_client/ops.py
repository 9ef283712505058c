"""Every API call the SDK makes, written once: each function describes one request (`Op`) and how
its answer is read; `Herald` runs them with httpx's client, `AsyncHerald` with its async one."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, TypeVar
from urllib.parse import quote

from herald_client._http import Op, dropped
from herald_client.models import (
    ApiKey,
    CreatedApiKey,
    EventAccepted,
    Filter,
    Job,
    JobAccepted,
    Page,
    RotatedSecret,
    SecretStatus,
    SigningSecret,
    Subscription,
    Target,
    TargetSecret,
    TargetTest,
)

TARGETS = "/v1/webhooks/targets"
FILTERS = "/v1/webhooks/filters"
SUBSCRIPTIONS = "/v1/webhooks/subscriptions"
SIGNING_ROUTE = "/v1/webhook-secret"


class FromApi(Protocol):
    @classmethod
    def from_api(cls, data: dict[str, Any]) -> Any: ...


M = TypeVar("M", bound=FromApi)


def _page(model: type[M]) -> Callable[[Any], Page[M]]:
    return lambda body: Page([model.from_api(item) for item in body["data"]], body.get("next_cursor"))


def _query(**values: Any) -> dict[str, str]:
    return {k: str(v) for k, v in values.items() if v is not None}


def _none(_body: Any) -> None:
    return None


def _id(value: str) -> str:
    return quote(value, safe="")


def send_webhook(
    url: str,
    payload: Any = None,
    headers: dict[str, str] | None = None,
    idempotency_key: str | None = None,
    *,
    payload_base64: str | None = None,
    content_type: str | None = None,
    priority: str | None = None,
    ordering_key: str | None = None,
) -> Op[JobAccepted]:
    body = dropped(
        {
            "url": url,
            "payload": payload,
            "headers": headers,
            "payload_base64": payload_base64,
            "content_type": content_type,
            "priority": priority,
            "ordering_key": ordering_key,
        }
    )
    return Op("POST", "/v1/webhooks", JobAccepted.from_api, body, idempotency_key=idempotency_key)


def get_job(job_id: str) -> Op[Job]:
    return Op("GET", f"/v1/jobs/{_id(job_id)}", Job.from_api)


def list_jobs(
    *,
    status: str | None = None,
    channel: str | None = None,
    url: str | None = None,
    created_after: str | None = None,
    created_before: str | None = None,
    limit: int | None = None,
    cursor: str | None = None,
) -> Op[Page[Job]]:
    params = _query(
        status=status,
        channel=channel,
        url=url,
        created_after=created_after,
        created_before=created_before,
        limit=limit,
        cursor=cursor,
    )
    return Op("GET", "/v1/jobs", _page(Job), params=params)


def retry_job(job_id: str, idempotency_key: str | None = None) -> Op[JobAccepted]:
    return Op("POST", f"/v1/jobs/{_id(job_id)}/retry", JobAccepted.from_api, idempotency_key=idempotency_key)


def publish_event(
    event_type: str,
    payload: Any = None,
    *,
    event_id: str | None = None,
    payload_base64: str | None = None,
    content_type: str | None = None,
    idempotency_key: str | None = None,
) -> Op[EventAccepted]:
    body = dropped(
        {
            "event_type": event_type,
            "payload": payload,
            "event_id": event_id,
            "payload_base64": payload_base64,
            "content_type": content_type,
        }
    )
    return Op("POST", "/v1/events", EventAccepted.from_api, body, idempotency_key=idempotency_key)


def create(collection: str, model: type[M], body: dict[str, Any], idempotency_key: str | None) -> Op[M]:
    return Op("POST", collection, model.from_api, dropped(body), idempotency_key=idempotency_key)


def get(collection: str, model: type[M], item_id: str) -> Op[M]:
    return Op("GET", f"{collection}/{_id(item_id)}", model.from_api)


def list_of(collection: str, model: type[M], limit: int | None, cursor: str | None) -> Op[Page[M]]:
    return Op("GET", collection, _page(model), params=_query(limit=limit, cursor=cursor))


def update(collection: str, model: type[M], item_id: str, changes: dict[str, Any]) -> Op[M]:
    return Op("PATCH", f"{collection}/{_id(item_id)}", model.from_api, dropped(changes))


def delete(collection: str, item_id: str) -> Op[None]:
    return Op("DELETE", f"{collection}/{_id(item_id)}", _none)


def target_secret(target_id: str) -> Op[TargetSecret]:
    return Op("GET", f"{TARGETS}/{_id(target_id)}/secret", TargetSecret.from_api)


def rotate_target_secret(
    target_id: str, key: str | None = None, overlap_s: float | None = None, algorithm: str | None = None
) -> Op[RotatedSecret]:
    body = dropped({"key": key, "overlap_s": overlap_s, "algorithm": algorithm})
    return Op("POST", f"{TARGETS}/{_id(target_id)}/secret/rotate", RotatedSecret.from_api, body or None)


def target_test(target_id: str) -> Op[TargetTest]:
    return Op("POST", f"{TARGETS}/{_id(target_id)}/test", TargetTest.from_api)


def secret_status() -> Op[SecretStatus]:
    return Op("GET", SIGNING_ROUTE, SecretStatus.from_api)


def create_secret() -> Op[SigningSecret]:
    return Op("POST", SIGNING_ROUTE, SigningSecret.from_api)


def rotate_secret() -> Op[SigningSecret]:
    return Op("POST", f"{SIGNING_ROUTE}/rotate", SigningSecret.from_api)


def delete_secret() -> Op[None]:
    return Op("DELETE", SIGNING_ROUTE, _none)


def create_api_key(name: str) -> Op[CreatedApiKey]:
    return Op("POST", "/v1/api-keys", CreatedApiKey.from_api, {"name": name})


def list_api_keys() -> Op[list[ApiKey]]:
    return Op("GET", "/v1/api-keys", lambda body: [ApiKey.from_api(k) for k in body["data"]])


def revoke_api_key(key_id: str) -> Op[None]:
    return Op("DELETE", f"/v1/api-keys/{_id(key_id)}", _none)


__all__ = ["FILTERS", "SUBSCRIPTIONS", "TARGETS", "Filter", "Subscription", "Target"]
