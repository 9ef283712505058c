"""CPU per receiver POST of one HTTP client, the way the webhook-sender calls receivers.

One client process on uvloop, `IN_FLIGHT` (5) POSTs at once over keep-alive to a local
receiver in another process (its CPU is not counted), a 200-byte JSON body, each answer read
to an excerpt. Prints CPU ms per POST and POSTs/s for each client, so a client change on the
delivery path is measured before it is made (docs/performance.md, "Measurements behind the defaults"):

    .venv/bin/python bench/client_cost.py            # httpx, aiohttp and Herald's guarded client
    .venv/bin/python bench/client_cost.py --posts 5000 --rounds 3
"""

from __future__ import annotations

import argparse
import asyncio
import multiprocessing
import socket
import statistics
import time
from collections.abc import Awaitable, Callable

import uvloop

BODY = (
    b'{"type":"orders.created.v1","data":{"id":"ord_0123456789","amount":4200,"currency":"EUR"},'
    + b'"pad":"'
    + (b"x" * 100)
    + b'"}'
)
IN_FLIGHT = 5
ANSWER = b'HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 11\r\n\r\n{"ok":true}'


def _receiver(port_out: multiprocessing.connection.Connection) -> None:  # type: ignore[name-defined]
    """A minimal keep-alive HTTP/1.1 receiver on asyncio streams: answers each request at once."""

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line[:15].lower() == b"content-length:":
                        length = int(line[15:])
                await reader.readexactly(length)
                writer.write(ANSWER)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        port_out.send(server.sockets[0].getsockname()[1])
        await server.serve_forever()

    uvloop.run(main())


Post = Callable[[], Awaitable[None]]


async def _measure(post: Post, posts: int) -> tuple[float, float]:
    for _ in range(50):  # warm: connections open, code paths hot
        await post()
    remaining = posts

    async def lane() -> None:
        nonlocal remaining
        while remaining > 0:
            remaining -= 1
            await post()

    cpu, wall = time.process_time(), time.perf_counter()
    await asyncio.gather(*(lane() for _ in range(IN_FLIGHT)))
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return cpu / posts * 1000, posts / wall


async def _httpx(url: str, posts: int, **options: object) -> tuple[float, float]:
    import httpx

    async with httpx.AsyncClient(timeout=10, follow_redirects=False, **options) as http:  # type: ignore[arg-type]

        async def post() -> None:
            async with http.stream("POST", url, content=BODY, headers={"content-type": "application/json"}) as r:
                async for _ in r.aiter_bytes():
                    break

        return await _measure(post, posts)


async def httpx_client(url: str, posts: int) -> tuple[float, float]:
    return await _httpx(url, posts, trust_env=False)


async def httpx_guarded(url: str, posts: int) -> tuple[float, float]:
    """What d87b5d9's sender ran: httpx over the target guard's httpcore backend."""
    from herald.webhooks.target_guard import AllowList, TargetGuard

    return await _httpx(url, posts, transport=TargetGuard(AllowList.parse("", loopback=True)).transport())


async def aiohttp_client(url: str, posts: int) -> tuple[float, float]:
    import aiohttp

    async with aiohttp.ClientSession(trust_env=False, timeout=aiohttp.ClientTimeout(total=10)) as http:

        async def post() -> None:
            async with http.post(
                url, data=BODY, headers={"content-type": "application/json"}, allow_redirects=False
            ) as r:
                await r.content.read(4096)

        return await _measure(post, posts)


async def herald_receiver_client(url: str, posts: int) -> tuple[float, float]:
    """The sender's own client (`herald.webhooks.receiver_client`), guard included."""
    try:
        from herald.v1 import common_pb2
        from herald.webhooks.receiver_client import ReceiverClient
        from herald.webhooks.target_guard import AllowList, TargetGuard
    except ImportError:
        return float("nan"), float("nan")
    client = ReceiverClient(TargetGuard(AllowList.parse("", loopback=True)), timeout_s=10, connections=10)
    request = common_pb2.WebhookRequest(url=url, body=BODY, content_type="application/json")
    try:

        async def post() -> None:
            result = await client.post(request.url, request.body, {"content-type": "application/json"})
            assert result.status_code == 200, result

        return await _measure(post, posts)
    finally:
        await client.close()


CLIENTS = {
    "httpx": httpx_client,
    "httpx+guard (d87b5d9)": httpx_guarded,
    "aiohttp": aiohttp_client,
    "herald ReceiverClient": herald_receiver_client,
}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--posts", type=int, default=3000)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    here, there = multiprocessing.Pipe()
    receiver = multiprocessing.Process(target=_receiver, args=(there,), daemon=True)
    receiver.start()
    try:
        port = here.recv()
        with socket.create_connection(("127.0.0.1", port)):
            pass
        url = f"http://127.0.0.1:{port}/hook"
        results: dict[str, list[tuple[float, float]]] = {name: [] for name in CLIENTS}
        for _ in range(args.rounds):  # interleaved, so machine noise hits every client alike
            for name, run in CLIENTS.items():
                results[name].append(uvloop.run(run(url, args.posts)))
        for name, runs in results.items():
            cpu = statistics.median(r[0] for r in runs)
            rate = statistics.median(r[1] for r in runs)
            spread = ", ".join(f"{r[0]:.3f}" for r in runs)
            print(f"{name:24s} CPU {cpu:.3f} ms/POST ({spread})  {rate:8.0f} POSTs/s")
    finally:
        receiver.kill()


if __name__ == "__main__":
    main()
