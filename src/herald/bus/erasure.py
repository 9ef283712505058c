"""A tenant's messages and state on the bus, removed for its erasure (the ledger's EraseTenant,
after the tenant's rows are gone).

Every subject that carries a tenant's messages ends with its id (herald.bus.subjects), so each
stream is purged by subject, whatever the message's state (waiting, or delivered to a consumer
and not yet acknowledged): its work, its dead letters, its verified inbound events, its intake
events. Its rate-limit window (the gateways' KV bucket, keyed by tenant id) and its targets'
pacing state (the webhook-senders' bucket, keyed by target id) are purged the same way (a KV
delete would leave a marker naming the key). The large bodies of its unfinished jobs leave the
payload store, meta entry included.

Each purge answers how many messages it removed; a stream or bucket that does not exist (a
deployment that never used it) counts 0. A failure is raised: the caller reports it, and the
erasure, run again, is 404 (the rows are gone) — so the caller tries each part, then says what
it could not remove.
"""

from __future__ import annotations

import base64
import logging
import uuid
from collections.abc import Sequence

import orjson
from nats.aio.client import Client

from herald.bus.payloads import PayloadStore
from herald.config import Settings

log = logging.getLogger("herald.bus.erasure")

API_TIMEOUT_S = 10.0
# JetStream's "stream not found" error code.
_NO_STREAM = 10059


async def purge(nc: Client, stream: str, subject: str, below: int | None = None) -> int:
    """Removes every message of `stream` on `subject` (wildcards allowed), or only those of a
    sequence under `below` (herald.bus.acknowledged); how many went."""
    request: dict[str, object] = {"filter": subject} if below is None else {"filter": subject, "seq": below}
    reply = await nc.request(f"$JS.API.STREAM.PURGE.{stream}", orjson.dumps(request), timeout=API_TIMEOUT_S)
    answer = orjson.loads(reply.data)
    error = answer.get("error")
    if error:
        if error.get("err_code") == _NO_STREAM:
            return 0
        raise RuntimeError(f"purge of {stream} refused: {error.get('description', error)}")
    return int(answer.get("purged", 0))


def _tenant_streams(settings: Settings, tenant_id: str) -> dict[str, tuple[str, str]]:
    """kind -> (stream, subject filter) of the tenant's messages."""
    prefix = settings.bus_prefix
    rate = settings.stream_name("rate")
    return {
        "work_messages": (settings.stream_name("work"), f"{prefix}.work.*.*.*.{tenant_id}"),
        "dead_letter_messages": (settings.stream_name("dlq"), f"{prefix}.dlq.*.{tenant_id}"),
        "inbound_messages": (settings.stream_name("inbound"), f"{prefix}.inbound.*.{tenant_id}"),
        "intake_messages": (settings.stream_name("intake"), f"{prefix}.intake.events.{tenant_id}"),
        "rate_limit_state": (f"KV_{rate}", f"$KV.{rate}.{tenant_id}"),
    }


async def _erase_payloads(nc: Client, payloads: PayloadStore, job_ids: Sequence[uuid.UUID]) -> int:
    """The large bodies of these jobs: each one's chunks, then its meta entry (which names it)."""
    bucket = payloads.bucket
    stored = await payloads.names()
    erased = 0
    for name in (str(job_id) for job_id in job_ids):
        if name not in stored:
            continue
        await payloads.delete(name)
        meta = base64.urlsafe_b64encode(name.encode()).decode()
        await purge(nc, f"OBJ_{bucket}", f"$O.{bucket}.M.{meta}")
        erased += 1
    return erased


async def erase_tenant(
    nc: Client,
    settings: Settings,
    payloads: PayloadStore | None,
    tenant_id: uuid.UUID,
    unfinished_job_ids: Sequence[uuid.UUID],
    target_ids: Sequence[uuid.UUID],
) -> tuple[dict[str, int], list[str]]:
    """Removes what the bus holds of the tenant; (count per kind, the kinds it could not remove)."""
    counts: dict[str, int] = {}
    failed: list[str] = []
    for kind, (stream, subject) in _tenant_streams(settings, str(tenant_id)).items():
        try:
            counts[kind] = await purge(nc, stream, subject)
        except Exception as error:
            log.error("tenant erasure: bus state not removed", extra={"kind": kind, "error": repr(error)})
            failed.append(kind)
    pace = settings.stream_name("target_pace")
    counts["pacing_state"] = 0
    for target_id in target_ids:
        try:
            counts["pacing_state"] += await purge(nc, f"KV_{pace}", f"$KV.{pace}.{target_id}")
        except Exception as error:
            log.error("tenant erasure: pacing state not removed", extra={"error": repr(error)})
            failed.append("pacing_state")
            break
    counts["payload_objects"] = 0
    if payloads is not None and unfinished_job_ids:
        try:
            counts["payload_objects"] = await _erase_payloads(nc, payloads, unfinished_job_ids)
        except Exception as error:
            log.error("tenant erasure: large payloads not removed", extra={"error": repr(error)})
            failed.append("payload_objects")
    return counts, failed
