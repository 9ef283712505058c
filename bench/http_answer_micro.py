"""What one HTTP answer costs the server, with and without its head held for its body:
`python bench/http_answer_micro.py [N] [ROUNDS]`.

A server process runs a tiny ASGI app (read the body, answer 202 with a small JSON body, as the
submit routes do) on `herald.asgi.serve_asgi`, the services' own HTTP server; a client process
sends N keep-alive POSTs over 16 connections. Measured from /proc for the server process only:
CPU time and write system calls per request. "held" is the services' server as it is
(`herald.http_limits.HeadHeld`); "unheld" swaps HeadHeld for the bare transport, so uvicorn
writes the head and the body apart. Rounds alternate between the two. Not a test and not
`make bench`: a quick, quiet-machine comparison (docs/performance.md, "Measurements behind the defaults").
"""

from __future__ import annotations

import asyncio
import os
import socket
import statistics
import subprocess
import sys
import time
from typing import Any

CONNECTIONS = 16
BODY = b'{"id":"0190f0f0-0000-7000-8000-000000000000","status":"queued"}'
REQUEST = (
    b"POST /v1/webhooks HTTP/1.1\r\nHost: bench\r\nContent-Type: application/json\r\nContent-Length: 60\r\n\r\n"
    + b"x" * 60
)


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] != "http":
        return
    while (await receive()).get("more_body"):
        pass
    headers = [(b"content-type", b"application/json"), (b"content-length", b"%d" % len(BODY))]
    await send({"type": "http.response.start", "status": 202, "headers": headers})
    await send({"type": "http.response.body", "body": BODY})


def serve(port: int, mode: str) -> None:
    import uvloop

    import herald.http_limits as http_limits
    from herald.asgi import serve_asgi

    if mode == "unheld":
        http_limits.HeadHeld = lambda transport, loop: transport  # type: ignore[assignment,misc]
    uvloop.run(serve_asgi(app, "127.0.0.1", port, asyncio.Event(), http_limits.HttpLimits()))


def load(port: int, n: int) -> None:
    import uvloop

    async def one_connection(count: int) -> None:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        for _ in range(count):
            writer.write(REQUEST)
            head = await reader.readuntil(b"\r\n\r\n")
            start = head.lower().index(b"content-length: ") + 16
            await reader.readexactly(int(head[start : head.index(b"\r\n", start)]))
        writer.close()

    async def main() -> None:
        await asyncio.gather(*(one_connection(n // CONNECTIONS) for _ in range(CONNECTIONS)))

    uvloop.run(main())


def server_counters(pid: int) -> tuple[float, int]:
    """CPU seconds and write system calls of a process so far."""
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    io = dict(line.split(": ") for line in open(f"/proc/{pid}/io").read().splitlines())
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), int(io["syscw"])


def measure(mode: str, n: int, port: int) -> tuple[float, float]:
    """Server CPU µs and writes per request, for one round."""
    server = subprocess.Popen([sys.executable, __file__, "serve", str(port), mode])
    try:
        deadline = time.monotonic() + 20
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        subprocess.run([sys.executable, __file__, "load", str(port), "2000"], check=True)  # warm-up
        cpu_before, writes_before = server_counters(server.pid)
        subprocess.run([sys.executable, __file__, "load", str(port), str(n)], check=True)
        cpu_after, writes_after = server_counters(server.pid)
    finally:
        server.terminate()
        server.wait()
    return (cpu_after - cpu_before) / n * 1e6, (writes_after - writes_before) / n


def main() -> None:
    if sys.argv[1:2] == ["serve"]:
        serve(int(sys.argv[2]), sys.argv[3])
        return
    if sys.argv[1:2] == ["load"]:
        load(int(sys.argv[2]), int(sys.argv[3]))
        return
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 32_000
    rounds = int(sys.argv[2]) if len(sys.argv) > 2 else 4
    from herald.cli.embedded import free_port

    results: dict[str, list[tuple[float, float]]] = {"held": [], "unheld": []}
    for _ in range(rounds):
        for mode in results:
            results[mode].append(measure(mode, n, free_port()))
    for mode, rows in results.items():
        cpu = statistics.median(r[0] for r in rows)
        writes = statistics.median(r[1] for r in rows)
        per_round = ", ".join(f"{r[0]:.1f}" for r in rows)
        print(
            f"{mode:>7}: {cpu:5.1f} µs of server CPU per request (rounds: {per_round}), {writes:.2f} writes an answer"
        )
    held, unheld = (statistics.median(r[0] for r in results[m]) for m in ("held", "unheld"))
    print(f"held / unheld CPU per request: {held / unheld:.2f}x ({n} requests a round, {CONNECTIONS} connections)")


if __name__ == "__main__":
    main()
