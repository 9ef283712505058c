"""Console sessions: the credential (a tenant's API key or the operator token) sealed in an
HttpOnly, SameSite=Strict cookie, never in a URL, a log line or storage in clear.

Sealed with AES-256-GCM under `HERALD_CONSOLE_SESSION_KEY`, so any gateway replica opens a
session another one issued and nothing is stored server-side; a tampered or foreign cookie
fails to open (GCM authenticates) and reads as signed out. The envelope carries the kind
(tenant or operator) as associated data, so a tenant cookie never opens as an operator one.
The CSRF token lives inside the same envelope and is compared in constant time on every
POST; the sign-in form, which comes before any session, uses a short-lived sealed
pre-session cookie the same way. Signing out clears the cookie; a copy taken before then
stays valid until it expires (`SESSION_SECONDS`) or its API key is revoked, since every
request re-authenticates the key through the HTTP API.
"""

from __future__ import annotations

import base64
import hmac
import logging
import os
import secrets
import time
from dataclasses import dataclass

import orjson
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from starlette.requests import Request
from starlette.responses import Response

log = logging.getLogger("herald.gateway.console")

SESSION_SECONDS = 8 * 3600
LOGIN_SECONDS = 15 * 60
NONCE_BYTES = 12


@dataclass(frozen=True)
class Session:
    kind: str  # "tenant" | "operator" | "login"
    credential: str
    csrf: str
    expires_at: float
    # The API key's scopes (tenant sessions); None: not known, the console then hides nothing.
    scopes: frozenset[str] | None = None


@dataclass(frozen=True)
class Place:
    """Where one kind of session lives: its cookie name and path."""

    kind: str
    cookie: str
    path: str


TENANT = Place("tenant", "herald_console", "/console")
OPERATOR = Place("operator", "herald_admin_console", "/admin/console")


def login_place(place: Place) -> Place:
    return Place("login", f"{place.cookie}_login", place.path)


def flash_place(place: Place) -> Place:
    """Where a form's outcome waits, sealed like a session, for the page the form redirects to."""
    return Place("flash", f"{place.cookie}_flash", place.path)


class SessionBox:
    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)

    @classmethod
    def from_setting(cls, encoded: str) -> SessionBox:
        if encoded:
            key = base64.b64decode(encoded, validate=True)
            if len(key) != 32:
                raise ValueError("HERALD_CONSOLE_SESSION_KEY must be base64 of 32 bytes")
            return cls(key)
        log.info("console sessions sealed with a per-process key (HERALD_CONSOLE_SESSION_KEY not set)")
        return cls(os.urandom(32))

    def seal(self, session: Session) -> str:
        nonce = os.urandom(NONCE_BYTES)
        scopes = sorted(session.scopes) if session.scopes is not None else None
        body = orjson.dumps({"c": session.credential, "t": session.csrf, "e": session.expires_at, "s": scopes})
        sealed = nonce + self._aead.encrypt(nonce, body, f"herald:console:{session.kind}".encode())
        return base64.urlsafe_b64encode(sealed).decode().rstrip("=")

    def open(self, value: str, kind: str) -> Session | None:
        try:
            raw = base64.urlsafe_b64decode(value + "=" * (-len(value) % 4))
            body = orjson.loads(
                self._aead.decrypt(raw[:NONCE_BYTES], raw[NONCE_BYTES:], f"herald:console:{kind}".encode())
            )
            scopes = body.get("s")
            session = Session(
                kind,
                str(body["c"]),
                str(body["t"]),
                float(body["e"]),
                frozenset(str(s) for s in scopes) if isinstance(scopes, list) else None,
            )
        except (InvalidTag, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
            return None
        return session if session.expires_at > time.time() else None

    def read(self, request: Request, place: Place) -> Session | None:
        value = request.cookies.get(place.cookie)
        return self.open(value, place.kind) if value else None

    @staticmethod
    def new(place: Place, credential: str, seconds: int, scopes: frozenset[str] | None = None) -> Session:
        return Session(place.kind, credential, secrets.token_urlsafe(24), time.time() + seconds, scopes)

    def store(self, response: Response, request: Request, place: Place, session: Session) -> None:
        response.set_cookie(
            place.cookie,
            self.seal(session),
            max_age=max(int(session.expires_at - time.time()), 1),
            path=place.path,
            secure=over_tls(request),
            httponly=True,
            samesite="strict",
        )

    @staticmethod
    def clear(response: Response, request: Request, place: Place) -> None:
        response.delete_cookie(
            place.cookie, path=place.path, secure=over_tls(request), httponly=True, samesite="strict"
        )


def over_tls(request: Request) -> bool:
    """TLS here or at the Ingress in front (which says so in X-Forwarded-Proto). A client that
    claims https without it only gets a cookie its own browser will not send back."""
    return request.url.scheme == "https" or request.headers.get("x-forwarded-proto", "").lower() == "https"


def csrf_matches(session: Session, submitted: str | None) -> bool:
    return submitted is not None and hmac.compare_digest(session.csrf.encode(), submitted.encode())
