"""The bus of a stack that authenticates it: no client gets in without a credential, and each
service's credential refuses what that service has no business doing (a sender publishing
intake events, the gateway reading work, anyone reading another's replies). Checked against a
private nats-server started with the configuration `herald up` writes (herald.cli.bus_auth)."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Iterator

import nats
import pytest
from nats.aio.client import Client
from nats.errors import Error as NatsError

from herald.bus.connection import close, connect
from herald.bus.erasure import erase_tenant
from herald.bus.payloads import PayloadStore
from herald.bus.permissions import ADMIN_USER, INTAKE_USER, SERVICES, USERS, inbox_prefix
from herald.bus.streams import ensure_streams
from herald.cli.bus_auth import BusUsers
from herald.cli.embedded import EmbeddedNats
from herald.config import Settings

PREFIX = "acl"
WORK_STREAM = "ACL_WORK"
TENANT = "0190c2a0-0000-7000-8000-000000000001"
# How long a refusal (the server's asynchronous -ERR) is waited for.
REFUSED_WITHIN_S = 2.0

# What each credential must be refused, beside what every one of them is refused (below):
# ("pub" | "sub", subject).
REFUSED: dict[str, list[tuple[str, str]]] = {
    "ledger": [("pub", f"{PREFIX}.intake.events.{TENANT}"), ("sub", f"{PREFIX}.work.>")],
    "router": [
        ("pub", f"{PREFIX}.work.webhook.normal.0.{TENANT}"),
        ("pub", f"{PREFIX}.intake.events.{TENANT}"),
        ("pub", f"{PREFIX}.intake.operational.{TENANT}"),
    ],
    "gateway": [
        ("sub", f"{PREFIX}.work.>"),
        ("pub", f"$JS.API.STREAM.MSG.GET.{WORK_STREAM}"),
        ("pub", f"$JS.API.CONSUMER.CREATE.{WORK_STREAM}"),
        ("pub", f"$JS.API.CONSUMER.MSG.NEXT.{WORK_STREAM}.webhook-normal-0"),
        ("pub", f"{PREFIX}.work.webhook.normal.0.{TENANT}"),
    ],
    "webhook-sender": [
        ("pub", f"{PREFIX}.intake.events.{TENANT}"),
        ("pub", f"{PREFIX}.intake.operational.{TENANT}"),
        ("pub", f"{PREFIX}.work.webhook.normal.0.{TENANT}"),
        # Email work is the email-sender's.
        ("pub", f"$JS.API.CONSUMER.MSG.NEXT.{WORK_STREAM}.email-normal-0"),
        ("sub", f"{PREFIX}.work.>"),
    ],
    "email-sender": [
        ("pub", f"{PREFIX}.intake.events.{TENANT}"),
        ("pub", f"{PREFIX}.dlq.webhook.{TENANT}"),
        ("pub", f"$JS.API.CONSUMER.MSG.NEXT.{WORK_STREAM}.webhook-normal-0"),
    ],
    "verifier": [("pub", f"{PREFIX}.intake.events.{TENANT}"), ("pub", f"{PREFIX}.work.email.normal.0.{TENANT}")],
    INTAKE_USER: [
        ("pub", f"{PREFIX}.work.webhook.normal.0.{TENANT}"),
        # Herald's own events to tenants are the ledger's alone: a backend cannot forge them.
        ("pub", f"{PREFIX}.intake.operational.{TENANT}"),
        ("pub", "$JS.API.STREAM.CREATE.ACL_INTAKE"),
        ("sub", f"{PREFIX}.intake.events.>"),
        ("sub", f"{PREFIX}.control.>"),
    ],
}


def refused_of_everyone(user: str) -> list[tuple[str, str]]:
    """Nobody reads every reply, or another user's."""
    others = [u for u in USERS if u not in (user, ADMIN_USER)]
    return [("sub", "_INBOX.>"), ("sub", ">"), *(("sub", f"{inbox_prefix(other)}.>") for other in others)]


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, BusUsers]]:
    directory = tmp_path_factory.mktemp("secured-bus")
    users = BusUsers(directory / "nats-users", PREFIX)
    server = EmbeddedNats(directory, **users.server_options())
    try:
        yield server.start(), users
    finally:
        server.stop()


class Watched:
    """A connection as `user`, keeping the refusals the server sends it."""

    def __init__(self) -> None:
        self.refusals: list[str] = []
        self.nc: Client | None = None

    async def on_error(self, error: Exception) -> None:
        self.refusals.append(str(error))

    async def refused(self, kind: str, subject: str) -> bool:
        assert self.nc is not None
        before = len(self.refusals)
        if kind == "pub":
            await self.nc.publish(subject, b"{}")
        else:
            await self.nc.subscribe(subject)
        await self.nc.flush()
        deadline = asyncio.get_running_loop().time() + REFUSED_WITHIN_S
        while asyncio.get_running_loop().time() < deadline:
            if any(subject.lower() in r.lower() for r in self.refusals[before:]):
                return True
            await asyncio.sleep(0.02)
        return False


@pytest.fixture
async def as_user(secured: tuple[str, BusUsers]) -> AsyncIterator[object]:
    url, users = secured
    opened: list[Client] = []

    async def open_as(user: str) -> Watched:
        watched = Watched()
        settings = Settings(nats_url=url, nats_user_file=str(users.user_file(user)))
        watched.nc = await connect(settings, f"test-{user}")
        # The errors the service's own callback would log are what the test watches.
        watched.nc._error_cb = watched.on_error
        opened.append(watched.nc)
        return watched

    yield open_as
    for nc in opened:
        await close(nc)


