"""Tenant console: webhook targets, filters and subscriptions (create, edit, enable,
disable, delete, recover a target since a time), through /v1/targets, /v1/filters and
/v1/subscriptions."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Request
from starlette.responses import Response

from herald_gateway.console.base import Visit, act, page_at
from herald_gateway.console.forms import FormError, header_lines, utc_time, word_list
from herald_gateway.console.layout import area, badge, choice, field, folded_form, form, section, stamp, submit, table
from herald_gateway.console.markup import Html, join, tag
from herald_gateway.console.rows import value_form
from herald_gateway.console.tenant import TENANT_CONSOLE as CONSOLE

router = APIRouter(include_in_schema=False)


def header_text(headers: dict[str, str]) -> str:
    return "\n".join(f"{k}: {v}" for k, v in headers.items())


def toggle(action: str, csrf: str, enabled: bool, field_name: str) -> Html:
    value = "false" if enabled else "true"
    return value_form(action, csrf, field_name, value, "Disable" if enabled else "Enable", class_="small quiet")


def delete_button(action: str, csrf: str, what: str) -> Html:
    return form(action, csrf, submit("Delete", class_="small danger"), class_="inline", data_confirm=f"Delete {what}?")


def row_actions(path: str, csrf: str, on: bool, field_name: str, edit: str, what: str) -> Html:
    """A row's switch, edit link and delete button, for the resource at `path` (its page)."""
    return tag(
        "div",
        toggle(f"{path}/update", csrf, on, field_name),
        tag("a", edit, href=path),
        delete_button(f"{path}/delete", csrf, what),
        class_="actions",
    )


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
            join([badge("enabled" if t["enabled"] else "disabled"), " ", t.get("disabled_reason") or ""]),
            stamp(t.get("failing_since")),
            row_actions(f"/console/targets/{t['id']}", csrf, t["enabled"], "enabled", "Edit / recover", "this target"),
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
            table("Targets", ["URL", "Description", "Headers", "State", "Failing since", ""], target_rows),
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
    # The target's own page sends `back`: it is shown again, the list otherwise.
    return await act(visit, target_view if visit.value("back") else show, "PATCH", path, done, patch)


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


@page_at("/console/targets/{item_id}")
async def target_view(visit: Visit, notice: str | None = None, error: str | None = None, status: int = 200) -> Response:
    target_id, t = await CONSOLE.fetch_item(visit, "Target", "/v1/webhooks/targets/{}")
    csrf = visit.session.csrf
    body = [
        tag("p", badge("enabled" if t["enabled"] else "disabled"), " ", t.get("disabled_reason") or ""),
        toggle(f"/console/targets/{target_id}/update", csrf, t["enabled"], "enabled"),
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
        ),
        section(
            "Recover",
            tag("p", "Runs again every delivery to this target that failed at or after this time."),
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


def tested(answer: dict[str, Any]) -> str:
    if answer.get("status_code") is None:
        return f"No answer after {answer['duration_ms']} ms: {answer.get('error') or 'unknown'}."
    excerpt = (answer.get("response_excerpt") or "")[:200]
    return f"The receiver answered {answer['status_code']} in {answer['duration_ms']} ms: {excerpt or '(empty)'}"


async def test_target(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    return await act(visit, target_view, "POST", f"/v1/webhooks/targets/{request.path_params['item_id']}/test", tested)


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
    ("/console/targets/{item_id}", target_page, "GET"),
    ("/console/targets/{item_id}/update", update_target, "POST"),
    ("/console/targets/{item_id}/recover", recover_target, "POST"),
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
