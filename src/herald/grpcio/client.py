"""Client channels that carry the caller's trace context to the next hop."""

from __future__ import annotations

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


def open_channel(address: str) -> grpc.aio.Channel:
    return grpc.aio.insecure_channel(address, options=CHANNEL_OPTIONS, interceptors=[TracePropagation()])
