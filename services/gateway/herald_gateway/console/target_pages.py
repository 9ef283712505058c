"""Tenant console: one webhook target's page: its health (enabled or why not, failing since,
the breaker's state, the last delivery that succeeded), editing it, a test event, and recovering
what failed or was skipped, through /v1/webhooks/targets/{id} and GET /v1/jobs."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from herald_gateway.console.base import Visit, act, page_at
from herald_gateway.console.forms import header_text, utc_time
from herald_gateway.console.layout import area, badge, facts, field, form, section, stamp, submit
from herald_gateway.console.markup import Html, join, tag
from herald_gateway.console.rows import toggle
from herald_gateway.console.tenant import TENANT_CONSOLE as CONSOLE

router = APIRouter(include_in_schema=False)


def state_of(target: dict[str, Any]) -> Html:
    enabled = badge("enabled" if target["enabled"] else "disabled")
    return join([enabled, " ", target.get("disabled_reason") or ""])


def breaker_of(target: dict[str, Any]) -> Html:
    """The breaker's state as the senders last noted it (TargetOut.breaker)."""
    if target.get("breaker") == "open":
        return join([badge("open"), " deliveries held back until a probe succeeds"])
    return badge("closed")


async def health_view(visit: Visit, target: dict[str, Any]) -> Html:
    return facts(
        [
            ("State", state_of(target)),
            ("Failing since", stamp(target.get("failing_since"))),
            ("Breaker", breaker_of(target)),
            ("Last success", stamp(target.get("last_success_at")) if target.get("last_success_at") else "none yet"),
        ],
        id="target-health",
    )


@page_at("/console/targets/{item_id}")
async def target_view(visit: Visit, notice: str | None = None, error: str | None = None, status: int = 200) -> Response:
    target_id, t = await CONSOLE.fetch_item(visit, "Target", "/v1/webhooks/targets/{}")
    csrf = visit.session.csrf
    body = [
        section(
            "Health",
            await health_view(visit, t),
            toggle(f"/console/targets/{target_id}/update", csrf, t["enabled"], "enabled"),
        ),
        section(
            "Edit",
            form(
                f"/console/targets/{target_id}/update",
                csrf,
                tag("input", type="hidden", name="back", value="1"),
                field("URL", "url", t["url"], required=True, type="url"),
                field("Description", "description", t.get("description") or ""),
                area(
                    "Headers",
                    "headers",
                    header_text(t.get("headers") or {}),
                    hint="One 'Name: value' per line. Values show masked; one left as shown keeps its value.",
                ),
                field(
                    "Rate limit per minute",
                    "rate_limit_per_min",
                    str(t["rate_limit_per_min"]) if t.get("rate_limit_per_min") else "",
                    type="number",
                    min="1",
                ),
                submit("Save"),
                class_="stack",
            ),
        ),
        section(
            "Test",
            tag("p", "Sends a signed herald.ping event to this target now and shows what it answered."),
            form(f"/console/targets/{target_id}/test", csrf, submit("Send a test event"), class_="stack"),
            tag("p", "A disabled target is tested all the same: the test is not a delivery.", class_="muted"),
        ),
        section(
            "Recover",
            tag(
                "p",
                "Runs again every delivery to this target that failed, or was skipped (the target disabled, "
                "the subscription paused), at or after this time: after enabling it again, what it missed.",
            ),
            form(
                f"/console/targets/{target_id}/recover",
                csrf,
                field("Failed since (UTC)", "since", required=True, type="datetime-local", step="1"),
                submit("Recover"),
                class_="stack",
            ),
        ),
        tag("a", "Back to webhooks", href="/console/webhooks"),
    ]
    return CONSOLE.show(visit, f"Target {t['url']}", body, notice=notice, error=error, status=status)


async def target_page(request: Request) -> Response:
    return await target_view(await CONSOLE.visit(request))


async def recover_target(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    path = f"/v1/webhooks/targets/{request.path_params['item_id']}/recover"
    body = {"since": utc_time(visit.value("since"))}
    return await act(visit, target_view, "POST", path, lambda out: f"Recovering {out['recovered']} deliveries.", body)


PAGES = (
    ("/console/targets/{item_id}", target_page, "GET"),
    ("/console/targets/{item_id}/recover", recover_target, "POST"),
)
CONSOLE.add_pages(router, PAGES)
