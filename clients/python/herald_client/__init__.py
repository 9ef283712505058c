"""Herald's Python SDK: `Herald` (sync) and `AsyncHerald` over httpx, typed models, errors that
carry the problem details, automatic Idempotency-Keys and retries that honour Retry-After.

    from herald_client import Herald

    with Herald(api_key="hk_live_...", base_url="http://127.0.0.1:8080") as herald:
        job = herald.webhooks.send(url="https://example.com/hook", payload={"hello": "world"})
        print(herald.jobs.get(job.id).status)

Receivers verify what Herald delivers with `herald_webhooks` (in the same distribution).
"""

from herald_client._http import RetryPolicy
from herald_client.aio import AsyncHerald
from herald_client.client import Herald
from herald_client.errors import (
    ApiError,
    AuthenticationError,
    ConflictError,
    HeraldConnectionError,
    HeraldError,
    InvalidRequestError,
    NotFoundError,
    RateLimitedError,
    UnavailableError,
)
from herald_client.models import (
    ApiKey,
    Attempt,
    CreatedApiKey,
    Delivery,
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

__all__ = [
    "ApiError",
    "ApiKey",
    "AsyncHerald",
    "Attempt",
    "AuthenticationError",
    "ConflictError",
    "CreatedApiKey",
    "Delivery",
    "EventAccepted",
    "Filter",
    "Herald",
    "HeraldConnectionError",
    "HeraldError",
    "InvalidRequestError",
    "Job",
    "JobAccepted",
    "NotFoundError",
    "Page",
    "RateLimitedError",
    "RetryPolicy",
    "RotatedSecret",
    "SecretStatus",
    "SigningSecret",
    "Subscription",
    "Target",
    "TargetSecret",
    "TargetTest",
    "UnavailableError",
]
