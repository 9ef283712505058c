"""Postmark's API as documented: the server token travels in
`X-Postmark-Server-Token`; `GET /server` answers the server, or 401 with
ErrorCode 10 for a missing or wrong token."""

from __future__ import annotations

from tests.standins.server import Reply, Request, StandIn

BAD_TOKEN = {
    "ErrorCode": 10,
    "Message": "No Account or Server API tokens were supplied in the HTTP headers. "
    "Please add a header for either X-Postmark-Server-Token or X-Postmark-Account-Token.",
}


class PostmarkStandIn(StandIn):
    def __init__(self) -> None:
        super().__init__()
        self.tokens: set[str] = set()
        self.route("GET", "/server")(self.server_info)

    def add_token(self, token: str) -> str:
        self.tokens.add(token)
        return token

    def server_info(self, request: Request) -> Reply:
        if request.headers.get("x-postmark-server-token") not in self.tokens:
            return Reply(401, BAD_TOKEN)
        return Reply(200, {"ID": 1, "Name": "Herald test server", "Color": "blue"})
