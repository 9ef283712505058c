"""The work stream persists asynchronously, every other stream as the server syncs: on `herald
up`'s nats-server (`sync_interval: always`) a work message is answered before its write reaches
the disk, since the ledger holds every job it carries and its reconciler publishes again what a
crash takes back; the intake, dead letters and provider events stay synced. An operator can ask
for the work stream synced too, a replicated one always is, and a work stream made with the other
mode is kept as it is (JetStream cannot change it) without stopping the service."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import nats
import pytest
from nats.js import JetStreamContext
from nats.js.api import PersistMode

from herald.bus.streams import ensure_streams, stream_configs, topology, work_stream_config
from herald.cli.embedded import EmbeddedNats
from herald.config import Settings


@pytest.fixture
async def js(tmp_path: Path) -> AsyncIterator[JetStreamContext]:
    server = EmbeddedNats(tmp_path / "nats", extra_args=["-m", "-1"])
    url = server.start()
    connection = await nats.connect(url)
    try:
        yield connection.jetstream()
    finally:
        await connection.close()
        server.stop()


async def modes(js: JetStreamContext, settings: Settings) -> dict[str, PersistMode]:
    return {
        c.name or "": PersistMode((await js.stream_info(c.name or "")).config.persist_mode or PersistMode.DEFAULT)
        for c in stream_configs(settings)
    }


async def test_the_work_stream_alone_answers_before_the_disk(js: JetStreamContext) -> None:
    settings = Settings(bus_prefix="async")
    await ensure_streams(js, settings)
    found = await modes(js, settings)
    work = topology(settings).work_stream
    assert found.pop(work) == PersistMode.ASYNC
    assert set(found.values()) == {PersistMode.DEFAULT}
    await ensure_streams(js, settings)  # a restart finds it as it is


async def test_an_operator_can_have_it_synced_and_a_replicated_one_is(js: JetStreamContext) -> None:
    synced = Settings(bus_prefix="synced", work_stream_persist="strong")
    await ensure_streams(js, synced)
    assert set((await modes(js, synced)).values()) == {PersistMode.DEFAULT}
    assert work_stream_config(Settings(stream_replicas=3)).persist_mode is None


async def test_a_work_stream_of_the_other_mode_is_kept_and_the_service_starts(js: JetStreamContext) -> None:
    settings = Settings(bus_prefix="kept")
    made_synced = work_stream_config(Settings(bus_prefix="kept", work_stream_persist="strong"))
    await js.add_stream(made_synced)
    await ensure_streams(js, settings)  # no error: JetStream would refuse the change
    assert (await js.stream_info(made_synced.name or "")).config.persist_mode in (None, PersistMode.DEFAULT)

    async_one = Settings(bus_prefix="kept-async")
    await js.add_stream(work_stream_config(async_one))
    await ensure_streams(js, Settings(bus_prefix="kept-async", work_stream_persist="strong"))
    info = await js.stream_info(topology(async_one).work_stream)
    assert info.config.persist_mode == PersistMode.ASYNC
