"""A grpc.aio server with what every Herald service needs: health checking,
reflection, per-RPC metrics and spans (trace context read from metadata; no span at all when
nothing exports them, see herald.telemetry.tracing), and a clear INVALID_ARGUMENT for request
bytes that are no message of the method's type."""

from __future__ import annotations

import contextlib
import inspect
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable
from typing import Any

import grpc
from grpc_health.v1 import health, health_pb2, health_pb2_grpc
from grpc_reflection.v1alpha import reflection
from grpc_reflection.v1alpha.reflection_pb2_grpc import add_ServerReflectionServicer_to_server
from opentelemetry import propagate, trace

from herald.grpcio.errors import abort_invalid
from herald.grpcio.mesh import MeshTls
from herald.grpcio.options import CHANNEL_OPTIONS
from herald.grpcio.reflection import GuardedReflection, MaySee
from herald.telemetry import tracing
from herald.telemetry.metrics import RPC_SECONDS

_tracer = trace.get_tracer("herald.grpc.server")


class Undecodable:
    """Handed to the handler in place of a request whose bytes did not decode.

    grpc calls the request deserializer outside the handler: left to raise, the
    exception becomes status UNKNOWN and a logged traceback, for what is only a
    caller's mistake. The handler answers INVALID_ARGUMENT instead.
    """

    __slots__ = ("reason",)

    def __init__(self, reason: str) -> None:
        self.reason = reason


def tolerant(deserializer: Callable[[bytes], Any] | None) -> Callable[[bytes], Any] | None:
    """`deserializer` that returns an `Undecodable` rather than raising."""
    if deserializer is None:
        return None

    def deserialize(raw: bytes) -> Any:
        try:
            return deserializer(raw)
        except Exception as error:  # protobuf's DecodeError; anything another deserializer raises
            return Undecodable(type(error).__name__)

    return deserialize


# Says why an exception a handler raised is of one kind (the caller's mistake, answered
# INVALID_ARGUMENT; a dependency away, answered UNAVAILABLE), or None when it is not.
Explains = Callable[[Exception], str | None]


# The statuses `GrpcServer.relay_downstream` passes on: the service behind is away or out of time.
AWAY = frozenset({grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED})
# The one trailing entry passed on with a relayed status: its rich details (google.rpc.Status).
RICH_DETAILS_KEY = "grpc-status-details-bin"


def rich_details(error: grpc.aio.AioRpcError) -> tuple[tuple[str, str | bytes], ...]:
    """What of a failed call's trailing metadata is relayed: its rich status details alone."""
    return tuple((key, value) for key, value in (error.trailing_metadata() or ()) if key == RICH_DETAILS_KEY)


