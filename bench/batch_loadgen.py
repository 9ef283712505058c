"""Closed-loop batch load generator for `make bench MODE=batch` (and MODE=stream).

N webhooks submitted as `POST /v1/webhooks/batch` requests of BATCH items each, over C
concurrent keep-alive connections (each with one request in flight), 16 tenants (batch j uses
tenant j % 16), each item with the same 223-byte JSON payload as the peers' loadgen.js and its
own idempotency key `<run-id>-<i>`. It prints one JSON object with loadgen.js's fields, so the
peers' summarize.py reads it unchanged, except that `ok` counts accepted jobs and `rps` is
accepted jobs per second (the latencies are per batch request); `batch_rps` is requests per
second, and `first_accept_ms` is when the first batch was sent (so delivered jobs/s counts
from the start of the load). Its own CPU is reported apart (`loadgen_cpu_s`), as
grpc_loadgen.py does.

With --grpc TARGET (MODE=stream), each batch is one `NotificationService.SubmitWebhooks`
stream of BATCH items instead, and each item counts as accepted when its own result arrives.

Usage: python bench/batch_loadgen.py --url http://127.0.0.1:PORT --n 20000 --c 4 --batch 1000 \
           --hook http://127.0.0.1:7070/hook --keys keys.json [--run-id X] [--accepts FILE] [--grpc HOST:PORT]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import grpc
import httpx
import orjson
from grpc_loadgen import payload, percentile

from herald.v1 import gateway_pb2, gateway_pb2_grpc


@dataclass
class State:
    next_batch: int = 0
    ok: int = 0
    errors: int = 0
    first: float | None = None
    last: float | None = None
    latencies: list[float] = field(default_factory=list)
    status: dict[str, int] = field(default_factory=dict)
    accepts: list[str] = field(default_factory=list)


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True, help="the gateway's HTTP base URL")
    ap.add_argument("--n", type=int, default=20000)
    ap.add_argument("--c", type=int, default=4)
    ap.add_argument("--batch", type=int, default=1000)
    ap.add_argument("--hook", default="http://127.0.0.1:7070/hook")
    ap.add_argument("--keys", required=True)
    ap.add_argument("--run-id", default=secrets.token_hex(4))
    ap.add_argument("--accepts", default="")
    ap.add_argument("--grpc", default="", help="the gateway's gRPC address: submit over SubmitWebhooks streams")
    a = ap.parse_args()
    keys: list[str] = json.loads(Path(a.keys).read_text())  # noqa: ASYNC240 - before the load starts
    batches = [range(start, min(start + a.batch, a.n)) for start in range(0, a.n, a.batch)]
    # The bodies are built before the clock starts: the client's work is not the server's time.
    bodies = [
        orjson.dumps(
            {
                "items": [
                    {"url": a.hook, "payload": json.loads(payload(i, a.run_id)), "idempotency_key": f"{a.run_id}-{i}"}
                    for i in batch
                ]
            }
        )
        for batch in batches
    ]
    state = State()

    async def loop(client: httpx.AsyncClient) -> None:
        while state.next_batch < len(batches):
            j = state.next_batch
            state.next_batch += 1
            headers = {"authorization": f"Bearer {keys[j % len(keys)]}", "content-type": "application/json"}
            t0 = time.perf_counter()
            try:
                response = await client.post("/v1/webhooks/batch", content=bodies[j], headers=headers)
            except httpx.HTTPError as error:
                state.errors += len(batches[j])
                state.status[type(error).__name__] = state.status.get(type(error).__name__, 0) + len(batches[j])
                continue
            state.latencies.append((time.perf_counter() - t0) * 1000)
            now_ms = time.time() * 1000
            results: list[dict[str, Any]] = orjson.loads(response.content)["results"] if response.is_success else []
            if not results:
                state.errors += len(batches[j])
                code = str(response.status_code)
                state.status[code] = state.status.get(code, 0) + len(batches[j])
                continue
            for result in results:
                code = str(result["status"])
                state.status[code] = state.status.get(code, 0) + 1
                if result["status"] == 202:
                    state.ok += 1
                    if a.accepts:
                        state.accepts.append(f"{result['id']} {now_ms:.3f}")
                else:
                    state.errors += 1
            state.first = state.first or now_ms
            state.last = now_ms

    streams = [
        [
            gateway_pb2.SubmitWebhooksRequest(
                webhook=gateway_pb2.SendWebhookRequest(
                    url=a.hook, body=payload(i, a.run_id), idempotency_key=f"{a.run_id}-{i}"
                )
            )
            for i in batch
        ]
        for batch in (batches if a.grpc else [])
    ]

    async def stream_loop(stub: gateway_pb2_grpc.NotificationServiceAsyncStub) -> None:
        while state.next_batch < len(batches):
            j = state.next_batch
            state.next_batch += 1
            metadata = (("authorization", f"Bearer {keys[j % len(keys)]}"),)
            t0 = time.perf_counter()
            try:
                async for answer in stub.SubmitWebhooks(iter(streams[j]), metadata=metadata, timeout=120):
                    code = "OK" if not answer.HasField("error") else str(answer.error.code)
                    state.status[code] = state.status.get(code, 0) + 1
                    if answer.HasField("error"):
                        state.errors += 1
                        continue
                    state.ok += 1
                    state.last = time.time() * 1000
                    if a.accepts:
                        state.accepts.append(f"{answer.id} {state.last:.3f}")
            except grpc.aio.AioRpcError as error:
                state.errors += 1
                state.status[error.code().name] = state.status.get(error.code().name, 0) + 1
            state.latencies.append((time.perf_counter() - t0) * 1000)
            state.first = state.first or time.time() * 1000

    limits = httpx.Limits(max_connections=1, max_keepalive_connections=1)
    clients = [httpx.AsyncClient(base_url=a.url, timeout=120, limits=limits) for _ in range(a.c)]
    channels = [
        grpc.aio.insecure_channel(a.grpc, options=[("grpc.use_local_subchannel_pool", 1)])
        for _ in range(a.c if a.grpc else 0)
    ]
    stubs: list[gateway_pb2_grpc.NotificationServiceAsyncStub] = [
        gateway_pb2_grpc.NotificationServiceStub(channel)  # type: ignore[misc]
        for channel in channels
    ]
    start_ms = time.time() * 1000
    t0 = time.perf_counter()
    if a.grpc:
        await asyncio.gather(*(stream_loop(stub) for stub in stubs))
    else:
        await asyncio.gather(*(loop(c) for c in clients))
    duration = time.perf_counter() - t0
    await asyncio.gather(*(c.aclose() for c in clients), *(channel.close() for channel in channels))
    ordered = sorted(state.latencies) or [0.0]
    usage = resource.getrusage(resource.RUSAGE_SELF)
    out = {
        "n": a.n,
        "c": a.c,
        "batch": a.batch,
        "ok": state.ok,
        "errors": state.errors,
        "status": state.status,
        "run_id": a.run_id,
        "duration_s": round(duration, 3),
        "rps": round(state.ok / duration, 1),
        "batch_rps": round(len(batches) / duration, 2),
        "p50_ms": round(percentile(ordered, 50), 2),
        "p90_ms": round(percentile(ordered, 90), 2),
        "p99_ms": round(percentile(ordered, 99), 2),
        "max_ms": round(ordered[-1], 2),
        "mean_ms": round(sum(ordered) / len(ordered), 2),
        "loadgen_cpu_s": round(usage.ru_utime + usage.ru_stime, 2),
        "start_ms": start_ms,
        # The clock of "delivered jobs/s" starts when the first batch is sent, not when it is answered
        # (its jobs are delivered meanwhile): the conservative reading for a batch of hundreds.
        "first_accept_ms": start_ms if state.first else None,
        "last_accept_ms": state.last,
        "client": "batch_loadgen.py" + (" (SubmitWebhooks streams)" if a.grpc else ""),
    }
    if a.accepts:
        Path(a.accepts).write_text("\n".join(state.accepts) + ("\n" if state.accepts else ""))  # noqa: ASYNC240
    print(json.dumps(out))


if __name__ == "__main__":
    asyncio.run(main())
