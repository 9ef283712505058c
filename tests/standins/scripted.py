"""Scripted answers for stand-in routes: tests queue what a route answers next (a status
with a body and headers, or a stall past the caller's timeout), then the route goes back
to its documented behaviour. Built on `StandIn` without changing it: routes registered
through `scripted_route` look at their queue first."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass

from tests.standins.server import Reply, Request, Route, StandIn


@dataclass(frozen=True)
class Stall:
    """Hold the request for `seconds` (past the client's timeout), then answer `then`, or
    what the route would have answered."""

    seconds: float
    then: Reply | None = None


Step = Reply | Stall


class ScriptedStandIn(StandIn):
    def __init__(self) -> None:
        super().__init__()
        self._scripts: dict[tuple[str, str], deque[Step]] = defaultdict(deque)
        self._script_lock = threading.Lock()

    def script(self, method: str, path: str, *steps: Step) -> None:
        """Queue the next answers of `method path`, one per request."""
        with self._script_lock:
            self._scripts[(method, path)].extend(steps)

    def scripted_route(self, method: str, path: str) -> Callable[[Route], Route]:
        def register(handler: Route) -> Route:
            self.route(method, path)(self._scripted(method, path, handler))
            return handler

        return register

    def received(self, method: str, path: str) -> list[Request]:
        """The requests recorded for one route, oldest first."""
        return [r for r in self.requests if r.method == method and r.path == path]

    def close(self) -> None:
        """Stops the server without waiting out its 0.5 s poll: connections wake the loop."""
        stopper = threading.Thread(target=self.server.shutdown, daemon=True)
        stopper.start()
        address = self.server.server_address
        while stopper.is_alive():
            with contextlib.suppress(OSError):
                socket.create_connection((str(address[0]), int(address[1])), timeout=0.2).close()
            stopper.join(0.02)
        self.server.server_close()

    def _scripted(self, method: str, path: str, handler: Route) -> Route:
        def answer(request: Request) -> Reply:
            with self._script_lock:
                queue = self._scripts.get((method, path))
                step = queue.popleft() if queue else None
            if isinstance(step, Stall):
                time.sleep(step.seconds)
                return step.then if step.then is not None else handler(request)
            if step is not None:
                return step
            return handler(request)

        return answer
