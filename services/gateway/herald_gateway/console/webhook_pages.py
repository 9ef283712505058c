"""Tenant console: webhook targets (with their health, and a test event each), filters and
subscriptions (create, edit, enable, disable, delete), through /v1/webhooks/targets,
/v1/webhooks/filters and /v1/webhooks/subscriptions. A target's own page: target_pages."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from herald_gateway.console.base import Visit, act, page_at
from herald_gateway.console.forms import FormError, header_lines, header_text, word_list
from herald_gateway.console.layout import area, badge, choice, field, folded_form, form, section, stamp, submit, table
from herald_gateway.console.markup import join, tag
from herald_gateway.console.rows import delete_button, row_actions, value_form
from herald_gateway.console.target_pages import breaker_of, state_of, target_view
from herald_gateway.console.tenant import TENANT_CONSOLE as CONSOLE

router = APIRouter(include_in_schema=False)


async def listing(visit: Visit) -> tuple[list[Any], list[Any], list[Any], str | None]:
    async with visit.api() as api:
        answers = [
            await api.get(path, {"limit": "200"})
            for path in ("/v1/webhooks/targets", "/v1/webhooks/filters", "/v1/webhooks/subscriptions")
        ]
    problem = next((a.problem for a in answers if not a.ok), None)
    if problem:
        return [], [], [], problem
    return answers[0].body["data"], answers[1].body["data"], answers[2].body["data"], None


@page_at("/console/webhooks")
async def show(visit: Visit, notice: str | None = None, error: str | None = None, status: int = 200) -> Response:
    targets, filters, subscriptions, problem = await listing(visit)
    csrf = visit.session.csrf
    urls = {t["id"]: t["url"] for t in targets}
    kinds = {f["id"]: ", ".join(f["event_types"]) for f in filters}
    target_rows = [
        [
            tag("a", t["url"], href=f"/console/targets/{t['id']}", class_="mono wrap"),
            t.get("description"),
            tag("pre", header_text(t.get("headers") or {}), class_="excerpt") if t.get("headers") else "—",
            state_of(t),
            stamp(t.get("last_success_at")),
            stamp(t.get("failing_since")),
            breaker_of(t),
            join(
                [
                    row_actions(
                        f"/console/targets/{t['id']}", csrf, t["enabled"], "enabled", "Edit / recover", "this target"
                    ),
                    value_form(
                        f"/console/targets/{t['id']}/test", csrf, "from", "webhooks", "Send test", class_="small quiet"
                    ),
                ]
            ),
        ]
        for t in targets
    ]
    filter_rows = [
        [
            tag("a", f["id"], href=f"/console/filters/{f['id']}", class_="mono"),
            f.get("description"),
            tag("span", ", ".join(f["event_types"]), class_="mono wrap"),
            delete_button(f"/console/filters/{f['id']}/delete", csrf, "this filter"),
        ]
        for f in filters
    ]
    subscription_rows = [
        [
            tag("span", urls.get(s["target_id"], s["target_id"]), class_="mono wrap"),
            tag("span", kinds.get(s["filter_id"], s["filter_id"]), class_="mono wrap"),
            badge("enabled" if s["active"] else "disabled"),
            row_actions(f"/console/subscriptions/{s['id']}", csrf, s["active"], "active", "Edit", "this subscription"),
        ]
        for s in subscriptions
    ]
    body = [
        section(
            "Targets",
            table(
                "Targets",
                ["URL", "Description", "Headers", "State", "Last success", "Failing since", "Breaker", ""],
                target_rows,
            ),
            folded_form(
                "New target",
                "/console/targets",
                csrf,
                field("URL", "url", required=True, type="url", id_prefix="target-"),
                field("Description", "description", id_prefix="target-"),
                area(
                    "Headers",
                    "headers",
                    hint="One 'Name: value' per line, sent with every delivery.",
                    id_prefix="target-",
                ),
                submit("Create target"),
            ),
        ),
        section(
            "Filters",
            table("Filters", ["Filter", "Description", "Event types", ""], filter_rows),
            folded_form(
                "New filter",
                "/console/filters",
                csrf,
                field(
                    "Event types",
                    "event_types",
                    required=True,
                    hint="Comma-separated, e.g. orders.created.v1, payments.*",
                    id_prefix="filter-",
                ),
                field("Description", "description", id_prefix="filter-"),
                submit("Create filter"),
            ),
        ),
        section(
            "Subscriptions",
            table("Subscriptions", ["Target", "Event types", "State", ""], subscription_rows),
            folded_form(
                "New subscription",
                "/console/subscriptions",
                csrf,
                choice("Target", "target_id", [(t["id"], t["url"]) for t in targets], id_prefix="sub-"),
                choice("Filter", "filter_id", list(kinds.items()), id_prefix="sub-"),
                submit("Subscribe"),
            )
            if targets and filters
            else tag("p", "Create a target and a filter first.", class_="empty"),
        ),
    ]
    return CONSOLE.show(visit, "Webhooks", body, notice=notice, error=error or problem, status=status)


async def webhooks_page(request: Request) -> Response:
    return await show(await CONSOLE.visit(request))


async def create_target(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    try:
        headers = header_lines(visit.value("headers"))
    except FormError as error:
        return await show(visit, error=str(error), status=422)
    body = {"url": visit.value("url"), "description": visit.value("description"), "headers": headers}
    return await act(visit, show, "POST", "/v1/webhooks/targets", "Target created.", body)


def patch_of(visit: Visit) -> dict[str, Any]:
    """Only the fields the form sent."""
    patch: dict[str, Any] = {}
    for name in ("url", "description"):
        if name in visit.form:
            patch[name] = visit.value(name)
    if "headers" in visit.form:
        patch["headers"] = header_lines(visit.value("headers"))
    if "rate_limit_per_min" in visit.form and visit.value("rate_limit_per_min"):
        patch["rate_limit_per_min"] = int(visit.value("rate_limit_per_min"))
    for name in ("target_id", "filter_id"):
        if name in visit.form:
            patch[name] = visit.value(name)
    for name in ("enabled", "active"):
        if name in visit.form:
            patch[name] = visit.value(name) == "true"
    return patch


async def update(visit: Visit, path: str, done: str) -> Response:
    try:
        patch = patch_of(visit)
    except (FormError, ValueError) as error:
        return await show(visit, error=str(error), status=422)
    # The target's own page sends `back`: it is shown again, the list otherwise. A target enabled
    # again goes to its page, which offers to recover what it missed while disabled.
    enabled_again = path.startswith("/v1/webhooks/targets/") and patch.get("enabled") is True
    if enabled_again:
        done = "Target enabled. Recover below what failed or was skipped while it was disabled."
    page = target_view if visit.value("back") or enabled_again else show
    return await act(visit, page, "PATCH", path, done, patch)


async def update_target(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    return await update(visit, f"/v1/webhooks/targets/{request.path_params['item_id']}", "Target saved.")


async def update_subscription(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    return await update(visit, f"/v1/webhooks/subscriptions/{request.path_params['item_id']}", "Subscription saved.")


async def create_filter(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    body = {"event_types": word_list(visit.value("event_types")), "description": visit.value("description")}
    return await act(visit, show, "POST", "/v1/webhooks/filters", "Filter created.", body)


async def update_filter(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    body = {"event_types": word_list(visit.value("event_types")), "description": visit.value("description")}
    path = f"/v1/webhooks/filters/{request.path_params['item_id']}"
    return await act(visit, show, "PATCH", path, "Filter saved.", body)


async def create_subscription(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    body = {"target_id": visit.value("target_id"), "filter_id": visit.value("filter_id"), "active": True}
    return await act(visit, show, "POST", "/v1/webhooks/subscriptions", "Subscribed.", body)


def deleter(kind: str, label: str) -> Any:
    async def delete(request: Request) -> Response:
        visit = await CONSOLE.visit(request)
        path = f"/v1/webhooks/{kind}/{request.path_params['item_id']}"
        return await act(visit, show, "DELETE", path, f"{label} deleted.")

    delete.__name__ = f"delete_{kind}"
    return delete


def tested(answer: dict[str, Any]) -> str:
    """A test event's outcome as one notice: when, the status or why none, and the answer's start."""
    sent = (answer.get("sent_at") or "")[:19].replace("T", " ")
    if answer.get("status_code") is None:
        why = answer.get("error") or "unknown"
        return f"Test event sent {sent} UTC: no answer after {answer['duration_ms']} ms: {why}."
    excerpt = (answer.get("response_excerpt") or "")[:200]
    return (
        f"Test event sent {sent} UTC: the receiver answered {answer['status_code']} in {answer['duration_ms']} ms: "
        f"{excerpt or '(empty)'}"
    )


async def test_target(request: Request) -> Response:
    """From the webhooks page (`from=webhooks`) the outcome shows there, from the target's page on it."""
    visit = await CONSOLE.visit(request)
    back = show if visit.value("from") == "webhooks" else target_view
    return await act(visit, back, "POST", f"/v1/webhooks/targets/{request.path_params['item_id']}/test", tested)


