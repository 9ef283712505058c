"""The tenant console shows only what the signed-in key may do: its scopes (from the sign-in
check, GET /v1/api-keys/current, kept in the sealed session) decide which pages the navigation
lists (every page reads: `read`) and which forms a page shows (sending a webhook, retrying or
resending a job, replaying an event and recovering a target are `send`; every other form, the
test event to a target included, is `manage`). The API
refuses anything beyond the scopes anyway (herald_gateway.scopes); this only leaves out of the
page what would be refused."""

from __future__ import annotations

from contextvars import ContextVar

from herald_gateway.scopes import MANAGE, READ, SEND

# The scopes of the key behind the page being rendered; None: a console without scopes (operators').
CONSOLE_SCOPES: ContextVar[frozenset[str] | None] = ContextVar("herald_console_scopes", default=None)
SEND_ACTIONS = ("/console/jobs/send",)
SEND_SUFFIXES = ("/retry", "/recover", "/resend", "/replay")


def action_scope(action: str) -> str | None:
    """The scope a console form's POST needs (None: signing in or out, or not a tenant form)."""
    if not action.startswith("/console/") or action.endswith(("/login", "/logout")):
        return None
    return SEND if action in SEND_ACTIONS or action.endswith(SEND_SUFFIXES) else MANAGE


def may(scope: str | None) -> bool:
    scopes = CONSOLE_SCOPES.get()
    return scope is None or scopes is None or scope in scopes


def may_read() -> bool:
    return may(READ)
