"""Postmark's API as documented: the server token travels in
`X-Postmark-Server-Token`; `GET /server` answers the server, or 401 with
ErrorCode 10 for a missing or wrong token.

Email (`POST /email`): 200 `{To, SubmittedAt, MessageID, ErrorCode: 0, Message: "OK"}`.
Refusals are 422 with an ErrorCode: 300 invalid email request (no From, no recipient, no
body, over 50 recipients), 406 inactive recipient (a hard bounce or complaint earlier).

Domains (account level: `X-Postmark-Account-Token`; a server token there is 401, ErrorCode
10): `POST /domains` answers the DKIM (pending) and Return-Path records; `PUT
/domains/{id}/verifyDkim` and `verifyReturnPath` check them ("published" once the test
called `publish_dns`); `GET /domains/{id}` shows them; `GET /domains?count=&offset=` lists them (Herald checks an
account token with it before storing it).
"""

from __future__ import annotations

import itertools
import uuid
from email.utils import getaddresses
from typing import Any

from tests.standins.scripted import ScriptedStandIn
from tests.standins.server import Reply, Request

BAD_TOKEN = {
    "ErrorCode": 10,
    "Message": "No Account or Server API tokens were supplied in the HTTP headers. "
    "Please add a header for either X-Postmark-Server-Token or X-Postmark-Account-Token.",
}
SEND_PATH = "/email"


def refusal(code: int, message: str, status: int = 422) -> Reply:
    return Reply(status, {"ErrorCode": code, "Message": message})


