"""`herald run gateway`: HTTP and gRPC front doors over one set of operations."""

from __future__ import annotations

from herald.asgi import serve_asgi
from herald.bus.subjects import Subjects
from herald.config import Settings
from herald.grpcio.client import open_channel
from herald.grpcio.ledger import Ledger
from herald.grpcio.options import max_connection_age
from herald.http_health import Health, grpc_dependency, jetstream_dependency
from herald.http_limits import HttpLimits
from herald.service import ServiceRuntime, run_service
from herald.v1 import email_sender_pb2_grpc, gateway_pb2, gateway_pb2_grpc, router_pb2_grpc, webhook_sender_pb2_grpc
from herald_gateway.auth import ApiKeyAuthenticator, OperatorAuthenticator
from herald_gateway.grpc.admin import AdminServicer
from herald_gateway.grpc.notification import NotificationServicer
from herald_gateway.http.app import create_app
from herald_gateway.http.middleware import MAX_REQUEST_BYTES
from herald_gateway.idempotency import Idempotency
from herald_gateway.invalidation import Bus, flush_uses_periodically, follow_changes
from herald_gateway.operations import Operations
from herald_gateway.rate_limit import RateLimiter
from herald_gateway.target_check import TargetCheck


async def build(runtime: ServiceRuntime) -> None:
    settings = runtime.settings
    ledger_channel = open_channel(settings.ledger_addr, runtime.mesh, "ledger")
    router_channel = open_channel(settings.router_addr, runtime.mesh, "router")
    email_sender_channel = open_channel(settings.email_sender_addr, runtime.mesh, "email-sender")
    ledger = Ledger.over(ledger_channel)
    bus = Bus(
        dead_letter_stream=settings.stream_name("dlq"),
        streams=tuple(settings.stream_name(name) for name in ("intake", "work", "dlq", "inbound")),
    )
    operations = Operations(
        ledger,
        router_pb2_grpc.RouterServiceStub(router_channel),
        email_sender_pb2_grpc.EmailSenderServiceStub(email_sender_channel),
        bus.read_dead_letter,
    )
    operations.target_check = TargetCheck.from_settings(settings)
    operations.target_in_flight_max = settings.webhook_target_in_flight_max
    operations.webhook_sender = webhook_sender_pb2_grpc.WebhookSenderServiceStub(
        open_channel(settings.webhook_sender_addr)
    )
    tenants = ApiKeyAuthenticator(ledger, settings.auth_cache_ttl_s)
    operators = OperatorAuthenticator(ledger)
    rate_limiter = RateLimiter(fail_open=settings.rate_limit_fail_open)
    operations.on_erased = (tenants.forget_erased, rate_limiter.forget)
    idempotency = Idempotency(ledger)

    gateway_pb2_grpc.add_NotificationServiceServicer_to_server(
        NotificationServicer(operations, tenants, rate_limiter), runtime.grpc.server
    )
    gateway_pb2_grpc.add_AdminServiceServicer_to_server(AdminServicer(operations, operators), runtime.grpc.server)
    runtime.grpc.register(
        [gateway_pb2.DESCRIPTOR.services_by_name[name].full_name for name in ("NotificationService", "AdminService")]
    )
    # Reflection shows the operator surface to operators only.
    admin_service = gateway_pb2.DESCRIPTOR.services_by_name["AdminService"].full_name
    runtime.grpc.hide_from_reflection(admin_service, operators.may_see)
    app = create_app(operations, tenants, operators, rate_limiter, idempotency)
    app.state.bus = bus  # GET /admin/v1/streams reads depth and lag through it
    limits = HttpLimits(
        max_body_bytes=MAX_REQUEST_BYTES,
        head_timeout_s=settings.http_head_timeout_s,
        body_timeout_s=settings.http_body_timeout_s,
        keep_alive_s=settings.http_keep_alive_s,
    )
    health = Health(
        [
            grpc_dependency("router", router_channel),
            grpc_dependency("ledger", ledger_channel),
            jetstream_dependency("bus", lambda: bus.js),
        ],
        runtime.stopping,
    )
    runtime.add_loop(
        lambda: serve_asgi(app, settings.http_host, settings.http_port, runtime.stopping, limits, health=health)
    )
    subjects = Subjects(settings.bus_prefix)
    runtime.add_loop(
        lambda: follow_changes(
            settings,
            subjects,
            tenants,
            rate_limiter,
            settings.stream_name("rate"),
            runtime.stopping,
            bus,
        )
    )
    runtime.add_loop(lambda: flush_uses_periodically(tenants, settings.api_key_touch_interval_s, runtime.stopping))

    async def close() -> None:
        await tenants.flush_uses()
        for channel in (ledger_channel, router_channel, email_sender_channel):
            await channel.close()

    runtime.on_stop(close)


def grpc_options(settings: Settings) -> list[tuple[str, int]]:
    """The public gRPC server closes connections after a maximum age (streams included, after
    the grace): a long-lived connection is re-established, and re-authenticated, regularly."""
    return max_connection_age(settings.grpc_max_connection_age_s, settings.grpc_max_connection_age_grace_s)


def run() -> None:
    # Its gRPC port faces tenants (API keys), not the mesh; its calls to the services go over the mesh.
    run_service("gateway", build, grpc_options, public=True)
