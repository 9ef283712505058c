"""SendGrid's v3 API as documented: Bearer API keys, `GET /v3/scopes` lists the
key's permissions; 401 with an `errors` array for a bad key."""

from __future__ import annotations

from tests.standins.server import Reply, Request, StandIn

UNAUTHORIZED = {"errors": [{"field": None, "message": "authorization required"}]}


class SendGridStandIn(StandIn):
    def __init__(self) -> None:
        super().__init__()
        # key -> scopes
        self.keys: dict[str, list[str]] = {}
        self.route("GET", "/v3/scopes")(self.scopes)

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
