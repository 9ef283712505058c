"""What each tenant call needs of its API key, written once for both surfaces.

A key carries scopes (`ApiKey.scopes`): `send` (submitting work), `read` (every GET), `manage`
(configuration: targets, filters, subscriptions, providers, domains, the signing secret, the
retry schedule, inbound settings, suppressions), `keys` (the tenant's API keys) and `console`
(signing in to the browser console). A key created without scopes has them all, as every key
made before scopes existed has.

HTTP routes are named by (method, route template); every GET needs `read` unless listed. An RPC
of NotificationService needs what its HTTP twin needs (`RPC_TWINS`), so the two surfaces cannot
disagree. The scopes come with the cached key lookup (`Principal.scopes`): the check is a dict
lookup and a set membership, nothing on the submit path waits for it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, MutableMapping
from typing import Any

from herald_gateway.errors import OutOfScope

SEND, READ, MANAGE, KEYS, CONSOLE = "send", "read", "manage", "keys", "console"
SCOPES = (SEND, READ, MANAGE, KEYS, CONSOLE)
ALL_SCOPES = frozenset(SCOPES)

Route = tuple[str, str]

# Every tenant route that is not a plain read, and the scope it needs.
ROUTE_SCOPES: dict[Route, str] = {
    ("POST", "/v1/webhooks"): SEND,
    ("POST", "/v1/webhooks/batch"): SEND,
    ("POST", "/v1/emails"): SEND,
    ("POST", "/v1/emails/batch"): SEND,
    ("POST", "/v1/events"): SEND,
    ("POST", "/v1/events/batch"): SEND,
    ("POST", "/v1/events/{event_id}/replay"): SEND,
    ("POST", "/v1/jobs/{job_id}/resend"): SEND,
    # Running jobs again creates work, as a submission does; it changes no configuration.
    ("POST", "/v1/jobs/{job_id}/retry"): SEND,
    ("POST", "/v1/webhooks/targets/{target_id}/recover"): SEND,
    ("POST", "/v1/webhooks/targets"): MANAGE,
    ("PATCH", "/v1/webhooks/targets/{target_id}"): MANAGE,
    ("DELETE", "/v1/webhooks/targets/{target_id}"): MANAGE,
    # A target's signing secret is read back whole: not for a key that only reads.
    ("GET", "/v1/webhooks/targets/{target_id}/secret"): MANAGE,
    ("POST", "/v1/webhooks/targets/{target_id}/secret/rotate"): MANAGE,
    ("POST", "/v1/webhooks/targets/{target_id}/test"): MANAGE,
    ("PUT", "/v1/webhooks/retry-schedule"): MANAGE,
    ("POST", "/v1/webhooks/filters"): MANAGE,
    ("PATCH", "/v1/webhooks/filters/{filter_id}"): MANAGE,
    ("DELETE", "/v1/webhooks/filters/{filter_id}"): MANAGE,
    ("POST", "/v1/webhooks/subscriptions"): MANAGE,
    ("PATCH", "/v1/webhooks/subscriptions/{subscription_id}"): MANAGE,
    ("DELETE", "/v1/webhooks/subscriptions/{subscription_id}"): MANAGE,
    ("POST", "/v1/suppressions"): MANAGE,
    ("DELETE", "/v1/suppressions/{address}"): MANAGE,
    ("POST", "/v1/providers"): MANAGE,
    ("PATCH", "/v1/providers/{provider_id}"): MANAGE,
    ("DELETE", "/v1/providers/{provider_id}"): MANAGE,
    ("POST", "/v1/domains"): MANAGE,
    ("POST", "/v1/domains/{domain_id}/verify"): MANAGE,
    ("DELETE", "/v1/domains/{domain_id}"): MANAGE,
    ("POST", "/v1/webhook-secret"): MANAGE,
    ("DELETE", "/v1/webhook-secret"): MANAGE,
    ("POST", "/v1/webhook-secret/rotate"): MANAGE,
    ("PUT", "/v1/inbound/{provider}"): MANAGE,
    ("DELETE", "/v1/inbound/{provider}"): MANAGE,
    # Taking a payload out destroys a record (and is audited): a key that only sends may not.
    ("DELETE", "/v1/jobs/{job_id}/payload"): MANAGE,
    ("DELETE", "/v1/events/{event_id}/payload"): MANAGE,
    ("POST", "/v1/api-keys"): KEYS,
    ("GET", "/v1/api-keys"): KEYS,
    ("DELETE", "/v1/api-keys/{key_id}"): KEYS,
    # The console's sign-in check: the calling key, its scopes.
    ("GET", "/v1/api-keys/current"): CONSOLE,
}

# Each NotificationService RPC and its HTTP twin: it needs what the twin needs.
RPC_TWINS: dict[str, Route] = {
    "SendWebhook": ("POST", "/v1/webhooks"),
    "SendEmail": ("POST", "/v1/emails"),
    "PublishEvent": ("POST", "/v1/events"),
    "SubmitWebhooks": ("POST", "/v1/webhooks/batch"),
    "SubmitEmails": ("POST", "/v1/emails/batch"),
    "RetryJob": ("POST", "/v1/jobs/{job_id}/retry"),
    "RecoverWebhookTarget": ("POST", "/v1/webhooks/targets/{target_id}/recover"),
    "GetJob": ("GET", "/v1/jobs/{job_id}"),
    "ListJobs": ("GET", "/v1/jobs"),
    "CreateWebhookTarget": ("POST", "/v1/webhooks/targets"),
    "GetWebhookTarget": ("GET", "/v1/webhooks/targets/{target_id}"),
    "ListWebhookTargets": ("GET", "/v1/webhooks/targets"),
    "UpdateWebhookTarget": ("PATCH", "/v1/webhooks/targets/{target_id}"),
    "DeleteWebhookTarget": ("DELETE", "/v1/webhooks/targets/{target_id}"),
    "CreateEventFilter": ("POST", "/v1/webhooks/filters"),
    "GetEventFilter": ("GET", "/v1/webhooks/filters/{filter_id}"),
    "ListEventFilters": ("GET", "/v1/webhooks/filters"),
    "UpdateEventFilter": ("PATCH", "/v1/webhooks/filters/{filter_id}"),
    "DeleteEventFilter": ("DELETE", "/v1/webhooks/filters/{filter_id}"),
    "CreateSubscription": ("POST", "/v1/webhooks/subscriptions"),
    "GetSubscription": ("GET", "/v1/webhooks/subscriptions/{subscription_id}"),
    "ListSubscriptions": ("GET", "/v1/webhooks/subscriptions"),
    "UpdateSubscription": ("PATCH", "/v1/webhooks/subscriptions/{subscription_id}"),
    "DeleteSubscription": ("DELETE", "/v1/webhooks/subscriptions/{subscription_id}"),
    "CreateDomain": ("POST", "/v1/domains"),
    "VerifyDomain": ("POST", "/v1/domains/{domain_id}/verify"),
    "GetDomain": ("GET", "/v1/domains/{domain_id}"),
    "ListDomains": ("GET", "/v1/domains"),
    "GetWebhookRetrySchedule": ("GET", "/v1/webhooks/retry-schedule"),
    "SetWebhookRetrySchedule": ("PUT", "/v1/webhooks/retry-schedule"),
    "GetWebhookTargetSecret": ("GET", "/v1/webhooks/targets/{target_id}/secret"),
    "RotateWebhookTargetSecret": ("POST", "/v1/webhooks/targets/{target_id}/secret/rotate"),
    "TestWebhookTarget": ("POST", "/v1/webhooks/targets/{target_id}/test"),
    "ListEvents": ("GET", "/v1/events"),
    "GetEvent": ("GET", "/v1/events/{event_id}"),
    "PublishEvents": ("POST", "/v1/events/batch"),
    "ReplayEvent": ("POST", "/v1/events/{event_id}/replay"),
    "ResendJob": ("POST", "/v1/jobs/{job_id}/resend"),
    "ExpungeJobPayload": ("DELETE", "/v1/jobs/{job_id}/payload"),
    "ExpungeEventPayload": ("DELETE", "/v1/events/{event_id}/payload"),
}


def route_scope(method: str, path: str) -> str:
    """The scope a tenant route needs (`path`: its template). Reads need `read`."""
    found = ROUTE_SCOPES.get((method, path))
    if found is not None:
        return found
    if method in ("GET", "HEAD"):
        return READ
    raise KeyError(f"{method} {path} has no scope in herald_gateway.scopes")


RPC_SCOPES: dict[str, str] = {rpc: route_scope(*twin) for rpc, twin in RPC_TWINS.items()}
# The listed routes as patterns of raw paths, for a check made before routing (an idempotent replay).
_PATTERNS = [
    (method, re.compile("^" + re.sub(r"\\{[^}]+\\}", "[^/]+", re.escape(path)) + "$"), scope)
    for (method, path), scope in ROUTE_SCOPES.items()
]


def path_scope(method: str, raw_path: str) -> str:
    """The scope of the route a raw path will match (`manage` for one the table does not list:
    a refusal rather than a pass when in doubt)."""
    for listed_method, pattern, scope in _PATTERNS:
        if listed_method == method and pattern.match(raw_path):
            return scope
    return READ if method in ("GET", "HEAD") else MANAGE


def require(scopes: frozenset[str], scope: str) -> None:
    if scope not in scopes:
        raise OutOfScope(scope)


def require_route_scope(asgi_scope: MutableMapping[str, Any], scopes: frozenset[str]) -> None:
    """The HTTP check, from the route the request matched (its template, never the raw path)."""
    if scopes is ALL_SCOPES:
        return
    route = asgi_scope.get("route")
    require(scopes, route_scope(asgi_scope["method"], getattr(route, "path", asgi_scope["path"])))


def require_rpc_scope(rpc: str, scopes: frozenset[str]) -> None:
    if scopes is not ALL_SCOPES:
        require(scopes, RPC_SCOPES[rpc])


def key_scopes(given: Iterable[str]) -> frozenset[str]:
    """A key's scopes as stored: none (a key from before scopes) or all of them is `ALL_SCOPES` itself."""
    found = frozenset(given)
    return ALL_SCOPES if not found or found == ALL_SCOPES else found
