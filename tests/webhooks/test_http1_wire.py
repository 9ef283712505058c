"""The receiver client's HTTP/1.1 (`herald.webhooks.http1`) against raw servers on loopback
that answer exactly what each test writes: the answers receivers really give (chunked, read to
the connection's end, an interim 100 before the real one), a kept-alive connection the receiver
closes just as a request goes out, and requests the client must not write."""

from __future__ import annotations

import asyncio
import base64
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field

import pytest

from herald.webhooks.receiver_client import ReceiverClient
from herald.webhooks.retry_policy import ReceiverCallError, error_class
from herald.webhooks.target_guard import AllowList, TargetGuard
from tests.webhooks.local_servers import StandInDNS

OK = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"


@dataclass
class Request:
    head: bytes
    body: bytes
    connection: int


@dataclass
class RawServer:
    """Reads each request (head and Content-Length body), then lets `answer` write what it will:
    `answer(request, writer)` returns False to close the connection instead of reading on."""

    answer: Callable[[Request, asyncio.StreamWriter], bool]
    requests: list[Request] = field(default_factory=list)
    port: int = 0
    _connections: int = 0

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._connections += 1
        connection = self._connections
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    if line.lower().startswith(b"content-length:"):
                        length = int(line.split(b":", 1)[1])
                request = Request(head, await reader.readexactly(length), connection)
                self.requests.append(request)
                keep = self.answer(request, writer)
                await writer.drain()
                if not keep:
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        writer.close()


async def running(answer: Callable[[Request, asyncio.StreamWriter], bool]) -> tuple[RawServer, asyncio.Server]:
    raw = RawServer(answer)
    server = await asyncio.start_server(raw.handle, "127.0.0.1", 0)
    raw.port = server.sockets[0].getsockname()[1]
    return raw, server


@pytest.fixture
async def client() -> AsyncIterator[ReceiverClient]:
    made = ReceiverClient(
        TargetGuard(AllowList.parse("", loopback=True), resolver=StandInDNS({"hooks.example.test": ["127.0.0.1"]})),
        timeout_s=3,
        connections=4,
    )
    yield made
    await made.close()


def always(data: bytes, keep: bool = True) -> Callable[[Request, asyncio.StreamWriter], bool]:
    def answer(request: Request, writer: asyncio.StreamWriter) -> bool:
        writer.write(data)
        return keep

    return answer


async def test_a_chunked_answer_is_read_whole_and_the_connection_kept(client: ReceiverClient) -> None:
    chunked = b"HTTP/1.1 202 Accepted\r\ntransfer-encoding: chunked\r\n\r\n4\r\nwell\r\n6\r\n taken\r\n0\r\n\r\n"
    raw, server = await running(always(chunked))
    try:
        for _ in range(2):
            answer = await client.post(f"http://127.0.0.1:{raw.port}/in", b"x", {})
            assert (answer.status_code, answer.excerpt) == (202, b"well taken")
        assert {r.connection for r in raw.requests} == {1}, "one connection, kept alive"
    finally:
        server.close()


async def test_an_answer_delimited_by_the_connection_end_is_read_whole(client: ReceiverClient) -> None:
    raw, server = await running(always(b"HTTP/1.1 200 OK\r\nconnection: close\r\n\r\nall of it", keep=False))
    try:
        for _ in range(2):
            answer = await client.post(f"http://127.0.0.1:{raw.port}/", b"x", {})
            assert (answer.status_code, answer.excerpt) == (200, b"all of it")
        assert [r.connection for r in raw.requests] == [1, 2], "a closed connection is not reused"
    finally:
        server.close()


async def test_an_interim_answer_is_skipped_for_the_real_one(client: ReceiverClient) -> None:
    interim = b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\nx-final: yes\r\ncontent-length: 4\r\n\r\ndone"
    raw, server = await running(always(interim))
    try:
        answer = await client.post(f"http://127.0.0.1:{raw.port}/", b"x", {})
        assert (answer.status_code, answer.excerpt, answer.header("X-Final")) == (201, b"done", "yes")
    finally:
        server.close()


async def test_a_request_written_on_a_kept_alive_connection_and_left_unanswered_is_the_calls_failure(
    client: ReceiverClient,
) -> None:
    """The receiver answers the first request of each connection and closes the connection when
    the second arrives, without a word: the receiver read it and may have acted on it, so the call
    fails (an attempt), and the request is not sent again behind the caller's back."""

    def first_only(request: Request, writer: asyncio.StreamWriter) -> bool:
        if sum(r.connection == request.connection for r in raw.requests) > 1:
            return False
        writer.write(OK)
        return True

    raw, server = await running(first_only)
    try:
        assert (await client.post(f"http://127.0.0.1:{raw.port}/", b"one", {})).status_code == 200
        with pytest.raises(ReceiverCallError) as failed:
            await client.post(f"http://127.0.0.1:{raw.port}/", b"two", {})
        assert error_class(failed.value) == "protocol"
        assert [(r.body, r.connection) for r in raw.requests] == [(b"one", 1), (b"two", 1)]
    finally:
        server.close()