async def test_a_client_without_credentials_is_refused(secured: tuple[str, BusUsers]) -> None:
    url, users = secured
    with pytest.raises(NatsError) as refused:
        await nats.connect(url, allow_reconnect=False, connect_timeout=2)
    assert "authorization" in str(refused.value).lower()
    # A known user with a wrong password fares no better.
    with pytest.raises(NatsError):
        await nats.connect(url, user="gateway", password="guessed", allow_reconnect=False, connect_timeout=2)
    # The admin credential operators are given gets in.
    user, password = users.admin()
    nc = await nats.connect(url, user=user, password=password, allow_reconnect=False, connect_timeout=2)
    await nc.jetstream().account_info()
    await nc.close()


@pytest.mark.parametrize("user", [*SERVICES, INTAKE_USER])
async def test_each_credential_refuses_what_its_user_must_not_do(user: str, as_user: object) -> None:
    watched: Watched = await as_user(user)  # type: ignore[operator]
    refused = [(k, s) for k, s in [*REFUSED[user], *refused_of_everyone(user)] if await watched.refused(k, s)]
    assert refused == [*REFUSED[user], *refused_of_everyone(user)]
    # What it may do is not refused: its own inbox, and JetStream's account info through it.
    assert watched.nc is not None
    await watched.nc.jetstream(timeout=5).account_info()
    assert not await watched.refused("sub", f"{inbox_prefix(user)}.mine")


def test_the_files_of_the_bus_users_are_their_owners_alone(secured: tuple[str, BusUsers]) -> None:
    _, users = secured
    for path in [users.config_file, *(users.user_file(u) for u in USERS)]:
        assert path.stat().st_mode & 0o777 == 0o600, path


async def test_a_large_body_travels_through_the_object_store_under_the_permissions(as_user: object) -> None:
    """The ledger stores a body too large for a work message; the webhook-sender reads and removes it."""
    ledger: Watched = await as_user("ledger")  # type: ignore[operator]
    sender: Watched = await as_user("webhook-sender")  # type: ignore[operator]
    assert ledger.nc is not None and sender.nc is not None
    bucket = f"{PREFIX}_payloads".upper()
    await PayloadStore(ledger.nc.jetstream(timeout=5), bucket).put("job-1", b"x" * 300_000)
    stored = PayloadStore(sender.nc.jetstream(timeout=5), bucket)
    assert await stored.get("job-1") == b"x" * 300_000
    await stored.delete("job-1")
    assert ledger.refusals == sender.refusals == []


async def test_the_ledger_erases_a_tenants_bus_state_under_the_permissions(
    as_user: object, secured: tuple[str, BusUsers]
) -> None:
    """A tenant's erasure (herald.bus.erasure, run by the ledger): its work, its large bodies, its
    rate window (the gateway's bucket) and its targets' pacing (the webhook-sender's) all go."""
    ledger: Watched = await as_user("ledger")  # type: ignore[operator]
    gateway: Watched = await as_user("gateway")  # type: ignore[operator]
    sender: Watched = await as_user("webhook-sender")  # type: ignore[operator]
    assert ledger.nc is not None and gateway.nc is not None and sender.nc is not None
    settings = Settings(nats_url=secured[0], bus_prefix=PREFIX)
    js = ledger.nc.jetstream(timeout=5)
    await ensure_streams(js, settings)
    job_id, target_id = uuid.uuid4(), uuid.uuid4()
    await js.publish(f"{PREFIX}.work.webhook.normal.0.{TENANT}", b"work", timeout=5)
    payloads = PayloadStore(js, settings.payload_bucket)
    await payloads.put(str(job_id), b"x" * 300_000)
    rate = await gateway.nc.jetstream(timeout=5).create_key_value(bucket=settings.stream_name("rate"))
    await rate.put(TENANT, b"window")
    pace = await sender.nc.jetstream(timeout=5).create_key_value(bucket=settings.stream_name("target_pace"))
    await pace.put(str(target_id), b"next")

    counts, failed = await erase_tenant(ledger.nc, settings, payloads, uuid.UUID(TENANT), [job_id], [target_id])
    assert failed == [] and ledger.refusals == []
    assert counts["work_messages"] == counts["rate_limit_state"] == counts["pacing_state"] == 1
    assert counts["payload_objects"] == 1 and counts["intake_messages"] == 0  # no intake stream here
    assert await payloads.names() == set()


async def test_only_the_ledger_publishes_herald_events_to_tenants(as_user: object) -> None:
    """Herald's own events to tenants (herald_ledger.operational) go on a subject of their own,
    which the ledger may publish and a backend (the intake user) may not."""
    ledger: Watched = await as_user("ledger")  # type: ignore[operator]
    subject = f"{PREFIX}.intake.operational.{TENANT}"
    assert not await ledger.refused("pub", subject)
    assert not await ledger.refused("pub", f"{PREFIX}.work.webhook.normal.0.{TENANT}")
    backend: Watched = await as_user(INTAKE_USER)  # type: ignore[operator]
    assert await backend.refused("pub", subject)
