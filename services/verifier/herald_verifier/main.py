"""`herald run verifier`: gRPC status service plus the public HTTP receiver."""

from __future__ import annotations

from typing import Any

import grpc

from herald.asgi import serve_asgi
from herald.service import ServiceRuntime, run_service
from herald.v1 import verifier_pb2, verifier_pb2_grpc
from herald_verifier.http import create_app

SUPPORTED_PROVIDERS: list[str] = []


class VerifierServicer(verifier_pb2_grpc.VerifierServiceServicer):
    async def GetVerifierStatus(
        self, request: verifier_pb2.GetVerifierStatusRequest, context: grpc.aio.ServicerContext[Any, Any]
    ) -> verifier_pb2.GetVerifierStatusResponse:
        return verifier_pb2.GetVerifierStatusResponse(providers=SUPPORTED_PROVIDERS)


async def build(runtime: ServiceRuntime) -> None:
    settings = runtime.settings
    verifier_pb2_grpc.add_VerifierServiceServicer_to_server(VerifierServicer(), runtime.grpc.server)
    runtime.grpc.register([verifier_pb2.DESCRIPTOR.services_by_name["VerifierService"].full_name])
    app = create_app()
    runtime.add_loop(lambda: serve_asgi(app, settings.http_host, settings.http_port, runtime.stopping))


def run() -> None:
    run_service("verifier", build)
