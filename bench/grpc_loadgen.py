"""Closed-loop gRPC load generator for `make bench MODE=grpc`.

The gRPC counterpart of the peers' tools/loadgen.js, with the same semantics: exactly N
`NotificationService.SendWebhook` calls over C concurrent connections (one channel, so one
HTTP/2 connection, per client loop, each with one call in flight), 16 tenants (request i uses
tenant i % 16), unique idempotency keys `<run-id>-<i>`, and the same 223-byte JSON payload as
loadgen.js. It prints one JSON object with the same fields as loadgen.js, so the peers'
summarize.py reads it unchanged.

Usage: python bench/grpc_loadgen.py --target 127.0.0.1:PORT --n 5000 --c 64 \
           --hook http://127.0.0.1:7070/hook --keys keys.json [--run-id X] [--accepts FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import secrets
import time
from dataclasses import dataclass
from pathlib import Path

import grpc

from herald.v1 import gateway_pb2, gateway_pb2_grpc


def payload(i: int, run_id: str) -> bytes:
    """Byte for byte the payload loadgen.js sends (JSON.stringify order, no spaces)."""
    value = {
        "event": "order.created",
        "seq": i,
        "data": {
            "order_id": f"ord_{run_id}_{i}",
            "amount": 4999,
            "currency": "USD",
            "customer": {"id": f"cus_{i % 997}", "email": f"user{i % 997}@example.com"},
            "items": [{"sku": "SKU-1", "qty": 1}, {"sku": "SKU-2", "qty": 2}],
        },
    }
    return json.dumps(value, separators=(",", ":")).encode()


@dataclass
class State:
    next: int = 0
    ok: int = 0
    errors: int = 0
    first: float | None = None
    last: float | None = None


def percentile(ordered: list[float], p: float) -> float:
    return ordered[min(len(ordered) - 1, int(p / 100 * len(ordered)))]


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--target", required=True)
    ap.add_argument("--n", type=int, default=5000)
    ap.add_argument("--c", type=int, default=64)
    ap.add_argument("--hook", default="http://127.0.0.1:7070/hook")
    ap.add_argument("--keys", required=True)
    ap.add_argument("--run-id", default=secrets.token_hex(4))
    ap.add_argument("--accepts", default="")
    a = ap.parse_args()
    keys: list[str] = json.loads(Path(a.keys).read_text())  # noqa: ASYNC240 - before the load starts
    metadata = [(("authorization", f"Bearer {k}"),) for k in keys]

    n = a.n
    lat = [0.0] * n
    status: dict[str, int] = {}
    accepts: list[str] = []
    state = State()
    # Distinct channel arguments keep gRPC from sharing one subchannel (one TCP connection) between channels.
    channels = [
        grpc.aio.insecure_channel(a.target, options=[("grpc.use_local_subchannel_pool", 1)]) for _ in range(a.c)
    ]
    stubs: list[gateway_pb2_grpc.NotificationServiceAsyncStub] = [
        gateway_pb2_grpc.NotificationServiceStub(ch)  # type: ignore[misc]
        for ch in channels
    ]
    await asyncio.gather(*(ch.channel_ready() for ch in channels))

    async def loop(stub: gateway_pb2_grpc.NotificationServiceAsyncStub) -> None:
        while True:
            i = state.next
            state.next = i + 1
            if i >= n:
                return
            request = gateway_pb2.SendWebhookRequest(
                url=a.hook,
                body=payload(i, a.run_id),
                content_type="application/json",
                idempotency_key=f"{a.run_id}-{i}",
            )
            t0 = time.perf_counter()
            try:
                answer = await stub.SendWebhook(request, metadata=metadata[i % len(keys)], timeout=60)
                t1 = time.perf_counter()
                state.ok += 1
                code = "OK"
                now_ms = time.time() * 1000
                state.first = state.first or now_ms
                state.last = now_ms
                if a.accepts:
                    accepts.append(f"{answer.id} {now_ms:.3f}")
            except grpc.aio.AioRpcError as error:
                t1 = time.perf_counter()
                state.errors += 1
                code = error.code().name
            lat[i] = (t1 - t0) * 1000
            status[code] = status.get(code, 0) + 1

    start_ms = time.time() * 1000
    t0 = time.perf_counter()
    await asyncio.gather(*(loop(s) for s in stubs))
    duration = time.perf_counter() - t0
    await asyncio.gather(*(ch.close() for ch in channels))
    ordered = sorted(lat)
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out = {
        "n": n,
        "c": a.c,
        "ok": state.ok,
        "errors": state.errors,
        "status": status,
        "run_id": a.run_id,
        "duration_s": round(duration, 3),
        "rps": round(n / duration, 1),
        "p50_ms": round(percentile(ordered, 50), 2),
        "p90_ms": round(percentile(ordered, 90), 2),
        "p99_ms": round(percentile(ordered, 99), 2),
        "max_ms": round(ordered[-1], 2),
        "mean_ms": round(sum(ordered) / n, 2),
        "loadgen_cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "start_ms": start_ms,
        "first_accept_ms": state.first,
        "last_accept_ms": state.last,
        "client": "grpc_loadgen.py",
    }
    if a.accepts:
        Path(a.accepts).write_text("\n".join(accepts) + ("\n" if accepts else ""))  # noqa: ASYNC240 - after it ended
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
