"""Tenant console: what a webhook job sent, on its page (the request's URL, its headers masked
as the API reads them back, its payload, the event it delivers and the signature headers of
each attempt), and the button that resends a delivered or failed job (POST /v1/jobs/{id}/resend).

Signature headers are made afresh by the webhook-sender right before each call and are not
recorded, so the page shows what is known of them: `webhook-id` is the job id, and
`webhook-timestamp` is the second the attempt started (the sender signs, then calls)."""

from __future__ import annotations

from datetime import datetime
from typing import Any

from herald_gateway.console.base import Visit
from herald_gateway.console.events_pages import api_path, event_href
from herald_gateway.console.layout import facts, form, section, submit, table
from herald_gateway.console.markup import Html, join, tag
from herald_gateway.console.payloads import payload_block

RESENDABLE = frozenset({"delivered", "failed"})
SIGNED_AFRESH = "Each attempt is signed afresh right before its call; the signature headers are not recorded. "
# How webhook-signature is made, by whose keys the job is signed.
TARGET_SIGNING = (
    "webhook-signature (Standard Webhooks) carries v1,<base64 HMAC-SHA256 of id.timestamp.body> for each of "
    "the target's own keys that signs (its current key, and rotated-out ones until their end) and "
    "v1a,<Ed25519 signature> for a key pair, space-separated (a target from before targets had keys is signed "
    "with your signing secret too, until its first rotation); GET /v1/webhooks/targets/{id}/secret reads the key."
)
DIRECT_SIGNING = (
    "With your signing secret, webhook-signature carries v1,<base64 HMAC-SHA256 of id.timestamp.body> and "
    "X-Webhook-Timestamp / X-Webhook-Signature (hex HMAC-SHA256 of timestamp.body) come beside it; without "
    "one the webhook goes out unsigned."
)


def resend_button(job: dict[str, Any], csrf: str) -> Html | None:
    if job.get("channel") != "webhook" or job.get("status") not in RESENDABLE:
        return None
    return form(f"/console/jobs/{job['id']}/resend", csrf, submit("Resend", class_="small"), class_="inline")


def unix_second(value: str | None) -> str:
    if not value:
        return "—"
    return str(int(datetime.fromisoformat(value.replace("Z", "+00:00")).timestamp()))


def signature_rows(job: dict[str, Any]) -> Html:
    rows = [
        [
            a.get("number"),
            tag("span", job["id"], class_="mono"),
            tag("span", unix_second(a.get("started_at")), class_="mono"),
        ]
        for a in job.get("attempts") or []
    ]
    return table("Signature headers", ["Attempt", "webhook-id", "webhook-timestamp"], rows, id="signature-headers")


async def event_type_of(visit: Visit, event_id: str) -> str | None:
    async with visit.api() as api:
        answer = await api.get(api_path(event_id))
    return answer.body["event_type"] if answer.ok else None


async def sent_view(visit: Visit, job: dict[str, Any]) -> Html | None:
    """The "What was sent" section of a webhook job's page (None for an email)."""
    if job.get("channel") != "webhook":
        return None
    event: Html | str = "— (a direct webhook)"
    if job.get("event_id"):
        event_type = await event_type_of(visit, job["event_id"])
        event = join(
            [
                tag("span", event_type or "(event no longer kept)", class_="mono"),
                " · ",
                tag("a", job["event_id"], href=event_href(job["event_id"]), class_="mono wrap"),
            ]
        )
    headers = job.get("headers") or {}
    origin = job.get("origin_job_id")
    return section(
        "What was sent",
        facts(
            [
                ("URL", tag("span", job.get("url") or "—", class_="mono wrap")),
                ("Event", event),
                ("Resend of", tag("a", origin, href=f"/console/jobs/{origin}", class_="mono") if origin else "—"),
            ],
            id="sent-facts",
        ),
        table(
            "Request headers (values masked)",
            ["Name", "Value"],
            [[tag("span", k, class_="mono"), tag("span", v, class_="mono wrap")] for k, v in headers.items()],
            id="sent-headers",
        ),
        signature_rows(job),
        tag("p", SIGNED_AFRESH, TARGET_SIGNING if job.get("target_id") else DIRECT_SIGNING, class_="muted"),
        tag("h3", "Payload"),
        payload_block(job, "sent-payload"),
    )
