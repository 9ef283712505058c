"""A real SMTP server (aiosmtpd) with AUTH, for provider validation and delivery."""

from __future__ import annotations

from typing import Any

from aiosmtpd.controller import Controller
from aiosmtpd.smtp import AuthResult, LoginPassword

from herald.cli.embedded import free_port


class SmtpStandIn:
    def __init__(self, username: str, password: str) -> None:
        self.username = username
        self.password = password
        self.messages: list[Any] = []
        stand_in = self

        class Handler:
            async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:
                stand_in.messages.append(envelope)
                return "250 Message accepted for delivery"

        def authenticate(server: Any, session: Any, envelope: Any, mechanism: str, auth_data: Any) -> AuthResult:
            ok = (
                isinstance(auth_data, LoginPassword)
                and auth_data.login.decode() == stand_in.username
                and auth_data.password.decode() == stand_in.password
            )
            return AuthResult(success=ok)

        self.port = free_port()
        self.controller = Controller(
            Handler(),
            hostname="127.0.0.1",
            port=self.port,
            authenticator=authenticate,
            auth_require_tls=False,
            auth_required=True,
        )
        self.controller.start()

    def close(self) -> None:
        self.controller.stop()
