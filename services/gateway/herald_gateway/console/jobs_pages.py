"""Tenant console: jobs (search, live updates), one job's attempts and what it sent, retry,
resend, dead letters, and a form that sends a webhook. All of it through /v1/jobs and /v1/webhooks."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlencode

from fastapi import APIRouter, Request
from starlette.responses import Response

from herald_gateway.console.base import Visit, act, flash_redirect, page_at
from herald_gateway.console.forms import FormError, header_lines, json_value, utc_time
from herald_gateway.console.job_sent import resend_button, sent_view
from herald_gateway.console.layout import (
    area,
    badge,
    choice,
    facts,
    field,
    folded_form,
    form,
    respond,
    search_form,
    section,
    stamp,
    submit,
    table,
)
from herald_gateway.console.markup import Html, join, tag
from herald_gateway.console.tenant import TENANT_CONSOLE as CONSOLE

router = APIRouter(include_in_schema=False)

IN_FLIGHT = frozenset({"pending", "queued", "delivering"})
STATUSES = ["pending", "queued", "delivering", "delivered", "failed", "suppressed", "bounced", "complained"]
CHANNELS = ["webhook", "email", "platform_email"]
FILTERS = ("status", "channel", "created_after", "created_before", "target")


def retry_button(job: dict[str, Any], csrf: str) -> Html | None:
    if job.get("status") != "failed":
        return None
    return form(f"/console/jobs/{job['id']}/retry", csrf, submit("Retry", class_="small"), class_="inline")


def job_rows(jobs: list[dict[str, Any]], csrf: str) -> Html:
    rows = [
        [
            tag("a", job["id"], href=f"/console/jobs/{job['id']}", class_="mono"),
            job.get("channel"),
            badge(job.get("status", "")),
            tag("span", job.get("url") or "—", class_="mono wrap"),
            job.get("attempt_count"),
            stamp(job.get("created_at")),
            tag("span", job.get("last_error") or "", class_="wrap"),
            retry_button(job, csrf),
        ]
        for job in jobs
    ]
    return table(
        "Jobs",
        ["Job", "Channel", "Status", "Target", "Attempts", "Created", "Last error", ""],
        rows,
        id="jobs-rows",
    )


async def find_jobs(visit: Visit) -> tuple[list[dict[str, Any]], str | None, str | None]:
    """The jobs the filters select, the next page's cursor, and an error to show."""
    params = {
        "status": visit.value("status"),
        "channel": visit.value("channel"),
        "created_after": utc_time(visit.value("created_after")),
        "created_before": utc_time(visit.value("created_before")),
        "url": visit.value("target"),
        "cursor": visit.value("cursor"),
        "limit": "50",
    }
    async with visit.api() as api:
        answer = await api.get("/v1/jobs", params)
    if not answer.ok:
        return [], None, answer.problem
    jobs: list[dict[str, Any]] = answer.body["data"]
    return jobs, answer.body.get("next_cursor"), None


def live_region(kind: str, source: str, content: Html, in_flight: bool) -> Html:
    """Re-fetched by console.js every 2 s while something in it is in flight (10 s otherwise)."""
    return tag(
        "div",
        content,
        id=f"{kind}-live",
        data_live=source,
        data_in_flight="1" if in_flight else "0",
        aria_live="polite",
    )


def query_of(visit: Visit) -> str:
    return urlencode({k: visit.value(k) for k in FILTERS if visit.value(k)})


