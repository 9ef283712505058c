"""The browser console: `/console` for tenants (API key), `/admin/console` for operators.

Server-rendered pages (herald_gateway.console.markup escapes everything by construction)
with one small script for live updates; no build step, nothing from another origin. Every
page reads and writes through the gateway's own HTTP API (herald_gateway.console.client).
"""

from __future__ import annotations

from pathlib import Path

from fastapi import FastAPI
from starlette.staticfiles import StaticFiles

from herald.config import get_settings
from herald_gateway.console import (
    audit_pages,
    events_pages,
    jobs_pages,
    operator_pages,
    settings_pages,
    target_pages,
    tenant_admin_pages,
    webhook_pages,
)
from herald_gateway.console.operator import OPERATOR_CONSOLE
from herald_gateway.console.sessions import SessionBox
from herald_gateway.console.tenant import TENANT_CONSOLE


def mount(app: FastAPI, session_key: str | None = None) -> None:
    """Adds both consoles to the gateway app. `session_key` defaults to the setting."""
    key = get_settings().console_session_key if session_key is None else session_key
    app.state.console_sessions = SessionBox.from_setting(key)
    for console in (TENANT_CONSOLE, OPERATOR_CONSOLE):
        console.routes(app.router)
    for module in (
        jobs_pages,
        events_pages,
        webhook_pages,
        settings_pages,
        target_pages,
        operator_pages,
        tenant_admin_pages,
        audit_pages,
    ):
        app.include_router(module.router)
    app.mount("/console/static", StaticFiles(directory=Path(__file__).with_name("static")), name="console-static")
