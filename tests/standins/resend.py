"""Resend's API as documented: Bearer API keys; a key with sending access only
answers 401 `restricted_api_key` on other endpoints; an invalid key 400
`validation_error`; no key 401 `missing_api_key`.

Emails (`POST /emails`): 200 `{id}`. Refusals carry `{statusCode, name, message}`:
401 missing_api_key, 403 invalid_api_key (the current documented answer for a bad key on
this endpoint), 422 missing_required_field / validation_error (bad address, bad tag).
`Idempotency-Key` (1-256 characters) as documented: the same key and body within 24 hours
answers the first response and sends nothing; the same key with another body is 409
invalid_idempotent_request; while the first is still running, 409
concurrent_idempotent_requests; a key too long is 400 invalid_idempotency_key.

Domains: `POST /domains` answers the records (relative names, status not_started);
`POST /domains/{id}/verify` starts a check; `GET /domains/{id}` shows the result
("verified" once the test called `publish_dns`, otherwise "pending").
"""

from __future__ import annotations

import json
import re
import threading
import uuid
from typing import Any

from tests.standins.scripted import ScriptedStandIn
from tests.standins.server import Reply, Request

SEND_PATH = "/emails"
TAG_TEXT = re.compile(r"[A-Za-z0-9_-]{1,256}")


def error(status: int, name: str, message: str) -> Reply:
    return Reply(status, {"statusCode": status, "name": name, "message": message})


