"""A small threaded HTTP server that provider stand-ins build on: routes by method
and path, records every request, and can be switched into failure modes (answer
5xx, or stall past the caller's timeout)."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass
class Request:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


Route = Callable[[Request], Reply]


class StandIn:
    def __init__(self) -> None:
        self.routes: dict[tuple[str, str], Route] = {}
        self.requests: list[Request] = []
        self.fail_with: int | None = None
        self.stall_s = 0.0
        stand_in = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def _handle(self) -> None:
                length = int(self.headers.get("content-length") or 0)
                request = Request(
                    self.command,
                    self.path.split("?", 1)[0],
                    {k.lower(): v for k, v in self.headers.items()},
                    self.rfile.read(length),
                )
                stand_in.requests.append(request)
                if stand_in.stall_s:
                    time.sleep(stand_in.stall_s)
                if stand_in.fail_with is not None:
                    reply = Reply(stand_in.fail_with, {"message": "stand-in failure mode"})
                else:
                    route = stand_in.routes.get((self.command, request.path))
                    reply = route(request) if route else Reply(404, {"message": "no such route"})
                payload = b"" if reply.body is None else json.dumps(reply.body).encode()
                try:
                    self.send_response(reply.status)
                    for name, value in {"content-type": "application/json", **reply.headers}.items():
                        self.send_header(name, value)
                    self.send_header("content-length", str(len(payload)))
                    self.end_headers()
                    self.wfile.write(payload)
                except OSError:
                    pass

            do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = _handle

            def log_message(self, format: str, *args: object) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def route(self, method: str, path: str) -> Callable[[Route], Route]:
        def register(handler: Route) -> Route:
            self.routes[(method, path)] = handler
            return handler

        return register

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
