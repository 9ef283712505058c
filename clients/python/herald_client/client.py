"""`Herald`: the API over httpx's synchronous client. Each resource's method is one `ops` call."""

from __future__ import annotations

import time
from typing import Any, TypeVar

import httpx

from herald_client import ops
from herald_client._http import DEFAULT_BASE_URL, Op, RetryPolicy, headers, result, should_retry
from herald_client.errors import HeraldConnectionError
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

T = TypeVar("T")


class Herald:
    """A tenant's client: `Herald(api_key="hk_live_...", base_url="http://127.0.0.1:8080")`.

    Every POST carries an Idempotency-Key (yours, or a new one per call that its retries reuse);
    429 and 503 answers and connection failures are retried (`retry`), honouring Retry-After;
    a refusal raises an `ApiError` carrying the problem details. Use it as a context manager, or
    call `close()`."""

    def __init__(
        self,
        api_key: str,
        base_url: str = DEFAULT_BASE_URL,
        *,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._api_key = api_key
        self._retry = retry or RetryPolicy()
        self._http = http_client or httpx.Client(base_url=base_url, timeout=timeout)
        self.webhooks = Webhooks(self)
        self.jobs = Jobs(self)
        self.events = Events(self)
        self.targets = Targets(self)
        self.filters = Filters(self)
        self.subscriptions = Subscriptions(self)
        self.secrets = Secrets(self)
        self.api_keys = ApiKeys(self)

    def run(self, op: Op[T]) -> T:
        """Sends one request, retrying as the policy says; the answer read, or the refusal raised."""
        sent = headers(self._api_key, op)  # once: the retries reuse its Idempotency-Key
        attempt = 0
        while True:
            try:
                response = self._http.request(op.method, op.path, json=op.json, params=op.params, headers=sent)
            except httpx.TransportError as error:
                if attempt >= self._retry.max_retries:
                    raise HeraldConnectionError(f"{op.method} {op.path}: {error}") from error
                time.sleep(self._retry.wait(attempt, None))
                attempt += 1
                continue
            if should_retry(response) and attempt < self._retry.max_retries:
                time.sleep(self._retry.wait(attempt, response))
                attempt += 1
                continue
            return result(op, response)

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Herald:
        return self

    def __exit__(self, *_: object) -> None:
        self.close()


class _Resource:
    def __init__(self, client: Herald) -> None:
        self._run = client.run


class Webhooks(_Resource):
    def send(
        self,
        url: str,
        payload: Any = None,
        headers: dict[str, str] | None = None,
        idempotency_key: str | None = None,
        **options: Any,
    ) -> JobAccepted:
        """Queues one webhook (POST /v1/webhooks); `options`: payload_base64, content_type,
        priority, ordering_key."""
        return self._run(ops.send_webhook(url, payload, headers, idempotency_key, **options))


class Jobs(_Resource):
    def get(self, job_id: str) -> Job:
        return self._run(ops.get_job(job_id))

    def list(self, **filters: Any) -> Page[Job]:
        """filters: status, channel, url, created_after, created_before, limit, cursor."""
        return self._run(ops.list_jobs(**filters))

    def retry(self, job_id: str, idempotency_key: str | None = None) -> JobAccepted:
        return self._run(ops.retry_job(job_id, idempotency_key))


class Events(_Resource):
    def publish(self, event_type: str, payload: Any = None, **options: Any) -> EventAccepted:
        """Fans an event out to every matching subscription; `options`: event_id,
        payload_base64, content_type, idempotency_key."""
        return self._run(ops.publish_event(event_type, payload, **options))


class Targets(_Resource):
    def create(self, url: str, *, idempotency_key: str | None = None, **fields: Any) -> Target:
        """fields: description, headers, rate_limit_per_min, max_in_flight, enabled, signing_key
        (the target's own `whsec_` secret; omitted, Herald makes one)."""
        return self._run(ops.create(ops.TARGETS, Target, {"url": url, **fields}, idempotency_key))

    def get(self, target_id: str) -> Target:
        return self._run(ops.get(ops.TARGETS, Target, target_id))

    def list(self, limit: int | None = None, cursor: str | None = None) -> Page[Target]:
        return self._run(ops.list_of(ops.TARGETS, Target, limit, cursor))

    def update(self, target_id: str, **changes: Any) -> Target:
        return self._run(ops.update(ops.TARGETS, Target, target_id, changes))

    def delete(self, target_id: str) -> None:
        self._run(ops.delete(ops.TARGETS, target_id))

    def secret(self, target_id: str) -> TargetSecret:
        """The target's own signing secret: its deliveries are signed with it, not the tenant's."""
        return self._run(ops.target_secret(target_id))

    def rotate_secret(
        self, target_id: str, key: str | None = None, overlap_s: float | None = None, algorithm: str | None = None
    ) -> RotatedSecret:
        """A new key (`key`, or one Herald makes; `algorithm="ed25519"` for a key pair), the
        previous ones still signing for `overlap_s` (the gateway's default: a day)."""
        return self._run(ops.rotate_target_secret(target_id, key, overlap_s, algorithm))

    def test(self, target_id: str) -> TargetTest:
        """Sends the target a signed ping now and answers what its receiver said."""
        return self._run(ops.target_test(target_id))


class Filters(_Resource):
    def create(self, event_types: list[str], *, idempotency_key: str | None = None, **fields: Any) -> Filter:
        """fields: description."""
        body = {"event_types": event_types, **fields}
        return self._run(ops.create(ops.FILTERS, Filter, body, idempotency_key))

    def get(self, filter_id: str) -> Filter:
        return self._run(ops.get(ops.FILTERS, Filter, filter_id))

    def list(self, limit: int | None = None, cursor: str | None = None) -> Page[Filter]:
        return self._run(ops.list_of(ops.FILTERS, Filter, limit, cursor))

    def update(self, filter_id: str, **changes: Any) -> Filter:
        return self._run(ops.update(ops.FILTERS, Filter, filter_id, changes))

    def delete(self, filter_id: str) -> None:
        self._run(ops.delete(ops.FILTERS, filter_id))


class Subscriptions(_Resource):
    def create(
        self, target_id: str, filter_id: str, *, active: bool = True, idempotency_key: str | None = None
    ) -> Subscription:
        body = {"target_id": target_id, "filter_id": filter_id, "active": active}
        return self._run(ops.create(ops.SUBSCRIPTIONS, Subscription, body, idempotency_key))

    def get(self, subscription_id: str) -> Subscription:
        return self._run(ops.get(ops.SUBSCRIPTIONS, Subscription, subscription_id))

    def list(self, limit: int | None = None, cursor: str | None = None) -> Page[Subscription]:
        return self._run(ops.list_of(ops.SUBSCRIPTIONS, Subscription, limit, cursor))

    def update(self, subscription_id: str, **changes: Any) -> Subscription:
        return self._run(ops.update(ops.SUBSCRIPTIONS, Subscription, subscription_id, changes))

    def delete(self, subscription_id: str) -> None:
        self._run(ops.delete(ops.SUBSCRIPTIONS, subscription_id))


class Secrets(_Resource):
    """The tenant's webhook signing secret."""

    def get(self) -> SecretStatus:
        return self._run(ops.secret_status())

    def create(self) -> SigningSecret:
        return self._run(ops.create_secret())

    def rotate(self) -> SigningSecret:
        return self._run(ops.rotate_secret())

    def delete(self) -> None:
        self._run(ops.delete_secret())


class ApiKeys(_Resource):
    def create(self, name: str) -> CreatedApiKey:
        return self._run(ops.create_api_key(name))

    def list(self) -> list[ApiKey]:
        return self._run(ops.list_api_keys())

    def revoke(self, key_id: str) -> None:
        self._run(ops.revoke_api_key(key_id))
