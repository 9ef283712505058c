"""SendGrid's v3 API as documented: Bearer API keys, `GET /v3/scopes` lists the
key's permissions; 401 with an `errors` array for a bad key.

Mail send (`POST /v3/mail/send`): 202 with an empty body and the message id in
`X-Message-Id`; 400 with `errors` for a malformed body (personalizations, from, subject
and content are required; text/plain must come first) or an invalid recipient; 403 for a
key without `mail.send`; 429 with `X-RateLimit-*` headers (no Retry-After).

Domain authentication (`/v3/whitelabel/domains`): create answers 201 with the DNS records
(three CNAMEs with automatic security, MX + two TXT without); `POST .../{id}/validate`
checks them ("published" when the test called `publish_dns`); `GET .../{id}` shows them.
"""

from __future__ import annotations

import itertools
import secrets
import time
from typing import Any

from tests.standins.scripted import ScriptedStandIn
from tests.standins.server import Reply, Request

UNAUTHORIZED = {"errors": [{"field": None, "message": "authorization required"}]}
FORBIDDEN = {"errors": [{"field": None, "message": "access forbidden"}]}
TOO_MANY = {"errors": [{"field": None, "message": "too many requests"}]}
SEND_PATH = "/v3/mail/send"
DOMAINS_PATH = "/v3/whitelabel/domains"


def bad_request(message: str, field: str | None) -> Reply:
    return Reply(400, {"errors": [{"message": message, "field": field, "help": None}]})


