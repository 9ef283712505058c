"""open_channel spreads calls over every address a name resolves to (round_robin), not one pinned connection."""

from __future__ import annotations

from collections import Counter

import grpc

from herald.grpcio.client import open_channel

METHOD = "/herald.test.Echo/Who"


def _identity(name: bytes) -> grpc.GenericRpcHandler:
    async def who(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        return name

    handler = grpc.unary_unary_rpc_method_handler(who)
    return grpc.method_handlers_generic_handler("herald.test.Echo", {"Who": handler})


async def _start(name: bytes) -> tuple[grpc.aio.Server, int]:
    server = grpc.aio.server()
    server.add_generic_rpc_handlers((_identity(name),))
    port = server.add_insecure_port("127.0.0.1:0")
    await server.start()
    return server, port


async def test_calls_spread_over_two_servers_behind_one_name() -> None:
    first, first_port = await _start(b"first")
    second, second_port = await _start(b"second")
    try:
        channel = open_channel(f"ipv4:127.0.0.1:{first_port},127.0.0.1:{second_port}")
        async with channel:
            await channel.channel_ready()
            who = channel.unary_unary(METHOD)
            answers = Counter([await who(b"", wait_for_ready=True) for _ in range(20)])
        assert set(answers) == {b"first", b"second"}, answers
    finally:
        await first.stop(None)
        await second.stop(None)


async def test_a_plain_host_and_port_still_works() -> None:
    server, port = await _start(b"only")
    try:
        async with open_channel(f"127.0.0.1:{port}") as channel:
            assert await channel.unary_unary(METHOD)(b"", wait_for_ready=True) == b"only"
    finally:
        await server.stop(None)
