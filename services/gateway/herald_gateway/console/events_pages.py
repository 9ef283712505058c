"""Tenant console: the event log. Events newest first (cursor pages, searched by type pattern
or opened by id), one event with its payload and every delivery it led to (target, job,
status and why one was skipped or failed), and replaying it to every matching subscription or
to one target. All through GET /v1/events, GET /v1/events/{id} and POST /v1/events/{id}/replay.

An event id is the tenant's own text (printable ASCII), so the event's page takes it as a
query parameter (`/console/events/view?id=...`) rather than as a path segment."""

from __future__ import annotations

from typing import Any
from urllib.parse import quote, urlencode

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from herald_gateway.console.base import Visit, flash_redirect
from herald_gateway.console.layout import badge, choice, facts, field, form, search_form, section, stamp, submit, table
from herald_gateway.console.markup import Html, tag
from herald_gateway.console.payloads import payload_block
from herald_gateway.console.tenant import TENANT_CONSOLE as CONSOLE

router = APIRouter(include_in_schema=False)
PAGE_SIZE = "50"


def event_href(event_id: str) -> str:
    return "/console/events/view?" + urlencode({"id": event_id})


def api_path(event_id: str) -> str:
    return f"/v1/events/{quote(event_id, safe='')}"


def event_search(visit: Visit) -> Html:
    return search_form(
        "/console/events",
        field(
            "Event type",
            "event_type",
            visit.value("event_type"),
            hint="Exact (orders.created.v1), a prefix wildcard (orders.*) or *.",
        ),
        field("Event id", "id", visit.value("id"), hint="Opens that event."),
    )


def event_rows(events: list[dict[str, Any]]) -> Html:
    rows = [
        [
            tag("a", e["id"], href=event_href(e["id"]), class_="mono wrap"),
            tag("span", e["event_type"], class_="mono wrap"),
            stamp(e.get("created_at")),
            tag("span", e.get("ordering_key") or "—", class_="mono wrap"),
        ]
        for e in events
    ]
    return table("Events", ["Event", "Type", "Received", "Ordering key"], rows, id="events-rows")


async def events_page(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    event_id = visit.value("id")
    if event_id:
        async with visit.api() as api:
            found = await api.get(api_path(event_id))
        if found.ok:
            return RedirectResponse(event_href(event_id), status_code=303)
        listing: dict[str, Any] = {"data": []}
        problem: str | None = f"No event {event_id!r}: {found.problem}"
    else:
        answer = await CONSOLE.fetch_page(
            visit, "Events", "/v1/events", {"event_type": visit.value("event_type"), "limit": PAGE_SIZE}
        )
        listing, problem = answer.body, None
    more = listing.get("next_cursor")
    query = urlencode({k: v for k, v in (("event_type", visit.value("event_type")), ("cursor", more)) if v})
    body = [
        tag("p", "Every event you published, newest first, with what became of each delivery."),
        event_search(visit),
        event_rows(listing["data"]),
        tag("a", "Older events", href=f"/console/events?{query}") if more else None,
    ]
    return CONSOLE.show(visit, "Events", body, error=problem, status=404 if problem else 200)


def delivery_rows(deliveries: list[dict[str, Any]], urls: dict[str, str]) -> Html:
    rows = [
        [
            tag(
                "a",
                urls.get(d["target_id"], d["target_id"]),
                href=f"/console/targets/{d['target_id']}",
                class_="mono wrap",
            )
            if d.get("target_id")
            else "—",
            tag("a", d["job_id"], href=f"/console/jobs/{d['job_id']}", class_="mono"),
            badge(d["status"]),
            tag("span", d.get("reason") or "", class_="wrap"),
        ]
        for d in deliveries
    ]
    return table("Deliveries", ["Target", "Job", "Status", "Reason"], rows, id="deliveries")


def replay_form(event_id: str, csrf: str, urls: dict[str, str]) -> Html:
    return form(
        "/console/events/replay",
        csrf,
        tag("input", type="hidden", name="id", value=event_id),
        choice("Send to", "target_id", [("", "every subscription matching it today"), *urls.items()]),
        submit("Replay"),
        class_="stack",
    )


async def target_urls(visit: Visit) -> dict[str, str]:
    async with visit.api() as api:
        answer = await api.get("/v1/webhooks/targets", {"limit": "200"})
    return {t["id"]: t["url"] for t in answer.body["data"]} if answer.ok else {}


async def show_event(visit: Visit, notice: str | None = None, error: str | None = None, status: int = 200) -> Response:
    event_id = visit.value("id")
    event = (await CONSOLE.fetch(visit, "Event", api_path(event_id))).body
    urls = await target_urls(visit)
    body = [
        facts(
            [
                ("Event id", tag("span", event["id"], class_="mono wrap")),
                ("Type", tag("span", event["event_type"], class_="mono wrap")),
                ("Received", stamp(event.get("created_at"))),
                ("Ordering key", event.get("ordering_key") or "—"),
            ],
            id="event-facts",
        ),
        section("Payload", payload_block(event)),
        section("Deliveries", delivery_rows(event.get("deliveries") or [], urls)),
        section(
            "Replay",
            tag("p", "Sends the event again, with its payload, as new jobs (counted like any submission)."),
            replay_form(event["id"], visit.session.csrf, urls),
        ),
        tag("a", "Back to events", href="/console/events"),
    ]
    return CONSOLE.show(visit, f"Event {event['event_type']}", body, notice=notice, error=error, status=status)


async def event_page(request: Request) -> Response:
    return await show_event(await CONSOLE.visit(request))


def replayed(answer: dict[str, Any]) -> str:
    jobs = [d["job_id"] for d in answer.get("deliveries") or []]
    return f"Replayed to {len(jobs)} target(s): " + (", ".join(jobs) if jobs else "no subscription matches it today.")


async def replay_event(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    event_id = visit.value("id")
    target_id = visit.value("target_id")
    async with visit.api() as api:
        answer = await api.call("POST", f"{api_path(event_id)}/replay", json={"target_id": target_id or None})
    if not answer.ok:
        return await show_event(visit, error=answer.problem, status=answer.status)
    return flash_redirect(visit, event_href(event_id), replayed(answer.body))


PAGES = (
    ("/console/events", events_page, "GET"),
    ("/console/events/view", event_page, "GET"),
    ("/console/events/replay", replay_event, "POST"),
)
CONSOLE.add_pages(router, PAGES)