async def subscription_page(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    subscription_id = request.path_params["item_id"]
    async with visit.api() as api:
        answer = await api.get(f"/v1/webhooks/subscriptions/{subscription_id}")
        targets, filters, _, problem = await listing(visit)
    if not answer.ok or problem:
        return CONSOLE.show(visit, "Subscription", "", error=problem or answer.problem, status=answer.status)
    current = answer.body
    body = [
        form(
            f"/console/subscriptions/{subscription_id}/update",
            visit.session.csrf,
            choice("Target", "target_id", [(t["id"], t["url"]) for t in targets], current["target_id"]),
            choice(
                "Filter", "filter_id", [(f["id"], ", ".join(f["event_types"])) for f in filters], current["filter_id"]
            ),
            submit("Save"),
            class_="stack",
        ),
        tag("a", "Back to webhooks", href="/console/webhooks"),
    ]
    return CONSOLE.show(visit, "Subscription", body)


async def filter_page(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    filter_id, f = await CONSOLE.fetch_item(visit, "Filter", "/v1/webhooks/filters/{}")
    body = [
        form(
            f"/console/filters/{filter_id}/update",
            visit.session.csrf,
            field("Event types", "event_types", ", ".join(f["event_types"]), required=True, hint="Comma-separated."),
            field("Description", "description", f.get("description") or ""),
            submit("Save"),
            class_="stack",
        ),
        tag("a", "Back to webhooks", href="/console/webhooks"),
    ]
    return CONSOLE.show(visit, f"Filter {filter_id}", body)


PAGES = (
    ("/console/webhooks", webhooks_page, "GET"),
    ("/console/targets", create_target, "POST"),
    ("/console/targets/{item_id}/update", update_target, "POST"),
    ("/console/targets/{item_id}/test", test_target, "POST"),
    ("/console/targets/{item_id}/delete", deleter("targets", "Target"), "POST"),
    ("/console/filters", create_filter, "POST"),
    ("/console/filters/{item_id}", filter_page, "GET"),
    ("/console/filters/{item_id}/update", update_filter, "POST"),
    ("/console/filters/{item_id}/delete", deleter("filters", "Filter"), "POST"),
    ("/console/subscriptions", create_subscription, "POST"),
    ("/console/subscriptions/{item_id}", subscription_page, "GET"),
    ("/console/subscriptions/{item_id}/update", update_subscription, "POST"),
    ("/console/subscriptions/{item_id}/delete", deleter("subscriptions", "Subscription"), "POST"),
)
CONSOLE.add_pages(router, PAGES)