class PostmarkStandIn(ScriptedStandIn):
    def __init__(self) -> None:
        super().__init__()
        self.tokens: set[str] = set()
        self.account_tokens: set[str] = set()
        # Recipients marked inactive (hard bounce, spam complaint): ErrorCode 406.
        self.inactive: set[str] = set()
        # Accepted email bodies, in order, with the MessageID each got.
        self.sent: list[tuple[str, dict[str, Any]]] = []
        self.domains_by_id: dict[int, dict[str, Any]] = {}
        self.published: set[str] = set()
        self._ids = itertools.count(36700)
        self.route("GET", "/server")(self.server_info)
        self.scripted_route("POST", SEND_PATH)(self.send_email)
        self.scripted_route("POST", "/domains")(self.create_domain)
        self.route("GET", "/domains")(self.list_domains)

    def add_token(self, token: str) -> str:
        self.tokens.add(token)
        return token

    def add_account_token(self, token: str) -> str:
        self.account_tokens.add(token)
        return token

    def server_info(self, request: Request) -> Reply:
        if request.headers.get("x-postmark-server-token") not in self.tokens:
            return Reply(401, BAD_TOKEN)
        return Reply(200, {"ID": 1, "Name": "Herald test server", "Color": "blue"})

    # --- email ---------------------------------------------------------------------------------

    def send_email(self, request: Request) -> Reply:
        if request.headers.get("x-postmark-server-token") not in self.tokens:
            return Reply(401, BAD_TOKEN)
        body = request.json()
        sender = getaddresses([body.get("From") or ""])
        if not sender or "@" not in sender[0][1]:
            return refusal(300, f"Invalid 'From' address: '{body.get('From', '')}'.")
        recipients = [
            email for field in ("To", "Cc", "Bcc") for _name, email in getaddresses([body.get(field) or ""]) if email
        ]
        if not recipients:
            return refusal(300, "Zero recipients specified")
        if len(recipients) > 50:
            return refusal(300, "Maximum of 50 recipients allowed per email message")
        if not body.get("TextBody") and not body.get("HtmlBody"):
            return refusal(300, "Provide either email TextBody or HtmlBody or both.")
        inactive = [email for email in recipients if email in self.inactive]
        if inactive:
            return refusal(
                406,
                "You tried to send to recipient(s) that have been marked as inactive. Found inactive addresses: "
                f"{', '.join(inactive)}. Inactive recipients are ones that have generated a hard bounce, a spam "
                "complaint, or a manual suppression.",
            )
        message_id = str(uuid.uuid4())
        self.sent.append((message_id, body))
        return Reply(
            200,
            {
                "To": body.get("To"),
                "SubmittedAt": "2026-01-01T00:00:00.0000000-05:00",
                "MessageID": message_id,
                "ErrorCode": 0,
                "Message": "OK",
            },
        )

    # --- domains -------------------------------------------------------------------------------

    def publish_dns(self, domain: str) -> None:
        """The tenant published the records: the next verification finds them."""
        self.published.add(domain)

    def _account(self, request: Request) -> Reply | None:
        if request.headers.get("x-postmark-account-token") not in self.account_tokens:
            return Reply(401, BAD_TOKEN)
        return None

    def list_domains(self, request: Request) -> Reply:
        """`GET /domains?count=&offset=`: the account's domains (a check of the account token)."""
        refused = self._account(request)
        if refused is not None:
            return refused
        listed = [{"ID": i, "Name": d["Name"]} for i, d in sorted(self.domains_by_id.items())]
        return Reply(200, {"TotalCount": len(listed), "Domains": listed})

    def create_domain(self, request: Request) -> Reply:
        refused = self._account(request)
        if refused is not None:
            return refused
        body = request.json()
        name = body.get("Name", "")
        if any(d["Name"] == name for d in self.domains_by_id.values()):
            return refusal(505, "This domain already exists.")
        domain_id = next(self._ids)
        return_path = body.get("ReturnPathDomain", "")
        domain = {
            "Name": name,
            "SPFVerified": False,
            "SPFHost": name,
            "SPFTextValue": "v=spf1 a mx include:spf.mtasv.net ~all",
            "DKIMVerified": False,
            "WeakDKIM": False,
            "DKIMHost": "",
            "DKIMTextValue": "",
            "DKIMPendingHost": f"20260101000000pm._domainkey.{name}",
            "DKIMPendingTextValue": "k=rsa; p=MIGfMA0GCSqGSIb3DQEBAQUAA4GNADCBiQKBgQCFn",
            "DKIMRevokedHost": "",
            "DKIMRevokedTextValue": "",
            "SafeToRemoveRevokedKeyFromDNS": False,
            "DKIMUpdateStatus": "Pending",
            "ReturnPathDomain": return_path,
            "ReturnPathDomainVerified": False,
            "ReturnPathDomainCNAMEValue": "pm.mtasv.net",
            "ID": domain_id,
        }
        self.domains_by_id[domain_id] = domain
        self.route("GET", f"/domains/{domain_id}")(self.get_domain)
        self.scripted_route("PUT", f"/domains/{domain_id}/verifyDkim")(self.verify_dkim)
        self.scripted_route("PUT", f"/domains/{domain_id}/verifyReturnPath")(self.verify_return_path)
        return Reply(200, domain)

    def _domain(self, request: Request) -> dict[str, Any]:
        return self.domains_by_id[int(request.path.split("/")[2])]

    def get_domain(self, request: Request) -> Reply:
        return self._account(request) or Reply(200, self._domain(request))

    def verify_dkim(self, request: Request) -> Reply:
        refused = self._account(request)
        if refused is not None:
            return refused
        domain = self._domain(request)
        if domain["Name"] in self.published and not domain["DKIMVerified"]:
            domain.update(
                DKIMVerified=True,
                DKIMHost=domain["DKIMPendingHost"],
                DKIMTextValue=domain["DKIMPendingTextValue"],
                DKIMPendingHost="",
                DKIMPendingTextValue="",
                DKIMUpdateStatus="Verified",
            )
        return Reply(200, domain)

    def verify_return_path(self, request: Request) -> Reply:
        refused = self._account(request)
        if refused is not None:
            return refused
        domain = self._domain(request)
        if not domain["ReturnPathDomain"]:
            return refusal(511, "No Return-Path domain is set.")
        if domain["Name"] in self.published:
            domain["ReturnPathDomainVerified"] = True
        return Reply(200, domain)