class SendGridStandIn(ScriptedStandIn):
    def __init__(self) -> None:
        super().__init__()
        # key -> scopes
        self.keys: dict[str, list[str]] = {}
        # Addresses answered as invalid (400 "Does not contain a valid address.").
        self.reject: set[str] = set()
        # Accepted mail-send bodies, in order, with the X-Message-Id each got.
        self.sent: list[tuple[str, dict[str, Any]]] = []
        # Domain authentication: id -> domain object; names whose records "are in DNS".
        self.domains_by_id: dict[int, dict[str, Any]] = {}
        self.published: set[str] = set()
        self._ids = itertools.count(3000)
        self.route("GET", "/v3/scopes")(self.scopes)
        self.scripted_route("POST", SEND_PATH)(self.mail_send)
        self.scripted_route("POST", DOMAINS_PATH)(self.create_domain)

    def add_key(self, key: str, scopes: list[str] | None = None) -> str:
        self.keys[key] = scopes if scopes is not None else ["mail.send", "user.profile.read"]
        return key

    def _key(self, request: Request) -> str | None:
        header = request.headers.get("authorization", "")
        return header.removeprefix("Bearer ") if header.startswith("Bearer ") else None

    def scopes(self, request: Request) -> Reply:
        key = self._key(request)
        if key not in self.keys:
            return Reply(401, UNAUTHORIZED)
        return Reply(200, {"scopes": self.keys[key]})

    # --- failure modes -------------------------------------------------------------------------

    def rate_limit_next(self, reset_in_s: float = 7) -> None:
        """The next send answers 429 as SendGrid does: X-RateLimit-Reset, a Unix time."""
        headers = {
            "X-RateLimit-Limit": "600",
            "X-RateLimit-Remaining": "0",
            "X-RateLimit-Reset": str(int(time.time() + reset_in_s)),
        }
        self.script("POST", SEND_PATH, Reply(429, TOO_MANY, headers))

    # --- mail send -----------------------------------------------------------------------------

    def mail_send(self, request: Request) -> Reply:
        key = self._key(request)
        if key not in self.keys:
            return Reply(401, UNAUTHORIZED)
        if "mail.send" not in self.keys[key]:
            return Reply(403, FORBIDDEN)
        try:
            body = request.json()
        except ValueError:
            return bad_request("Bad Request", None)
        problem = self._check(body)
        if problem is not None:
            return problem
        message_id = secrets.token_urlsafe(16)[:22]
        self.sent.append((message_id, body))
        return Reply(202, None, {"X-Message-Id": message_id})

    def _check(self, body: Any) -> Reply | None:
        personalizations = body.get("personalizations") if isinstance(body, dict) else None
        if not personalizations:
            return bad_request(
                "The personalizations field is required and must have at least one personalization.",
                "personalizations",
            )
        for index, personalization in enumerate(personalizations):
            if not personalization.get("to"):
                return bad_request(
                    "The to array is required for all personalization objects, and must have at least one email "
                    "object with a valid email address.",
                    f"personalizations.{index}.to",
                )
            for kind in ("to", "cc", "bcc"):
                for n, address in enumerate(personalization.get(kind) or []):
                    email = address.get("email", "")
                    if "@" not in email or email in self.reject:
                        return bad_request(
                            "Does not contain a valid address.", f"personalizations.{index}.{kind}.{n}.email"
                        )
        if not (body.get("from") or {}).get("email"):
            return bad_request(
                "The from object must be provided for every email send. It is an object that requires an email "
                "parameter, but may also contain a name parameter.",
                "from.email",
            )
        if not body.get("subject"):
            return bad_request(
                "The subject is required. You can get around this requirement if you use a template with a subject "
                "defined or if every personalization has a subject defined.",
                "subject",
            )
        content = body.get("content") or []
        if not content or any(not part.get("value") for part in content):
            return bad_request(
                "Unless a valid template_id is provided, the content parameter is required. There must be at least "
                "one defined content block.",
                "content",
            )
        types = [part.get("type") for part in content]
        if "text/plain" in types and types[0] != "text/plain":
            return bad_request(
                "If present, text/plain must be first, followed by text/html, followed by any other content.",
                "content",
            )
        return None

    # --- domain authentication -----------------------------------------------------------------

    def publish_dns(self, domain: str) -> None:
        """The tenant published the records: the next validation finds them."""
        self.published.add(domain)

    def create_domain(self, request: Request) -> Reply:
        key = self._key(request)
        if key not in self.keys:
            return Reply(401, UNAUTHORIZED)
        body = request.json()
        name = body.get("domain", "")
        if not name or "." not in name:
            return bad_request("invalid domain", "domain")
        if any(d["domain"] == name for d in self.domains_by_id.values()):
            return bad_request("A domain with this name already exists.", "domain")
        domain_id = next(self._ids)
        subdomain = body.get("subdomain") or "em1234"
        user = "u1234"
        if body.get("automatic_security", True):
            dns = {
                "mail_cname": {
                    "valid": False,
                    "type": "cname",
                    "host": f"{subdomain}.{name}",
                    "data": f"{user}.wl.sendgrid.net",
                },
                "dkim1": {
                    "valid": False,
                    "type": "cname",
                    "host": f"s1._domainkey.{name}",
                    "data": f"s1.domainkey.{user}.wl.sendgrid.net",
                },
                "dkim2": {
                    "valid": False,
                    "type": "cname",
                    "host": f"s2._domainkey.{name}",
                    "data": f"s2.domainkey.{user}.wl.sendgrid.net",
                },
            }
        else:
            dns = {
                "mail_server": {"valid": False, "type": "mx", "host": f"{subdomain}.{name}", "data": "mx.sendgrid.net"},
                "subdomain_spf": {
                    "valid": False,
                    "type": "txt",
                    "host": f"{subdomain}.{name}",
                    "data": "v=spf1 include:sendgrid.net ~all",
                },
                "dkim": {
                    "valid": False,
                    "type": "txt",
                    "host": f"m1._domainkey.{name}",
                    "data": "k=rsa; t=s; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQ",
                },
            }
        domain = {
            "id": domain_id,
            "user_id": 1234,
            "subdomain": subdomain,
            "domain": name,
            "username": "herald-test",
            "ips": [],
            "custom_spf": False,
            "default": False,
            "legacy": False,
            "automatic_security": bool(body.get("automatic_security", True)),
            "valid": False,
            "dns": dns,
        }
        self.domains_by_id[domain_id] = domain
        self.route("GET", f"{DOMAINS_PATH}/{domain_id}")(self.get_domain)
        self.scripted_route("POST", f"{DOMAINS_PATH}/{domain_id}/validate")(self.validate_domain)
        return Reply(201, domain)

    def _domain(self, request: Request) -> dict[str, Any]:
        return self.domains_by_id[int(request.path.removeprefix(DOMAINS_PATH + "/").split("/")[0])]

    def get_domain(self, request: Request) -> Reply:
        if self._key(request) not in self.keys:
            return Reply(401, UNAUTHORIZED)
        return Reply(200, self._domain(request))

    def validate_domain(self, request: Request) -> Reply:
        if self._key(request) not in self.keys:
            return Reply(401, UNAUTHORIZED)
        domain = self._domain(request)
        found = domain["domain"] in self.published
        results = {}
        for purpose, record in domain["dns"].items():
            record["valid"] = found
            reason = None if found else f'Expected CNAME for "{record["host"]}" to match "{record["data"]}".'
            results[purpose] = {"valid": found, "reason": reason}
        domain["valid"] = found
        return Reply(200, {"id": domain["id"], "valid": found, "validation_results": results})
