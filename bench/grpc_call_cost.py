"""CPU per unary gRPC call, each side in its own process: what the tracing machinery costs when
nothing exports spans (docs/performance.md, "Per-job costs"); and what the same round trip costs
as a message and its answer on a bidirectional stream kept open, the cheapest a hop's call
could become in grpc.aio (docs/performance.md, "What stands in the way").

Usage: python bench/grpc_call_cost.py [CALLS] [ROUNDS]

Server side: a server with Herald's `TelemetryInterceptor`, once as it runs without an exporter
(no span) and once on its span path under the unsampled provider (a non-recording span and the
caller's context extracted per call, as every call did before). Client side: a channel with and
without the `TracePropagation` interceptor. Stream: both sides without either. Each figure is
the measured process's CPU (user + system, all its threads) over CALLS sequential calls,
divided by CALLS.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from typing import Any

import grpc
import uvloop

from herald.grpcio.client import TracePropagation
from herald.grpcio.server import TelemetryInterceptor
from herald.telemetry import tracing

BODY = b"x" * 100


async def _echo(request: bytes, context: object) -> bytes:
    return request


async def _echo_stream(requests: Any, context: object) -> Any:
    async for request in requests:
        yield request


async def _serve(port: int, spans: bool) -> None:
    tracing.configure_tracing("bench")
    tracing._exporting = spans  # the span path, under the unsampled provider configure_tracing chose
    server = grpc.aio.server(interceptors=[TelemetryInterceptor("bench")])
    handlers: Any = {
        "M": grpc.unary_unary_rpc_method_handler(_echo),
        "B": grpc.stream_stream_rpc_method_handler(_echo_stream),
    }
    server.add_generic_rpc_handlers((grpc.method_handlers_generic_handler("b.S", handlers),))
    server.add_insecure_port(f"127.0.0.1:{port}")
    await server.start()
    print("up", flush=True)
    await server.wait_for_termination()


async def _streamed(port: int, n: int) -> float:
    """CPU seconds of this process over `n` round trips on one open stream."""
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stream: Any = channel.stream_stream("/b.S/B")()
        for _ in range(200):
            await stream.write(BODY)
            await stream.read()
        started = time.process_time()
        for _ in range(n):
            await stream.write(BODY)
            await stream.read()
        used = time.process_time() - started
        await stream.done_writing()
        return used


async def _calls(port: int, n: int, intercepted: bool) -> float:
    """CPU seconds of this process over `n` calls."""
    interceptors = [TracePropagation()] if intercepted else None
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}", interceptors=interceptors) as channel:
        call: Any = channel.unary_unary("/b.S/M")
        for _ in range(200):
            await call(BODY)
        started = time.process_time()
        for _ in range(n):
            await call(BODY)
        return time.process_time() - started


def _cpu_s(pid: int) -> float:
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server(spans: bool) -> tuple[subprocess.Popen[bytes], int]:
    port = _free_port()
    proc = subprocess.Popen([sys.executable, __file__, "serve", str(port), str(int(spans))], stdout=subprocess.PIPE)
    assert proc.stdout is not None
    proc.stdout.readline()
    return proc, port


def main() -> None:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 5000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 3
    for _ in range(rounds):
        line = []
        for spans in (True, False):
            proc, port = _server(spans)
            try:
                uvloop.run(_calls(port, 200, False))
                before = _cpu_s(proc.pid)
                uvloop.run(_calls(port, n, False))
                line.append(f"server {'span' if spans else 'no span'} {(_cpu_s(proc.pid) - before) / n * 1e6:.0f} us")
            finally:
                proc.kill()
                proc.wait()
        proc, port = _server(False)
        try:
            for intercepted in (True, False):
                cpu = uvloop.run(_calls(port, n, intercepted))
                line.append(f"client {'interceptor' if intercepted else 'none'} {cpu / n * 1e6:.0f} us")
            before = _cpu_s(proc.pid)
            cpu = uvloop.run(_streamed(port, n))
            line.append(f"stream server {(_cpu_s(proc.pid) - before) / n * 1e6:.0f} us, client {cpu / n * 1e6:.0f} us")
        finally:
            proc.kill()
            proc.wait()
        print("; ".join(line), flush=True)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "serve":
        uvloop.run(_serve(int(sys.argv[2]), sys.argv[3] == "1"))
    else:
        main()
