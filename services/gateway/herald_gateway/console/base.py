"""What the tenant and the operator consoles share: signing in and out, the session a page
needs, CSRF checks on every POST, and the API client bound to the session's credential."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs

from fastapi import APIRouter, Request
from starlette.responses import RedirectResponse, Response

from herald_gateway.console.client import Answer, ApiClient
from herald_gateway.console.layout import field, form, keep_input, page, respond, submit
from herald_gateway.console.markup import Child, tag
from herald_gateway.console.scoping import CONSOLE_SCOPES, may_read
from herald_gateway.console.sessions import (
    LOGIN_SECONDS,
    SESSION_SECONDS,
    Place,
    Session,
    SessionBox,
    csrf_matches,
    flash_place,
    login_place,
)

MAX_FORM_BYTES = 1024 * 1024
FLASH_SECONDS = 60


class SignedOut(Exception):
    """No valid session: the page answers with a redirect to the sign-in form."""


class CsrfRefused(Exception):
    """A POST without the session's CSRF token: refused with 403, nothing done."""


class Shown(Exception):
    """A page that is already the answer (the API refused what it needed): `guarded` sends it."""

    def __init__(self, response: Response) -> None:
        super().__init__(response.status_code)
        self.response = response


@dataclass
class Visit:
    """One request to a console page by a signed-in user."""

    request: Request
    session: Session
    form: dict[str, list[str]]
    place: Place

    def value(self, name: str, default: str = "") -> str:
        values = self.form.get(name) or self.request.query_params.getlist(name)
        return values[0].strip() if values else default

    def values(self, name: str) -> list[str]:
        return self.form.get(name, [])

    def api(self) -> ApiClient:
        return ApiClient(self.request.app, self.session.credential)


Render = Callable[..., Awaitable[Response]]
# A page shown again after a form: show(visit, notice=..., error=..., status=...).
Show = Callable[..., Awaitable[Response]]
# Each such page's own GET path, path parameters in braces: where its forms redirect once done.
PAGE_PATHS: dict[Show, str] = {}


def page_at(path: str) -> Callable[[Show], Show]:
    """Names the GET path of a page its forms show again, so a form that succeeded redirects there
    (reloading the page then repeats nothing) and the page shows the outcome once."""

    def register(show: Show) -> Show:
        PAGE_PATHS[show] = path
        return show

    return register


async def act(
    visit: Visit,
    show: Show,
    method: str,
    path: str,
    done: str | Callable[[Any], str],
    json: Any = None,
) -> Response:
    """One API call for a form, then its page again: the API's problem as the error (with its
    status), or the notice (`done`, or made from the answer's body)."""
    async with visit.api() as api:
        answer = await api.call(method, path, json=json)
    if not answer.ok:
        return await show(visit, error=answer.problem, status=answer.status)
    notice = done(answer.body) if callable(done) else done
    page_path = PAGE_PATHS.get(show)
    if page_path is None:
        return await show(visit, notice=notice)
    return flash_redirect(visit, page_path.format(**visit.request.path_params), notice)


def flash_redirect(visit: Visit, to: str, notice: str) -> Response:
    """303 to the page, the notice waiting for it in a sealed cookie (never in the URL)."""
    response = RedirectResponse(to, status_code=303)
    box: SessionBox = visit.request.app.state.console_sessions
    place = flash_place(visit.place)
    box.store(response, visit.request, place, box.new(place, notice, FLASH_SECONDS))
    return response


