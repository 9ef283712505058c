"""Resend's API as documented: Bearer API keys; a key with sending access only
answers 401 `restricted_api_key` on other endpoints; an invalid key 400
`validation_error`; no key 401 `missing_api_key`."""

from __future__ import annotations

from tests.standins.server import Reply, Request, StandIn


class ResendStandIn(StandIn):
    def __init__(self) -> None:
        super().__init__()
        # key -> "full_access" | "sending_access"
        self.keys: dict[str, str] = {}
        self.route("GET", "/domains")(self.domains)

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
