"""The life of a service process, the same for all six: logging, tracing and
/metrics come up first, then the gRPC server with health and reflection, then the
service's own loops. SIGTERM reverses it: health turns NOT_SERVING (so load
balancers stop sending), the service's stop hooks finish or hand back in-flight
work, and the gRPC server drains within the grace period."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import signal
from collections.abc import Awaitable, Callable, Coroutine, Iterable
from typing import Any

from herald.config import Settings, get_settings
from herald.grpcio.mesh import MeshTls
from herald.grpcio.server import GrpcServer
from herald.telemetry import configure_logging, configure_tracing, start_metrics_server

log = logging.getLogger("herald.service")

StopHook = Callable[[], Awaitable[None]]


class ServiceRuntime:
    def __init__(
        self, name: str, settings: Settings, grpc_options: Iterable[tuple[str, int]] = (), public: bool = False
    ) -> None:
        """`public`: its gRPC port faces tenants (the gateway's: API keys), so it is not on the mesh,
        though its channels to the other services are."""
        self.name = name
        self.settings = settings
        self.public = public
        # The mesh's mutual TLS (herald.grpcio.mesh): this service's certificate, None for plaintext.
        self.mesh = MeshTls.from_settings(settings)
        self.grpc = GrpcServer(name, grpc_options)
        self._loops: list[Callable[[], Coroutine[Any, Any, None]]] = []
        self._tasks: list[asyncio.Task[None]] = []
        self._stop_hooks: list[StopHook] = []
        self._stopping = asyncio.Event()

    @property
    def stopping(self) -> asyncio.Event:
        return self._stopping

    def add_loop(self, loop: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """A long-running task started with the server. It must return soon after
        `stopping` is set; one still running after the grace period is cancelled."""
        self._loops.append(loop)

    def on_stop(self, hook: StopHook) -> None:
        """Closes a resource at shutdown, after the loops ended; most recent first."""
        self._stop_hooks.append(hook)

    async def serve(self) -> None:
        metrics_port = start_metrics_server(self.settings.metrics_port, self.settings.grpc_host)
        grpc_port = await self.grpc.start(
            self.settings.grpc_host,
            self.settings.grpc_port,
            None if self.public else self.mesh,
            self.settings.health_port,
        )
        for loop in self._loops:
            self._tasks.append(asyncio.create_task(self._guard(loop), name=loop.__qualname__))
        await self.grpc.set_serving(True)
        log.info("service started", extra={"grpc_port": grpc_port, "metrics_port": metrics_port})
        running = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            running.add_signal_handler(sig, self._stopping.set)
        await self._stopping.wait()
        await self.shutdown()

    async def shutdown(self) -> None:
        """Stops taking calls, lets the loops finish what they hold (they watch
        `stopping`), cancels any that overrun the grace period (their unacknowledged
        messages go back to the bus), then closes resources."""
        log.info("service stopping")
        self._stopping.set()
        await self.grpc.set_serving(False)
        await self.grpc.stop(grace=min(5.0, self.settings.shutdown_grace_s))
        if self._tasks:
            _done, overrun = await asyncio.wait(self._tasks, timeout=self.settings.shutdown_grace_s)
            for task in overrun:
                task.cancel()
            for task in overrun:
                with contextlib.suppress(asyncio.CancelledError):
                    await task
        for hook in reversed(self._stop_hooks):
            try:
                await asyncio.wait_for(hook(), timeout=self.settings.shutdown_grace_s)
            except Exception:
                log.exception("stop hook failed")
        log.info("service stopped")

    async def _guard(self, loop: Callable[[], Coroutine[Any, Any, None]]) -> None:
        """Restarts a loop that crashed, so one bad message cannot stop a service silently."""
        while not self._stopping.is_set():
            try:
                await loop()
                return
            except asyncio.CancelledError:
                raise
            except Exception:
                log.exception("loop crashed; restarting", extra={"loop": loop.__qualname__})
                await asyncio.sleep(1.0)


# The young generation's size, in allocations between collections (CPython's default: 700).
YOUNG_GENERATION_ALLOCATIONS = 20_000


def settle_heap() -> None:
    """Takes what the start built (modules, stubs, table metadata: most of the heap) out of the
    cyclic collector's sight, and lets more allocations pass between young collections.

    A job's objects (protobuf messages, dicts, futures) die by reference counting; with
    CPython's defaults the collector still runs a young collection every 700 allocations,
    and now and then a full one that walks the whole long-lived heap again, in the middle
    of some request. Cycles are still collected, only less often."""
    gc.collect()
    gc.freeze()
    _young, middle, old = gc.get_threshold()
    gc.set_threshold(YOUNG_GENERATION_ALLOCATIONS, middle, old)


def run_service(
    name: str,
    build: Callable[[ServiceRuntime], Awaitable[None]],
    grpc_options: Callable[[Settings], Iterable[tuple[str, int]]] | None = None,
    public: bool = False,
) -> None:
    """Entry point body of every service: `herald run NAME` ends up here. `grpc_options`: server
    options of this service's own, from its settings (the gateway's maximum connection age).
    `public`: its gRPC port faces tenants, off the mesh (the gateway). Every service runs at the
    priority it was started with: a sender at a lower one is starved by whatever else runs on the
    machine, and its deliveries wait (docs/performance.md, the open loop)."""
    settings = get_settings()
    configure_logging(name, settings.log_level)
    configure_tracing(name)

    async def main() -> None:
        runtime = ServiceRuntime(name, settings, grpc_options(settings) if grpc_options is not None else (), public)
        await build(runtime)
        settle_heap()
        await runtime.serve()

    try:
        import uvloop

        uvloop.run(main())
    except ImportError:
        asyncio.run(main())
