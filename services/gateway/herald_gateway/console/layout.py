"""The pieces every console page is made of: the page shell, labelled form fields, tables.

Every response carries a Content-Security-Policy that allows only the console's own script
and stylesheet (no inline script, nothing from another origin), so even markup that slipped
through escaping could not run; and `no-store`, so a secret shown once is not kept by the
browser's cache.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from contextvars import ContextVar
from datetime import datetime

from starlette.responses import HTMLResponse

from herald_gateway.console.markup import Child, Html, document, join, tag
from herald_gateway.console.scoping import action_scope, may

STATIC = "/console/static"
SECURITY_HEADERS = {
    "content-security-policy": "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
    "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
    "x-content-type-options": "nosniff",
    "x-frame-options": "DENY",
    "referrer-policy": "no-referrer",
    "cache-control": "no-store",
}


# What the form being answered sent: a page shown again with an error refills every field from
# it (passwords excepted), so a typo costs one correction, not the whole form. A form that
# succeeded redirects (base.act), so its page comes back empty.
_SUBMITTED: ContextVar[tuple[str, dict[str, list[str]]]] = ContextVar("console_submitted", default=("", {}))
# The id prefix of a field in one row's own form ("t-<tenant id>-"): one of many fields of its name.
_ROW_PREFIX = re.compile(r"^[a-z]+-.+-$")


def keep_input(action: str, submitted: dict[str, list[str]]) -> None:
    """For the rest of this request (its task): the page shown in answer to a form refills it."""
    _SUBMITTED.set((action, submitted))


def _kept(name: str, value: str | None, id_prefix: str) -> str | None:
    """A field of a row's own form is left as the row has it (every row has one of that name)."""
    sent = None if _ROW_PREFIX.match(id_prefix) else _SUBMITTED.get()[1].get(name)
    return sent[0] if sent else value


def respond(markup: Html, status: int = 200) -> HTMLResponse:
    return HTMLResponse(str(markup), status_code=status, headers=SECURITY_HEADERS)


def page(
    title: str,
    body: Child,
    *,
    heading: str,
    nav: Sequence[tuple[str, str]] = (),
    current: str = "",
    signed_in_as: str = "",
    logout: tuple[str, str] | None = None,
    notice: str | None = None,
    error: str | None = None,
    status: int = 200,
) -> HTMLResponse:
    """A whole page. `logout` is (action, csrf token) when signed in."""
    links = [
        tag("li", tag("a", label, href=href, aria_current="page" if href == current else None)) for href, label in nav
    ]
    header = tag(
        "header",
        tag("a", "Skip to content", href="#main", class_="skip"),
        tag("div", tag("strong", heading), tag("span", signed_in_as, class_="who"), class_="brand"),
        tag("nav", tag("ul", links), aria_label="Console sections") if links else None,
        form(logout[0], logout[1], submit("Sign out", class_="link")) if logout else None,
    )
    messages = [
        tag("p", notice, role="status", class_="notice") if notice else None,
        tag("p", error, role="alert", class_="error") if error else None,
    ]
    return respond(
        document(
            tag(
                "html",
                tag(
                    "head",
                    tag("meta", charset="utf-8"),
                    tag("meta", name="viewport", content="width=device-width, initial-scale=1"),
                    tag("title", f"{title} · {heading}"),
                    tag("link", rel="stylesheet", href=f"{STATIC}/console.css"),
                    tag("script", src=f"{STATIC}/console.js", defer=True),
                ),
                tag("body", header, tag("main", tag("h1", title), messages, body, id="main")),
                lang="en",
            )
        ),
        status,
    )


def form(action: str, csrf: str, *children: Child, class_: str | None = None, **attrs: str | None) -> Html:
    """A POST form carrying the session's CSRF token; nothing when the signed-in key may not
    do what it posts (console.scoping)."""
    if not may(action_scope(action)):
        return join([])
    return tag(
        "form",
        tag("input", type="hidden", name="csrf", value=csrf),
        children,
        method="post",
        action=action,
        class_=class_,
        **attrs,
    )