class TelemetryInterceptor(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    def __init__(self, service: str) -> None:
        self.service = service
        self.caller_mistake: Explains | None = None
        self.outage: Explains | None = None
        # A call to another service that found it away is answered with that status (see
        # `GrpcServer.relay_downstream`); otherwise it is an error of this one (UNKNOWN, logged).
        self.relays = False
        # Per method, its observed handler when no span is made (see `intercept_service`).
        self._unspanned: dict[str, Any] = {}

    async def intercept_service(
        self,
        continuation: Callable[[grpc.HandlerCallDetails], Awaitable[Any]],
        details: grpc.HandlerCallDetails,
    ) -> Any:
        handler = await continuation(details)
        if handler is None:
            return None
        if handler.unary_stream is not None:
            return _refusing_undecodable_stream(handler, details.method)
        if handler.stream_stream is not None or handler.stream_unary is not None:
            return _refusing_undecodable_messages(handler, details.method)
        method: str = details.method
        if not tracing.exporting():
            # No span to make: the method's observed handler is the same for every call.
            observed = self._unspanned.get(method)
            if observed is None:
                observed = self._unspanned[method] = self._observed(handler, method, None)
            return observed
        carrier = {k: v for k, v in (details.invocation_metadata or ()) if isinstance(v, str)}
        return self._observed(handler, method, carrier)

    def _observed(self, handler: Any, method: str, carrier: dict[str, str] | None) -> Any:
        """`handler` with its duration observed, a caller's mistake answered INVALID_ARGUMENT
        and, with `carrier` (the call's metadata, when spans are exported), a server span that
        continues the caller's trace."""
        inner = handler.unary_unary
        service = self.service
        mistake = self.caller_mistake
        outage = self.outage
        interceptor = self

        async def observed(request: Any, context: Any) -> Any:
            started = time.perf_counter()
            code = "OK"
            if type(request) is Undecodable:
                RPC_SECONDS.labels(service, method, "INVALID_ARGUMENT").observe(time.perf_counter() - started)
                await abort_invalid(context, [("request", f"is not a valid message for {method} ({request.reason})")])
            span = (
                _tracer.start_as_current_span(method, context=propagate.extract(carrier), kind=trace.SpanKind.SERVER)
                if carrier is not None
                else contextlib.nullcontext()
            )
            with span:
                try:
                    return await inner(request, context)
                except BaseException as error:
                    reason = mistake(error) if mistake is not None and isinstance(error, Exception) else None
                    if reason is not None:
                        code = "INVALID_ARGUMENT"
                        await abort_invalid(context, [("request", reason)])
                    away = outage(error) if outage is not None and isinstance(error, Exception) else None
                    if away is not None:
                        code = "UNAVAILABLE"
                        await context.abort(grpc.StatusCode.UNAVAILABLE, away)
                    if interceptor.relays and isinstance(error, grpc.aio.AioRpcError) and error.code() in AWAY:
                        code = error.code().name
                        await context.abort(error.code(), error.details() or "", rich_details(error))
                    status = context.code()
                    code = status.name if isinstance(status, grpc.StatusCode) else "UNKNOWN"
                    raise
                finally:
                    RPC_SECONDS.labels(service, method, code).observe(time.perf_counter() - started)

        return grpc.unary_unary_rpc_method_handler(
            observed,
            request_deserializer=tolerant(handler.request_deserializer),
            response_serializer=handler.response_serializer,
        )


def _refusing_undecodable_stream(handler: Any, method: str) -> Any:
    """A server-streaming method (health Watch) with the same INVALID_ARGUMENT for bytes that do not
    decode; the handler keeps its own shape (an async generator, or a coroutine that writes)."""
    inner = handler.unary_stream

    async def refuse(request: Undecodable, context: Any) -> None:
        await abort_invalid(context, [("request", f"is not a valid message for {method} ({request.reason})")])

    if inspect.isasyncgenfunction(inner):

        async def generated(request: Any, context: Any) -> AsyncIterator[Any]:
            if type(request) is Undecodable:
                await refuse(request, context)
            async for response in inner(request, context):
                yield response

        guarded: Callable[..., Any] = generated
    else:

        async def written(request: Any, context: Any) -> Any:
            if type(request) is Undecodable:
                await refuse(request, context)
            return await inner(request, context)

        guarded = written
    return grpc.unary_stream_rpc_method_handler(
        guarded,
        request_deserializer=tolerant(handler.request_deserializer),
        response_serializer=handler.response_serializer,
    )


def _refusing_undecodable_messages(handler: Any, method: str) -> Any:
    """A client-streaming method (the streaming submits, reflection): a message of the stream that
    does not decode ends the call with INVALID_ARGUMENT, as for a single request; the handler
    never sees it and nothing is logged as an error."""
    streams_back = handler.stream_stream is not None
    inner = handler.stream_stream if streams_back else handler.stream_unary

    def checked(requests: AsyncIterator[Any], context: Any) -> AsyncIterator[Any]:
        async def messages() -> AsyncIterator[Any]:
            async for request in requests:
                if type(request) is Undecodable:
                    await abort_invalid(
                        context, [("request", f"is not a valid message for {method} ({request.reason})")]
                    )
                yield request

        return messages()

    if streams_back and inspect.isasyncgenfunction(inner):

        async def generated(requests: AsyncIterator[Any], context: Any) -> AsyncIterator[Any]:
            async for response in inner(checked(requests, context), context):
                yield response

        guarded: Callable[..., Any] = generated
    else:

        async def called(requests: AsyncIterator[Any], context: Any) -> Any:
            return await inner(checked(requests, context), context)

        guarded = called
    make = grpc.stream_stream_rpc_method_handler if streams_back else grpc.stream_unary_rpc_method_handler
    return make(
        guarded,
        request_deserializer=tolerant(handler.request_deserializer),
        response_serializer=handler.response_serializer,
    )


class GrpcServer:
    """Owns the server and its health servicer; services add their servicers first."""

    def __init__(self, service: str, options: Iterable[tuple[str, int]] = ()) -> None:
        self.service = service
        self._telemetry = TelemetryInterceptor(service)
        self.server = grpc.aio.server(interceptors=[self._telemetry], options=[*CHANNEL_OPTIONS, *options])
        self.health = health.aio.HealthServicer()
        health_pb2_grpc.add_HealthServicer_to_server(self.health, self.server)
        self._service_names: list[str] = [health_pb2.DESCRIPTOR.services_by_name["Health"].full_name]
        self._health_only: grpc.aio.Server | None = None
        self._hidden: tuple[str, MaySee] | None = None

    def refuse_as_invalid(self, mistake: Explains) -> None:
        """Exceptions `mistake` explains (a value the database cannot hold, say) are answered
        INVALID_ARGUMENT with its reason, without a logged traceback: the request can never
        succeed, so neither UNKNOWN nor a retry is right."""
        self._telemetry.caller_mistake = mistake

    def answer_unavailable(self, outage: Explains) -> None:
        """Exceptions `outage` explains (a dependency that is away) are answered UNAVAILABLE with
        its reason, without a logged traceback: the request may succeed when retried."""
        self._telemetry.outage = outage

    def relay_downstream(self) -> None:
        """A call to another service that finds it away or out of time (AWAY) is answered with that
        status and message, without a logged traceback: for a hop that passes requests on (the
        router), whose caller then retries as it would had it called that service itself. Other
        failures stay this hop's own error (UNKNOWN): in a coalesced call (the submissions of many
        requests in one) one caller's INVALID_ARGUMENT would otherwise reach every caller."""
        self._telemetry.relays = True

    def register(self, full_names: Iterable[str]) -> None:
        self._service_names.extend(full_names)

    def hide_from_reflection(self, full_name: str, may_see: MaySee) -> None:
        """Reflection shows `full_name` only to callers `may_see` lets through (herald.grpcio.reflection)."""
        self._hidden = (full_name, may_see)

    async def start(self, host: str, port: int, mesh: MeshTls | None = None, health_port: int = 0) -> int:
        """Serves on host:port, with mutual TLS when `mesh` is given (the internal services);
        `health_port` (nonzero) adds a plaintext listener serving gRPC health only, for probes
        that cannot present a certificate."""
        names = [*self._service_names, reflection.SERVICE_NAME]
        if self._hidden is None:
            reflection.enable_server_reflection(names, self.server)
        else:
            add_ServerReflectionServicer_to_server(GuardedReflection(names, *self._hidden), self.server)
        address = f"{host}:{port}"
        if mesh is None:
            bound = self.server.add_insecure_port(address)
        else:
            bound = self.server.add_secure_port(address, mesh.server_credentials())
        await self.server.start()
        if health_port:
            self._health_only = grpc.aio.server(options=CHANNEL_OPTIONS)
            health_pb2_grpc.add_HealthServicer_to_server(self.health, self._health_only)
            self._health_only.add_insecure_port(f"{host}:{health_port}")
            await self._health_only.start()
        return int(bound)

    async def set_serving(self, serving: bool) -> None:
        status = health_pb2.HealthCheckResponse.SERVING if serving else health_pb2.HealthCheckResponse.NOT_SERVING
        for name in ["", *self._service_names]:
            await self.health.set(name, status)

    async def stop(self, grace: float) -> None:
        await self.server.stop(grace)
        if self._health_only is not None:
            await self._health_only.stop(0)
