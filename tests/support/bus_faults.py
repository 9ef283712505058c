"""Ways the bus loses work, for the tests that check the ledger brings it back: the work stream
purged, deleted and created again empty, or its messages expired by a `max_age` lowered for a
moment; and a sender paused (SIGSTOP) so jobs wait on the bus while it happens."""

from __future__ import annotations

import asyncio
import signal
import subprocess
import time
import warnings
from collections.abc import Iterator
from contextlib import contextmanager

import nats

from herald.config import nats_servers

LOSSES = ("purge", "delete-and-recreate", "max_age expiry")


def work_stream(bus_prefix: str) -> str:
    return f"{bus_prefix}_work".upper().replace(".", "_").replace("-", "_")


def lose_work(nats_url: str, bus_prefix: str, how: str) -> int:
    """Makes the work stream lose every message it holds, `how` (one of LOSSES); how many it held."""

    async def run() -> int:
        nc = await nats.connect(nats_servers(nats_url))
        try:
            js = nc.jetstream()
            name = work_stream(bus_prefix)
            info = await js.stream_info(name)
            held = info.state.messages
            if how == "purge":
                await js.purge_stream(name)
            elif how == "delete-and-recreate":
                await js.delete_stream(name)
                await js.add_stream(info.config)
            elif how == "max_age expiry":
                kept = info.config.max_age, info.config.duplicate_window
                info.config.max_age = info.config.duplicate_window = 1.0  # the window may not outlast the age
                await js.update_stream(info.config)
                # Every message held is gone once the stream's first sequence is past the last one
                # held. Messages may be there then: jobs the ledger's reconciler republished since (the
                # shorter window no longer takes them for duplicates), which are the work coming back.
                last_held = info.state.last_seq
                deadline = time.monotonic() + 30
                while (first := (await js.stream_info(name)).state.first_seq) <= last_held:
                    if time.monotonic() > deadline:
                        # Under a loaded machine the server's expiry has once left them past 30 s
                        # (a clean-clone CI run); what the ledger must outlast is their loss, so
                        # what the expiry has not taken yet goes the way a purge takes it (a warning
                        # in the suite's summary says so).
                        warnings.warn(f"{how}: messages {first}..{last_held} not expired in 30 s, purged", stacklevel=1)
                        await js.purge_stream(name, seq=last_held + 1)
                        first = (await js.stream_info(name)).state.first_seq
                        break
                    await asyncio.sleep(0.2)
                info.config.max_age, info.config.duplicate_window = kept
                await js.update_stream(info.config)
                assert first > last_held, f"{how}: messages held before the change are left"
                return int(held)
            else:
                raise ValueError(how)
            assert (await js.stream_info(name)).state.messages == 0, f"{how}: messages left"
            return int(held)
        finally:
            await nc.close()

    return asyncio.run(run())


@contextmanager
def paused(process: subprocess.Popen[bytes] | None) -> Iterator[None]:
    """The process takes nothing while the block runs (SIGSTOP, then SIGCONT)."""
    assert process is not None
    process.send_signal(signal.SIGSTOP)
    try:
        yield
    finally:
        process.send_signal(signal.SIGCONT)