def folded_form(summary: str, action: str, csrf: str, *children: Child) -> Html:
    """A form folded under `summary` (New target, Add a provider, ...), opened with a click, and
    open already when the page answers this form (refused: its fields hold what was sent); none
    where the key may not do what it does."""
    if not may(action_scope(action)):
        return join([])
    answering = _SUBMITTED.get()[0] == action
    return tag("details", tag("summary", summary), form(action, csrf, *children, class_="stack"), open=answering)


def field(
    label: str,
    name: str,
    value: str | None = None,
    *,
    type: str = "text",
    required: bool = False,
    hint: str | None = None,
    id_prefix: str = "",
    **attrs: str | None,
) -> Html:
    ident = f"{id_prefix}{name}"
    described = f"{ident}-hint" if hint else None
    if type not in ("password", "hidden"):
        value = _kept(name, value, id_prefix)
    return tag(
        "div",
        tag("label", label, for_=ident),
        tag(
            "input",
            id=ident,
            name=name,
            type=type,
            value=value,
            required=required,
            aria_describedby=described,
            **attrs,
        ),
        tag("small", hint, id=described) if hint else None,
        class_="field",
    )


def area(label: str, name: str, value: str = "", *, hint: str | None = None, id_prefix: str = "") -> Html:
    ident = f"{id_prefix}{name}"
    described = f"{ident}-hint" if hint else None
    return tag(
        "div",
        tag("label", label, for_=ident),
        tag("textarea", _kept(name, value, id_prefix) or "", id=ident, name=name, rows="4", aria_describedby=described),
        tag("small", hint, id=described) if hint else None,
        class_="field",
    )


def choice(
    label: str, name: str, options: Iterable[tuple[str, str]], selected: str = "", *, id_prefix: str = ""
) -> Html:
    ident = f"{id_prefix}{name}"
    selected = _kept(name, selected, id_prefix) or ""
    return tag(
        "div",
        tag("label", label, for_=ident),
        tag(
            "select",
            [tag("option", text_, value=value, selected=value == selected) for value, text_ in options],
            id=ident,
            name=name,
        ),
        class_="field",
    )


def submit(label: str, *, class_: str | None = None, name: str | None = None, value: str | None = None) -> Html:
    return tag("button", label, type="submit", class_=class_, name=name, value=value)


def table(caption: str, headings: Sequence[str], rows: Iterable[Sequence[Child]], **attrs: str | None) -> Html:
    body = [tag("tr", [tag("td", cell, data_label=h) for h, cell in zip(headings, row, strict=True)]) for row in rows]
    if not body:
        return tag("p", f"No {caption.lower()}.", class_="empty")
    return tag(
        "div",
        tag(
            "table",
            tag("caption", caption),
            tag("thead", tag("tr", [tag("th", h, scope="col") for h in headings])),
            tag("tbody", body, **attrs),
        ),
        class_="scroll",
    )


def secret_once(text: str, ident: str) -> Html:
    """A secret shown once, with a button that copies it (shown by the script: without it, nothing to click)."""
    return join(
        [
            tag("code", text, class_="secret", id=ident),
            tag("button", "Copy", type="button", class_="copy small", data_copy=ident, hidden=True),
        ]
    )


def search_form(action: str, *fields: Child) -> Html:
    """A list page's filters: a GET form of `fields` and its Search button."""
    return tag("form", fields, submit("Search"), method="get", action=action, class_="filters", role="search")


def facts(pairs: Iterable[tuple[str, Child]], **attrs: str | None) -> Html:
    """A term/value list (a job's status, an event's type, ...)."""
    return tag("dl", [join([tag("dt", k), tag("dd", v)]) for k, v in pairs], class_="facts", **attrs)


def section(title: str, *children: Child) -> Html:
    return tag("section", tag("h2", title), children)


def stamp(value: str | None) -> Html:
    """An API timestamp as a short UTC time, machine-readable in <time>."""
    if not value:
        return join(["—"])
    try:
        parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return join([value])
    return tag("time", parsed.strftime("%Y-%m-%d %H:%M:%S UTC"), datetime=value)


def badge(status: str) -> Html:
    return tag("span", status, class_=f"badge s-{status}")
