"""Where operator alerts land in the tests: a Slack-compatible incoming webhook
(`POST /slack` with `{"text": ...}`, answered `ok` as Slack does) and an operational
webhook (`POST /ops`, JSON). Records every alert."""

from __future__ import annotations

import threading
import time
from typing import Any

from tests.standins.server import Reply, Request, StandIn


class AlertReceiver(StandIn):
    def __init__(self) -> None:
        super().__init__()
        self._arrived = threading.Condition()
        self.route("POST", "/slack")(self._slack)
        self.route("POST", "/ops")(self._ops)

    @property
    def slack_url(self) -> str:
        return f"{self.base_url}/slack"

    @property
    def ops_url(self) -> str:
        return f"{self.base_url}/ops"

    def _slack(self, request: Request) -> Reply:
        with self._arrived:
            self._arrived.notify_all()
        return Reply(200, "ok")

    def _ops(self, request: Request) -> Reply:
        with self._arrived:
            self._arrived.notify_all()
        return Reply(204)

    def slack(self) -> list[dict[str, Any]]:
        return [r.json() for r in list(self.requests) if r.path == "/slack"]

    def ops(self) -> list[dict[str, Any]]:
        return [r.json() for r in list(self.requests) if r.path == "/ops"]

    def wait_for(self, text: str, timeout: float = 15.0) -> list[dict[str, Any]]:
        """The Slack alerts whose text contains `text`, once there is at least one."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while True:
                found = [a for a in self.slack() if text in a.get("text", "")]
                if found or time.monotonic() >= deadline:
                    return found
                self._arrived.wait(timeout=max(deadline - time.monotonic(), 0.01))