async def test_a_kept_alive_connection_the_receiver_closed_while_idle_is_replaced_unwritten(
    client: ReceiverClient,
) -> None:
    """The receiver answers (keep-alive) and then closes the connection: the next call finds it
    closed before writing anything and goes out on a new connection, one request in all."""
    raw, server = await running(always(OK, keep=False))
    try:
        assert (await client.post(f"http://127.0.0.1:{raw.port}/", b"one", {})).status_code == 200
        await asyncio.sleep(0)  # the close may still be on its way: the client looks before it writes
        assert (await client.post(f"http://127.0.0.1:{raw.port}/", b"two", {})).status_code == 200
        assert [(r.body, r.connection) for r in raw.requests] == [(b"one", 1), (b"two", 2)]
    finally:
        server.close()


async def test_a_new_connection_closed_without_an_answer_is_a_protocol_failure(client: ReceiverClient) -> None:
    raw, server = await running(lambda request, writer: False)
    try:
        with pytest.raises(ReceiverCallError) as failed:
            await client.post(f"http://127.0.0.1:{raw.port}/", b"x", {})
        assert error_class(failed.value) == "protocol"
        assert len(raw.requests) == 1, "sent once: a fresh connection is not retried"
    finally:
        server.close()


async def fails_as_protocol(client: ReceiverClient, answer: Callable[[Request, asyncio.StreamWriter], bool]) -> None:
    """A call to a receiver answering with `answer` fails, classed "protocol"."""
    raw, server = await running(answer)
    try:
        with pytest.raises(ReceiverCallError) as failed:
            await client.post(f"http://127.0.0.1:{raw.port}/", b"x", {})
        assert error_class(failed.value) == "protocol"
    finally:
        server.close()


async def test_an_answer_that_is_not_http_is_a_protocol_failure(client: ReceiverClient) -> None:
    await fails_as_protocol(client, always(b"SSH-2.0-OpenSSH_9.6\r\n\r\n"))


async def test_the_request_is_framed_by_the_client_alone(client: ReceiverClient) -> None:
    """Host from the URL, Content-Length from the body; a caller's framing headers are dropped and
    a header that would split the request is refused before anything is written."""
    raw, server = await running(always(OK))
    try:
        url = f"http://hooks.example.test:{raw.port}/in?a=1"
        sent = {"Content-Length": "999", "Transfer-Encoding": "chunked", "Host": "elsewhere", "X-A": "1"}
        assert (await client.post(url, b"body", sent)).status_code == 200
        [request] = raw.requests
        lines = request.head.decode().split("\r\n")
        assert lines[0] == "POST /in?a=1 HTTP/1.1"
        names = [line.split(":", 1)[0].lower() for line in lines[1:] if line]
        assert sorted(names) == ["accept", "content-length", "host", "x-a"]
        assert f"Host: hooks.example.test:{raw.port}" in lines and "Content-Length: 4" in lines
        assert request.body == b"body"

        for bad in ({"X-B": "v\r\nX-Injected: 1"}, {"X-B\r\nX-Injected": "1"}, {"X-B": "v\nw"}):
            with pytest.raises(ReceiverCallError):
                await client.post(url, b"body", bad)
        assert len(raw.requests) == 1
    finally:
        server.close()


async def test_credentials_in_the_url_are_sent_as_basic_auth(client: ReceiverClient) -> None:
    raw, server = await running(always(OK))
    try:
        assert (await client.post(f"http://hook:s%40cret@127.0.0.1:{raw.port}/", b"x", {})).status_code == 200
        expected = "Basic " + base64.b64encode(b"hook:s@cret").decode()
        assert f"Authorization: {expected}" in raw.requests[0].head.decode().split("\r\n")
        assert f"Host: 127.0.0.1:{raw.port}" in raw.requests[0].head.decode().split("\r\n")
    finally:
        server.close()


async def test_a_body_larger_than_one_write_arrives_whole(client: ReceiverClient) -> None:
    raw, server = await running(always(OK))
    try:
        body = bytes(range(256)) * 20_000  # 5 MB
        assert (await client.post(f"http://127.0.0.1:{raw.port}/", body, {})).status_code == 200
        assert raw.requests[0].body == body
    finally:
        server.close()


async def test_an_endless_head_is_cut_off_as_a_protocol_failure(client: ReceiverClient) -> None:
    """A receiver that sends header after header (or one endless header) gets a protocol failure
    once the head passes 64 KiB, long before the call's timeout: it cannot make us hold more."""

    def endless(request: Request, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\n" + b"".join(b"X-%d: %s\r\n" % (i, b"v" * 100) for i in range(2000)))
        return True

    def one_long(request: Request, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"HTTP/1.1 200 OK\r\nX-Long: " + b"v" * 300_000)
        return True

    await fails_as_protocol(client, endless)
    await fails_as_protocol(client, one_long)


async def test_a_head_and_a_long_body_in_one_read_are_an_answer(client: ReceiverClient) -> None:
    body = b"y" * 200_000
    raw, server = await running(always(b"HTTP/1.1 200 OK\r\ncontent-length: %d\r\n\r\n%s" % (len(body), body)))
    try:
        answer = await client.post(f"http://127.0.0.1:{raw.port}/", b"x", {})
        assert (answer.status_code, len(answer.excerpt)) == (200, 4096)
    finally:
        server.close()


async def test_a_body_cut_short_by_the_connection_is_a_protocol_failure(client: ReceiverClient) -> None:
    """Content-Length says 100 and 5 bytes come before the receiver closes: a broken answer, as
    for a chunked body without its last chunk. Only an answer with neither ends with the
    connection (tested above)."""
    await fails_as_protocol(client, always(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\nshort", keep=False))
    await fails_as_protocol(
        client, always(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n5\r\nshort\r\n", keep=False)
    )