class Console:
    """One console (tenant or operator): where it lives, how a credential is checked at
    sign-in, and its navigation."""

    def __init__(
        self,
        place: Place,
        heading: str,
        credential_label: str,
        check: Callable[[ApiClient], Awaitable[Answer]],
        nav: list[tuple[str, str]],
        home: str,
    ) -> None:
        self.place = place
        self.heading = heading
        self.credential_label = credential_label
        self.check = check
        self.nav = nav
        self.home = home

    @staticmethod
    def sessions(request: Request) -> SessionBox:
        box: SessionBox = request.app.state.console_sessions
        return box

    async def visit(self, request: Request) -> Visit:
        session = self.sessions(request).read(request, self.place)
        if session is None:
            raise SignedOut
        CONSOLE_SCOPES.set(session.scopes)
        form: dict[str, list[str]] = {}
        if request.method == "POST":
            form = await read_form(request)
            if not csrf_matches(session, first(form, "csrf")):
                raise CsrfRefused
            keep_input(request.url.path, form)
        return Visit(request, session, form, self.place)

    async def fetch(self, visit: Visit, title: str, path: str, params: dict[str, str] | None = None) -> Answer:
        """GET `path` for the page `title`: the answer; when the API refuses, that page with the
        API's problem (and its status) is the visit's answer (raised as `Shown`)."""
        async with visit.api() as api:
            answer = await api.get(path, params)
        if not answer.ok:
            raise Shown(self.show(visit, title, "", error=answer.problem, status=answer.status))
        return answer

    async def fetch_page(self, visit: Visit, title: str, path: str, params: dict[str, str]) -> Answer:
        """A page of a cursor-paginated list, as `fetch`: `params` and the visit's `cursor`."""
        return await self.fetch(visit, title, path, {**params, "cursor": visit.value("cursor")})

    async def fetch_item(self, visit: Visit, title: str, path: str) -> tuple[str, Any]:
        """The page's item: its id (the `item_id` path parameter) and, as `fetch`, its body from
        `path` (`{}` standing for the id)."""
        item_id: str = visit.request.path_params["item_id"]
        return item_id, (await self.fetch(visit, title, path.format(item_id))).body

    def show(
        self,
        visit: Visit,
        title: str,
        body: Child,
        *,
        notice: str | None = None,
        error: str | None = None,
        status: int = 200,
    ) -> Response:
        flash = None
        if notice is None and error is None and visit.request.method == "GET":
            flash = self.sessions(visit.request).read(visit.request, flash_place(self.place))
        response = page(
            title,
            body,
            heading=self.heading,
            nav=self.nav if may_read() else [],
            current=visit.request.url.path,
            signed_in_as=self.place.kind,
            logout=(f"{self.place.path}/logout", visit.session.csrf),
            notice=flash.credential if flash is not None else notice,
            error=error,
            status=status,
        )
        if flash is not None:
            self.sessions(visit.request).clear(response, visit.request, flash_place(self.place))
        return response

    def login_page(self, request: Request, error: str | None = None, status: int = 200) -> Response:
        pre = self.sessions(request).new(login_place(self.place), "", LOGIN_SECONDS)
        body = form(
            f"{self.place.path}/login",
            pre.csrf,
            field(self.credential_label, "credential", type="password", required=True, autocomplete="off"),
            submit("Sign in"),
            class_="stack",
        )
        response = page("Sign in", body, heading=self.heading, error=error, status=status)
        self.sessions(request).store(response, request, login_place(self.place), pre)
        return response

    async def login(self, request: Request) -> Response:
        form = await read_form(request)
        pre = self.sessions(request).read(request, login_place(self.place))
        if pre is None or not csrf_matches(pre, first(form, "csrf")):
            return self.login_page(request, "The form expired or was not ours; sign in again.", 403)
        credential = (form.get("credential") or [""])[0].strip()
        async with ApiClient(request.app, credential) as api:
            answer = await self.check(api)
        if answer.status == 401 or not credential:
            return self.login_page(request, f"That {self.credential_label.lower()} was not accepted.", 401)
        if not answer.ok:
            return self.login_page(request, answer.problem, 503 if answer.status >= 500 else answer.status)
        response = RedirectResponse(self.home, status_code=303)
        self.sessions(request).clear(response, request, login_place(self.place))
        # A tenant's check answers the key's scopes: the pages then leave out what it may not do.
        scopes = answer.body.get("scopes") if isinstance(answer.body, dict) else None
        session = self.sessions(request).new(
            self.place, credential, SESSION_SECONDS, frozenset(scopes) if isinstance(scopes, list) else None
        )
        self.sessions(request).store(response, request, self.place, session)
        return response

    async def logout(self, request: Request) -> Response:
        await self.visit(request)
        response = RedirectResponse(f"{self.place.path}/login", status_code=303)
        self.sessions(request).clear(response, request, self.place)
        return response

    def routes(self, router: APIRouter) -> None:
        path = self.place.path

        async def login_form(request: Request) -> Response:
            if self.sessions(request).read(request, self.place) is not None:
                return RedirectResponse(self.home, status_code=303)
            return self.login_page(request)

        async def root(request: Request) -> Response:
            return RedirectResponse(self.home, status_code=303)

        router.add_api_route(path, root, methods=["GET"], include_in_schema=False)
        router.add_api_route(f"{path}/login", login_form, methods=["GET"], include_in_schema=False)
        router.add_api_route(f"{path}/login", self.login, methods=["POST"], include_in_schema=False)
        router.add_api_route(f"{path}/logout", self.guarded(self.logout), methods=["POST"], include_in_schema=False)

    def page_of(self, show: Show) -> Render:
        """The GET handler of a page its forms show again (`show(visit, notice=...)`): the page, no notice."""

        async def shown(request: Request) -> Response:
            return await show(await self.visit(request))

        shown.__name__ = show.__name__.removeprefix("show_") + "_page"
        return shown

    def add_pages(self, router: APIRouter, pages: Iterable[tuple[str, Render, str]]) -> None:
        """Adds each page (path, handler, method) to the router, every one `guarded`."""
        for path, handler, method in pages:
            router.add_api_route(path, self.guarded(handler), methods=[method])

    def guarded(self, handler: Render) -> Render:
        """Signed-out visitors go to the sign-in form; a POST without its CSRF token gets 403."""

        async def run(request: Request) -> Response:
            try:
                return await handler(request)
            except SignedOut:
                if request.method == "GET" and request.headers.get("x-console-fragment") is None:
                    return RedirectResponse(f"{self.place.path}/login", status_code=303)
                return respond(tag("p", "Signed out."), 401)
            except CsrfRefused:
                return respond(tag("p", "Refused: this form is missing its CSRF token. Reload the page."), 403)
            except Shown as shown:
                return shown.response

        run.__name__ = handler.__name__
        return run


def first(form: dict[str, list[str]], name: str) -> str | None:
    values = form.get(name)
    return values[0] if values else None


async def read_form(request: Request) -> dict[str, list[str]]:
    """An urlencoded form body (the only kind the console's forms send)."""
    body = await request.body()
    if len(body) > MAX_FORM_BYTES:
        return {}
    return parse_qs(body.decode("utf-8", errors="replace"), keep_blank_values=True)