class ResendStandIn(ScriptedStandIn):
    def __init__(self) -> None:
        super().__init__()
        # key -> "full_access" | "sending_access"
        self.keys: dict[str, str] = {}
        # Recipients refused as invalid (422 validation_error).
        self.reject: set[str] = set()
        # Emails created (one per real send; an idempotent replay adds none): id -> body.
        self.emails: dict[str, dict[str, Any]] = {}
        # Idempotency-Key -> (body as sent, the answer given).
        self.idempotent: dict[str, tuple[Any, Reply]] = {}
        self._in_flight: set[str] = set()
        self._lock = threading.Lock()
        self.domains_by_id: dict[str, dict[str, Any]] = {}
        self.published: set[str] = set()
        self.route("GET", "/domains")(self.domains)
        self.scripted_route("POST", SEND_PATH)(self.send_email)
        self.scripted_route("POST", "/domains")(self.create_domain)

    def add_key(self, key: str, permission: str = "full_access") -> str:
        self.keys[key] = permission
        return key

    def domains(self, request: Request) -> Reply:
        header = request.headers.get("authorization", "")
        if not header.startswith("Bearer "):
            return Reply(401, {"statusCode": 401, "name": "missing_api_key", "message": "Missing API key"})
        permission = self.keys.get(header.removeprefix("Bearer "))
        if permission is None:
            return Reply(400, {"statusCode": 400, "name": "validation_error", "message": "API key is invalid"})
        if permission == "sending_access":
            return Reply(
                401,
                {
                    "statusCode": 401,
                    "name": "restricted_api_key",
                    "message": "This API key is restricted to only send emails",
                },
            )
        return Reply(200, {"data": []})

    # --- failure modes -------------------------------------------------------------------------

    def rate_limit_next(self, retry_after: str = "1") -> None:
        """The next send answers 429 rate_limit_exceeded with Retry-After, as Resend does."""
        reply = error(429, "rate_limit_exceeded", "Too many requests. You can only make 2 requests per second.")
        self.script("POST", SEND_PATH, Reply(reply.status, reply.body, {"retry-after": retry_after}))

    # --- emails --------------------------------------------------------------------------------

    def _auth(self, request: Request, full_access: bool = False) -> Reply | None:
        header = request.headers.get("authorization", "")
        if not header.startswith("Bearer "):
            return error(401, "missing_api_key", "Missing API key in the authorization header.")
        permission = self.keys.get(header.removeprefix("Bearer "))
        if permission is None:
            return error(403, "invalid_api_key", "API key is invalid.")
        if full_access and permission != "full_access":
            return error(401, "restricted_api_key", "This API key is restricted to only send emails.")
        return None

    def send_email(self, request: Request) -> Reply:
        refused = self._auth(request)
        if refused is not None:
            return refused
        body = request.json()
        key = request.headers.get("idempotency-key")
        if key is None:
            return self._create(body)
        if not 1 <= len(key) <= 256:
            return error(400, "invalid_idempotency_key", "The key must be between 1-256 chars.")
        with self._lock:
            if key in self._in_flight:
                return error(
                    409,
                    "concurrent_idempotent_requests",
                    "Same idempotency key used while original request is still in progress.",
                )
            if key in self.idempotent:
                first_body, first_reply = self.idempotent[key]
                if _canonical(first_body) != _canonical(body):
                    return error(
                        409, "invalid_idempotent_request", "Same idempotency key used with a different request payload."
                    )
                return first_reply
            self._in_flight.add(key)
        try:
            reply = self._create(body)
        finally:
            with self._lock:
                self._in_flight.discard(key)
        if 200 <= reply.status < 300:
            with self._lock:
                self.idempotent[key] = (body, reply)
        return reply

    def _create(self, body: Any) -> Reply:
        for field in ("from", "to", "subject"):
            if not body.get(field):
                return error(422, "missing_required_field", f"Missing `{field}` field.")
        if not body.get("html") and not body.get("text"):
            return error(422, "missing_required_field", "Missing `html` or `text` field.")
        recipients = body["to"] if isinstance(body["to"], list) else [body["to"]]
        for field in ("to", "cc", "bcc"):
            addresses = body.get(field) or []
            for address in addresses if isinstance(addresses, list) else [addresses]:
                email = address.rsplit("<", 1)[-1].rstrip(">").strip()
                if "@" not in email or email in self.reject:
                    return error(
                        422,
                        "validation_error",
                        f"Invalid `{field}` field. The email address needs to follow the `email@example.com` or "
                        "`Name <email@example.com>` format.",
                    )
        if len(recipients) > 50:
            return error(422, "validation_error", "Too many recipients: up to 50 in `to`.")
        for tag in body.get("tags") or []:
            if not TAG_TEXT.fullmatch(str(tag.get("name", ""))) or not TAG_TEXT.fullmatch(str(tag.get("value", ""))):
                return error(
                    422,
                    "validation_error",
                    "Tags should only contain ASCII letters, numbers, underscores, or dashes.",
                )
        email_id = str(uuid.uuid4())
        with self._lock:
            self.emails[email_id] = body
        return Reply(200, {"id": email_id})

    # --- domains -------------------------------------------------------------------------------

    def publish_dns(self, domain: str) -> None:
        """The tenant published the records: the next verification finds them."""
        self.published.add(domain)

    def create_domain(self, request: Request) -> Reply:
        refused = self._auth(request, full_access=True)
        if refused is not None:
            return refused
        body = request.json()
        name = body.get("name", "")
        if any(d["name"] == name for d in self.domains_by_id.values()):
            return error(403, "validation_error", f"The {name} domain has been registered already.")
        region = body.get("region", "us-east-1")
        domain_id = str(uuid.uuid4())
        records = [
            {
                "record": "SPF",
                "name": "send",
                "type": "MX",
                "ttl": "Auto",
                "status": "not_started",
                "value": f"feedback-smtp.{region}.amazonses.com",
                "priority": 10,
            },
            {
                "record": "SPF",
                "name": "send",
                "type": "TXT",
                "ttl": "Auto",
                "status": "not_started",
                "value": '"v=spf1 include:amazonses.com ~all"',
            },
            {
                "record": "DKIM",
                "name": "resend._domainkey",
                "type": "TXT",
                "ttl": "Auto",
                "status": "not_started",
                "value": "p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQDsc4Lh8xilsngyKEgN2S84",
            },
        ]
        domain = {
            "id": domain_id,
            "name": name,
            "created_at": "2026-01-01 00:00:00.000000+00",
            "status": "not_started",
            "records": records,
            "region": region,
        }
        self.domains_by_id[domain_id] = domain
        self.route("GET", f"/domains/{domain_id}")(self.get_domain)
        self.scripted_route("POST", f"/domains/{domain_id}/verify")(self.verify_domain)
        return Reply(200, domain)

    def _domain(self, request: Request) -> dict[str, Any]:
        return self.domains_by_id[request.path.split("/")[2]]

    def get_domain(self, request: Request) -> Reply:
        refused = self._auth(request, full_access=True)
        if refused is not None:
            return refused
        return Reply(200, {"object": "domain", **self._domain(request)})

    def verify_domain(self, request: Request) -> Reply:
        refused = self._auth(request, full_access=True)
        if refused is not None:
            return refused
        domain = self._domain(request)
        status = "verified" if domain["name"] in self.published else "pending"
        domain["status"] = status
        for record in domain["records"]:
            record["status"] = status
        return Reply(200, {"object": "domain", "id": domain["id"]})


def _canonical(body: Any) -> str:
    return json.dumps(body, sort_keys=True)
