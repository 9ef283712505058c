"""`AsyncHerald`: the same API as `Herald` over httpx's async client; every method is awaited."""

from __future__ import annotations

import asyncio
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


class AsyncHerald:
    """`Herald`, awaited: `async with AsyncHerald(api_key=..., base_url=...) as client: ...`."""

    def __init__(
        self,
        api_key: str,
        base_url: str = DEFAULT_BASE_URL,
        *,
        timeout: float = 30.0,
        retry: RetryPolicy | None = None,
        http_client: httpx.AsyncClient | None = None,
    ) -> None:
        self._api_key = api_key
        self._retry = retry or RetryPolicy()
        self._http = http_client or httpx.AsyncClient(base_url=base_url, timeout=timeout)
        self.webhooks = Webhooks(self)
        self.jobs = Jobs(self)
        self.events = Events(self)
        self.targets = Targets(self)
        self.filters = Filters(self)
        self.subscriptions = Subscriptions(self)
        self.secrets = Secrets(self)
        self.api_keys = ApiKeys(self)

    async def run(self, op: Op[T]) -> T:
        """As `Herald.run`, without blocking the event loop while it waits to retry."""
        sent = headers(self._api_key, op)
        attempt = 0
        while True:
            try:
                response = await self._http.request(op.method, op.path, json=op.json, params=op.params, headers=sent)
            except httpx.TransportError as error:
                if attempt >= self._retry.max_retries:
                    raise HeraldConnectionError(f"{op.method} {op.path}: {error}") from error
                await asyncio.sleep(self._retry.wait(attempt, None))
                attempt += 1
                continue
            if should_retry(response) and attempt < self._retry.max_retries:
                await asyncio.sleep(self._retry.wait(attempt, response))
                attempt += 1
                continue
            return result(op, response)

    async def close(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncHerald:
        return self

    async def __aexit__(self, *_: object) -> None:
        await self.close()


class _Resource:
    def __init__(self, client: AsyncHerald) -> None:
        self._run = client.run


class Webhooks(_Resource):
    async def send(
        self,
        url: str,
        payload: Any = None,
        headers: dict[str, str] | None = None,
        idempotency_key: str | None = None,
        **options: Any,
    ) -> JobAccepted:
        """Queues one webhook (POST /v1/webhooks); `options`: payload_base64, content_type,
        priority, ordering_key."""
        return await self._run(ops.send_webhook(url, payload, headers, idempotency_key, **options))


class Jobs(_Resource):
    async def get(self, job_id: str) -> Job:
        return await self._run(ops.get_job(job_id))

    async def list(self, **filters: Any) -> Page[Job]:
        """filters: status, channel, url, created_after, created_before, limit, cursor."""
        return await self._run(ops.list_jobs(**filters))

    async def retry(self, job_id: str, idempotency_key: str | None = None) -> JobAccepted:
        return await self._run(ops.retry_job(job_id, idempotency_key))


class Events(_Resource):
    async def publish(self, event_type: str, payload: Any = None, **options: Any) -> EventAccepted:
        """Fans an event out to every matching subscription; `options`: event_id,
        payload_base64, content_type, idempotency_key."""
        return await self._run(ops.publish_event(event_type, payload, **options))


class Targets(_Resource):
    async def create(self, url: str, *, idempotency_key: str | None = None, **fields: Any) -> Target:
        """fields: description, headers, rate_limit_per_min, max_in_flight, enabled, signing_key
        (the target's own `whsec_` secret; omitted, Herald makes one)."""
        return await self._run(ops.create(ops.TARGETS, Target, {"url": url, **fields}, idempotency_key))

    async def get(self, target_id: str) -> Target:
        return await self._run(ops.get(ops.TARGETS, Target, target_id))

    async def list(self, limit: int | None = None, cursor: str | None = None) -> Page[Target]:
        return await self._run(ops.list_of(ops.TARGETS, Target, limit, cursor))

    async def update(self, target_id: str, **changes: Any) -> Target:
        return await self._run(ops.update(ops.TARGETS, Target, target_id, changes))

    async def delete(self, target_id: str) -> None:
        await self._run(ops.delete(ops.TARGETS, target_id))

    async def secret(self, target_id: str) -> TargetSecret:
        """The target's own signing secret: its deliveries are signed with it, not the tenant's."""
        return await self._run(ops.target_secret(target_id))

    async def rotate_secret(
        self, target_id: str, key: str | None = None, overlap_s: float | None = None, algorithm: str | None = None
    ) -> RotatedSecret:
        """A new key (`key`, or one Herald makes; `algorithm="ed25519"` for a key pair), the
        previous ones still signing for `overlap_s` (the gateway's default: a day)."""
        return await self._run(ops.rotate_target_secret(target_id, key, overlap_s, algorithm))

    async def test(self, target_id: str) -> TargetTest:
        """Sends the target a signed ping now and answers what its receiver said."""
        return await self._run(ops.target_test(target_id))


class Filters(_Resource):
    async def create(self, event_types: list[str], *, idempotency_key: str | None = None, **fields: Any) -> Filter:
        """fields: description."""
        body = {"event_types": event_types, **fields}
        return await self._run(ops.create(ops.FILTERS, Filter, body, idempotency_key))

    async def get(self, filter_id: str) -> Filter:
        return await self._run(ops.get(ops.FILTERS, Filter, filter_id))

    async def list(self, limit: int | None = None, cursor: str | None = None) -> Page[Filter]:
        return await self._run(ops.list_of(ops.FILTERS, Filter, limit, cursor))

    async def update(self, filter_id: str, **changes: Any) -> Filter:
        return await self._run(ops.update(ops.FILTERS, Filter, filter_id, changes))

    async def delete(self, filter_id: str) -> None:
        await self._run(ops.delete(ops.FILTERS, filter_id))


class Subscriptions(_Resource):
    async def create(
        self, target_id: str, filter_id: str, *, active: bool = True, idempotency_key: str | None = None
    ) -> Subscription:
        body = {"target_id": target_id, "filter_id": filter_id, "active": active}
        return await self._run(ops.create(ops.SUBSCRIPTIONS, Subscription, body, idempotency_key))

    async def get(self, subscription_id: str) -> Subscription:
        return await self._run(ops.get(ops.SUBSCRIPTIONS, Subscription, subscription_id))

    async def list(self, limit: int | None = None, cursor: str | None = None) -> Page[Subscription]:
        return await self._run(ops.list_of(ops.SUBSCRIPTIONS, Subscription, limit, cursor))

    async def update(self, subscription_id: str, **changes: Any) -> Subscription:
        return await self._run(ops.update(ops.SUBSCRIPTIONS, Subscription, subscription_id, changes))

    async def delete(self, subscription_id: str) -> None:
        await self._run(ops.delete(ops.SUBSCRIPTIONS, subscription_id))


class Secrets(_Resource):
    """The tenant's webhook signing secret."""

    async def get(self) -> SecretStatus:
        return await self._run(ops.secret_status())

    async def create(self) -> SigningSecret:
        return await self._run(ops.create_secret())

    async def rotate(self) -> SigningSecret:
        return await self._run(ops.rotate_secret())

    async def delete(self) -> None:
        await self._run(ops.delete_secret())


class ApiKeys(_Resource):
    async def create(self, name: str) -> CreatedApiKey:
        return await self._run(ops.create_api_key(name))

    async def list(self) -> list[ApiKey]:
        return await self._run(ops.list_api_keys())

    async def revoke(self, key_id: str) -> None:
        await self._run(ops.revoke_api_key(key_id))
