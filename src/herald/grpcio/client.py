"""Client channels that carry the caller's trace context to the next hop."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import grpc
from opentelemetry import propagate

from herald.grpcio.options import CHANNEL_OPTIONS


class TracePropagation(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    async def intercept_unary_unary(
        self,
        continuation: Callable[[grpc.aio.ClientCallDetails, Any], Any],
        details: grpc.aio.ClientCallDetails,
        request: Any,
    ) -> Any:
        carrier: dict[str, str] = {}
        propagate.inject(carrier)
        if carrier:
            metadata = grpc.aio.Metadata(*(details.metadata or ()))
            for key, value in carrier.items():
                metadata.add(key, value)
            details = grpc.aio.ClientCallDetails(
                details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
            )
        return await continuation(details, request)


# Spread calls over every address the name resolves to. The default policy (pick_first) pins one HTTP/2
# connection to one pod, so replicas behind a headless Service (dns:///herald-ledger:50051) would sit idle.
# Over a single address (127.0.0.1:port locally) round_robin behaves like pick_first.
ROUND_ROBIN_SERVICE_CONFIG = json.dumps({"loadBalancingConfig": [{"round_robin": {}}]})


def open_channel(address: str) -> grpc.aio.Channel:
    options: list[tuple[str, int | str]] = [*CHANNEL_OPTIONS, ("grpc.service_config", ROUND_ROBIN_SERVICE_CONFIG)]
    return grpc.aio.insecure_channel(address, options=options, interceptors=[TracePropagation()])