async def jobs_page(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    return await show_jobs(visit)


@page_at("/console/jobs")
async def show_jobs(visit: Visit, notice: str | None = None, error: str | None = None, status: int = 200) -> Response:
    jobs, next_cursor, problem = await find_jobs(visit)
    query = query_of(visit)
    search = search_form(
        "/console/jobs",
        choice("Status", "status", [("", "any"), *((s, s) for s in STATUSES)], visit.value("status")),
        choice("Channel", "channel", [("", "any"), *((c, c) for c in CHANNELS)], visit.value("channel")),
        field("Created after (UTC)", "created_after", visit.value("created_after"), type="datetime-local"),
        field("Created before (UTC)", "created_before", visit.value("created_before"), type="datetime-local"),
        field("Target URL", "target", visit.value("target"), type="url"),
    )
    send = folded_form(
        "Send a webhook",
        "/console/jobs/send",
        visit.session.csrf,
        field("URL", "url", required=True, type="url", placeholder="https://example.com/hooks"),
        area("Payload (JSON)", "payload", '{"hello": "world"}'),
        area("Headers", "headers", hint="One 'Name: value' per line."),
        submit("Send"),
    )
    more = tag("a", "Older jobs", href=f"/console/jobs?{query}&cursor={next_cursor}") if next_cursor else None
    in_flight = any(j.get("status") in IN_FLIGHT for j in jobs)
    live = live_region("jobs", f"/console/jobs/rows?{query}", job_rows(jobs, visit.session.csrf), in_flight)
    return CONSOLE.show(visit, "Jobs", [search, send, live, more], notice=notice, error=error or problem, status=status)


async def jobs_rows(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    jobs, _, problem = await find_jobs(visit)
    in_flight = any(j.get("status") in IN_FLIGHT for j in jobs)
    markup = tag("p", problem, role="alert", class_="error") if problem else job_rows(jobs, visit.session.csrf)
    response = respond(markup)
    response.headers["x-in-flight"] = "1" if in_flight else "0"
    return response


async def send_webhook(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    try:
        body = {
            "url": visit.value("url"),
            "payload": json_value(visit.value("payload")),
            "headers": header_lines(visit.value("headers")),
        }
    except FormError as error:
        return await show_jobs(visit, error=str(error), status=422)
    return await act(
        visit,
        show_jobs,
        "POST",
        "/v1/webhooks",
        lambda job: f"Webhook accepted: job {job['id']} ({job['status']}).",
        body,
    )


def attempt_view(attempt: dict[str, Any]) -> Html:
    headers = attempt.get("response_headers") or {}
    pairs = [
        ("Outcome", badge(attempt.get("outcome", ""))),
        ("Status code", attempt.get("status_code") if attempt.get("status_code") is not None else "—"),
        ("Duration", f"{attempt.get('duration_ms', 0)} ms"),
        ("Error class", attempt.get("error_class") or "—"),
        ("Error", attempt.get("error") or "—"),
        ("Target", tag("span", attempt.get("target") or "", class_="mono wrap")),
        ("Started", stamp(attempt.get("started_at"))),
    ]
    return tag(
        "article",
        tag("h3", f"Attempt {attempt.get('number')}"),
        facts(pairs),
        table("Receiver headers", ["Name", "Value"], [[tag("span", k, class_="mono"), v] for k, v in headers.items()]),
        tag("h4", "Receiver body excerpt"),
        tag("pre", attempt.get("response_excerpt") or "(none)", class_="excerpt"),
        class_="attempt",
        id=f"attempt-{attempt.get('number')}",
    )


def job_view(job: dict[str, Any], csrf: str) -> Html:
    pairs = [
        ("Status", badge(job.get("status", ""))),
        ("Channel", job.get("channel")),
        ("Priority", job.get("priority")),
        ("Target", tag("span", job.get("url") or "—", class_="mono wrap")),
        ("Attempts", job.get("attempt_count")),
        ("Explicit retries", job.get("run")),
        ("Created", stamp(job.get("created_at"))),
        ("Updated", stamp(job.get("updated_at"))),
        ("Next attempt", stamp(job.get("next_attempt_at"))),
        ("Waiting", job.get("waiting_reason") or "—"),
        ("Last error", job.get("last_error") or "—"),
    ]
    attempts = job.get("attempts") or []
    return join(
        [
            facts(pairs, id="job-facts"),
            retry_button(job, csrf),
            resend_button(job, csrf),
            section("Attempts", [attempt_view(a) for a in attempts] or tag("p", "No attempt yet.", class_="empty")),
        ]
    )


async def load_job(visit: Visit) -> tuple[dict[str, Any] | None, str | None, int]:
    async with visit.api() as api:
        answer = await api.get(f"/v1/jobs/{visit.request.path_params['job_id']}")
    if not answer.ok:
        return None, answer.problem, answer.status
    body: dict[str, Any] = answer.body
    return body, None, 200


async def job_page(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    return await show_job(visit)


@page_at("/console/jobs/{job_id}")
async def show_job(visit: Visit, notice: str | None = None, error: str | None = None, status: int = 200) -> Response:
    job, problem, found = await load_job(visit)
    if job is None:
        return CONSOLE.show(visit, "Job", tag("a", "Back to jobs", href="/console/jobs"), error=problem, status=found)
    job_id = job["id"]
    live = live_region(
        "job", f"/console/jobs/{job_id}/live", job_view(job, visit.session.csrf), job.get("status") in IN_FLIGHT
    )
    return CONSOLE.show(
        visit,
        f"Job {job_id}",
        [live, await sent_view(visit, job), tag("a", "Back to jobs", href="/console/jobs")],
        notice=notice,
        error=error,
        status=status,
    )


async def job_live(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    job, problem, found = await load_job(visit)
    if job is None:
        return respond(tag("p", problem, role="alert", class_="error"), found)
    response = respond(job_view(job, visit.session.csrf))
    response.headers["x-in-flight"] = "1" if job.get("status") in IN_FLIGHT else "0"
    return response


async def retry_job(request: Request) -> Response:
    visit = await CONSOLE.visit(request)
    path = f"/v1/jobs/{request.path_params['job_id']}/retry"
    return await act(visit, show_job, "POST", path, lambda job: f"Retrying: the job is {job['status']} again.")


async def resend_job(request: Request) -> Response:
    """A new job sending this one again; its page comes next (it links the original)."""
    visit = await CONSOLE.visit(request)
    job_id = request.path_params["job_id"]
    async with visit.api() as api:
        answer = await api.call("POST", f"/v1/jobs/{job_id}/resend")
    if not answer.ok:
        return await show_job(visit, error=answer.problem, status=answer.status)
    new = answer.body
    return flash_redirect(visit, f"/console/jobs/{new['id']}", f"Resent as this job ({new['status']}).")


async def dead_letters(request: Request) -> Response:
    """A tenant's dead letters are its failed jobs: each can be run again with Retry."""
    visit = await CONSOLE.visit(request)
    answer = await CONSOLE.fetch_page(visit, "Dead letters", "/v1/jobs", {"status": "failed", "limit": "100"})
    intro = tag(
        "p",
        "Jobs that used up their attempts. Nothing leaves here by itself: Retry runs a job again from pending.",
    )
    return CONSOLE.show(visit, "Dead letters", [intro, job_rows(answer.body["data"], visit.session.csrf)])


PAGES = (
    ("/console/jobs", jobs_page, "GET"),
    ("/console/jobs/rows", jobs_rows, "GET"),
    ("/console/jobs/send", send_webhook, "POST"),
    ("/console/jobs/{job_id}", job_page, "GET"),
    ("/console/jobs/{job_id}/live", job_live, "GET"),
    ("/console/jobs/{job_id}/retry", retry_job, "POST"),
    ("/console/jobs/{job_id}/resend", resend_job, "POST"),
    ("/console/dead-letters", dead_letters, "GET"),
)
CONSOLE.add_pages(router, PAGES)
